package offline

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/lexis"
	"github.com/agentmemory/agentmemory/prompts"
)

// reconcileAnswer is the reconcile answer.
type reconcileAnswer struct {
	Duplicates     []duplicateGroup `json:"duplicates"`
	Contradictions []labelGroup     `json:"contradictions"`
}

type duplicateGroup struct {
	IDs    []string `json:"ids"`
	Merged string   `json:"merged_text"`
}

type labelGroup struct {
	IDs []string `json:"ids"`
}

func handleReconcile(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	blocks, err := dataBlocks(req, prompts.BlockInsights)
	if err != nil {
		return nil, err
	}
	return jsonResponse(req, reconcile(parseInsightLines(blocks[prompts.BlockInsights])))
}

// sharedTerms are the terms every insight shares; they say nothing about
// whether two insights are the same.
var sharedTerms = lexis.Terms("user users said say says")

// reconcile applies the reconcile rules.
func reconcile(lines []insightLine) reconcileAnswer {
	ans := reconcileAnswer{Duplicates: []duplicateGroup{}, Contradictions: []labelGroup{}}
	type member struct {
		line  insightLine
		terms []string
	}
	var groups [][]member
	seen := map[string]bool{}
	for _, l := range lines {
		if l.label == "" || seen[l.label] {
			continue
		}
		seen[l.label] = true
		terms := slices.DeleteFunc(lexis.Terms(l.text), func(t string) bool { return slices.Contains(sharedTerms, t) })
		if len(terms) == 0 {
			continue
		}
		m := member{l, terms}
		joined := false
		for gi, g := range groups {
			if !strings.EqualFold(g[0].line.category, l.category) {
				continue
			}
			if !slices.ContainsFunc(g, func(o member) bool { return jaccard(o.terms, terms) < reconcileJaccard }) {
				groups[gi] = append(g, m)
				joined = true
				break
			}
		}
		if !joined {
			groups = append(groups, []member{m})
		}
	}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		var dg duplicateGroup
		best := g[0].line
		for _, m := range g {
			dg.IDs = append(dg.IDs, m.line.label)
			if n, bn := utf8.RuneCountInString(m.line.text), utf8.RuneCountInString(best.text); n > bn || (n == bn && m.line.date.After(best.date)) {
				best = m.line
			}
		}
		dg.Merged = best.text
		ans.Duplicates = append(ans.Duplicates, dg)
	}
	return ans
}
