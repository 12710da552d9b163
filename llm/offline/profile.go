package offline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/lexis"
	"github.com/agentmemory/agentmemory/prompts"
)

func handleProfileSynthesis(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	blocks, err := dataBlocks(req, prompts.BlockProfile, prompts.BlockNewInsights)
	if err != nil {
		return nil, err
	}
	profile := synthesizeProfile(blocks[prompts.BlockProfile], parseInsightLines(blocks[prompts.BlockNewInsights]), prompts.ProfileWords)
	if !strings.ContainsFunc(profile, lexis.IsWordRune) {
		return nil, fmt.Errorf("no profile text: neither the <%s> nor the <%s> block has a word", prompts.BlockProfile, prompts.BlockNewInsights)
	}
	return &agent.ChatResponse{
		Message:      agent.AssistantText(profile),
		Usage:        usage(req, countWords(profile)),
		FinishReason: "stop",
		Model:        ModelName,
	}, nil
}

// piece is one sentence of a profile being composed.
type piece struct {
	text     string
	category string
	stems    []string
	old      bool // from the current profile
	line     insightLine
	dropped  bool
}

// synthesizeProfile applies the profile_synthesis rules.
func synthesizeProfile(profile string, lines []insightLine, budget int) string {
	// The newest insight first: it wins over the older ones it overlaps.
	news := make([]*piece, 0, len(lines))
	for _, l := range lines {
		news = append(news, &piece{text: sentenceEnd(l.text), category: l.category, stems: contentStems(l.text), line: l})
	}
	slices.SortStableFunc(news, func(a, b *piece) int { return newer(a.line, b.line) })
	var kept []*piece
	for _, p := range news {
		if !slices.ContainsFunc(kept, func(k *piece) bool { return sameStatement(k, p) }) {
			kept = append(kept, p)
		}
	}
	// The current profile, its sentences classified by the same rules.
	rules := []catRule{}
	for _, name := range profileOrder {
		rules = append(rules, ruleFor(name, "", 0))
	}
	for _, p := range kept {
		if p.category != "" && !slices.ContainsFunc(rules, func(r catRule) bool { return r.name == p.category }) {
			rules = append(rules, ruleFor(p.category, "", len(rules)))
		}
	}
	var olds []*piece
	for _, s := range textSentences(profile) {
		s = prompts.CleanText(s)
		cat, _ := classify(s, rules)
		olds = append(olds, &piece{text: s, category: cat, stems: contentStems(s), old: true})
	}
	var fresh []*piece
	for _, p := range kept {
		if slices.ContainsFunc(olds, func(o *piece) bool {
			return strings.EqualFold(o.text, p.text) || (len(o.stems) > 0 && jaccard(o.stems, p.stems) == 1)
		}) {
			continue // the profile says it already
		}
		for _, o := range olds {
			if o.category == "" || o.category == p.category {
				o.dropped = o.dropped || heavyOverlap(o.stems, p.stems)
			}
		}
		fresh = append(fresh, p)
	}
	olds = slices.DeleteFunc(olds, func(o *piece) bool { return o.dropped })

	// Within the budget: the current profile gives way from its end, then
	// the oldest insights.
	words := 0
	for _, p := range append(slices.Clone(olds), fresh...) {
		words += countWords(p.text)
	}
	for words > budget && len(olds)+len(fresh) > 1 {
		if len(olds) > 0 {
			words -= countWords(olds[len(olds)-1].text)
			olds = olds[:len(olds)-1]
			continue
		}
		oldest := len(fresh) - 1 // fresh is newest first
		words -= countWords(fresh[oldest].text)
		fresh = fresh[:oldest]
	}
	slices.Reverse(fresh) // oldest first within a category

	var parts []string
	for _, group := range groupOrder(olds, fresh) {
		for _, p := range append(slices.Clone(olds), fresh...) {
			if p.category == group {
				parts = append(parts, p.text)
			}
		}
	}
	return truncateRunes(capWords(strings.Join(parts, " "), budget), prompts.MaxProfileRunes)
}

// newer orders insight lines: negative when a is newer than b (later date,
// then more confident, then later in the block).
func newer(a, b insightLine) int {
	switch {
	case !a.date.Equal(b.date):
		return b.date.Compare(a.date)
	case a.conf != b.conf:
		if a.conf > b.conf {
			return -1
		}
		return 1
	}
	return b.index - a.index
}

// sameStatement reports whether insight p says what k says, or its older
// version: the same category and heavily overlapping words.
func sameStatement(k, p *piece) bool {
	if !strings.EqualFold(k.category, p.category) {
		return false
	}
	return strings.EqualFold(k.text, p.text) || heavyOverlap(k.stems, p.stems)
}

// groupOrder lists the categories of the pieces in profile order: the
// default categories, the others by name, the uncategorised last.
func groupOrder(lists ...[]*piece) []string {
	var others []string
	uncategorised := false
	for _, l := range lists {
		for _, p := range l {
			switch {
			case p.category == "":
				uncategorised = true
			case !slices.Contains(profileOrder, p.category) && !slices.Contains(others, p.category):
				others = append(others, p.category)
			}
		}
	}
	slices.Sort(others)
	out := append(slices.Clone(profileOrder), others...)
	if uncategorised {
		out = append(out, "")
	}
	return out
}
