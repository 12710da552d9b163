package offline

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/lexis"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
)

// reflectionInsight is one insight of the session_reflection answer.
type reflectionInsight struct {
	Category   string  `json:"category"`
	Text       string  `json:"insight_text"`
	Confidence float64 `json:"confidence"`
	Importance string  `json:"importance"`
}

type reflectionAnswer struct {
	Flag     string              `json:"reflection_flag"`
	Insights []reflectionInsight `json:"insights"`
}

func handleSessionReflection(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	blocks, err := dataBlocks(req, prompts.BlockSessions, prompts.BlockCategories)
	if err != nil {
		return nil, err
	}
	return jsonResponse(req, reflectSessions(blocks[prompts.BlockSessions], categoryRules(blocks[prompts.BlockCategories])))
}

// secretRE matches what the prompt forbids recording: passwords, PINs,
// security answers and long numbers (account, card or id numbers: eight
// or more digits, spaces and dashes allowed between them).
var secretRE = regexp.MustCompile(`(?i)\b(?:passwords?|passcodes?|passphrases?|pins?|pin codes?|security (?:questions?|answers?)|social security numbers?|ssn|credentials?)\b|\d(?:[ -]?\d){7,}`)

// reflectSessions applies the session_reflection rules to a <sessions> block.
func reflectSessions(sessions string, rules []catRule) reflectionAnswer {
	ans := reflectionAnswer{Flag: store.FlagNoInsight, Insights: []reflectionInsight{}}
	seen := map[string]bool{}
	// Session headers and the "left out" note parse as messages of role
	// "unknown"; only the user's own messages count.
	for _, t := range prompts.ParseTurns(sessions) {
		if t.Role != "user" {
			continue
		}
		for _, s := range lexis.Sentences(t.Text) {
			s = prompts.CleanText(s)
			if !statesLastingFact(s) || secretRE.MatchString(s) {
				continue
			}
			cat, ok := classify(s, rules)
			if !ok {
				continue
			}
			s = truncateRunes(capWords(s, maxSentenceWords), maxQuoteRunes)
			text, ok := thirdPerson(s)
			if !ok {
				text = `The user said: "` + s + `"`
			}
			text = truncateRunes(text, prompts.MaxInsightRunes)
			key := strings.ToLower(text)
			if seen[key] {
				continue
			}
			seen[key] = true
			conf := confidencePlain
			if strings.ContainsFunc(s, unicode.IsDigit) || monthRE.MatchString(s) {
				conf = confidenceFigure
			}
			ans.Insights = append(ans.Insights, reflectionInsight{Category: cat, Text: text, Confidence: conf, Importance: importanceOf(cat)})
		}
	}
	// The most important first, then in the order said.
	slices.SortStableFunc(ans.Insights, func(a, b reflectionInsight) int {
		return importanceRank(a.Importance) - importanceRank(b.Importance)
	})
	if len(ans.Insights) > prompts.MaxInsights {
		ans.Insights = ans.Insights[:prompts.MaxInsights]
	}
	if len(ans.Insights) > 0 {
		ans.Flag = store.FlagInsight
	}
	return ans
}

func importanceRank(imp string) int {
	switch imp {
	case "high":
		return 0
	case "medium":
		return 1
	}
	return 2
}
