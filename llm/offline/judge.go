package offline

import (
	"context"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/lexis"
	"github.com/agentmemory/agentmemory/prompts"
)

// handleAnswerJudge grades by words: the response is CORRECT when it holds
// every content term of the reference answer (stemmed, stopwords dropped),
// or, for a reference without content terms, when it contains the
// reference's words in order. A rule cannot tell meaning: a paraphrase is
// WRONG and a response that lists the right words in a wrong claim is
// CORRECT.
func handleAnswerJudge(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	blocks, err := dataBlocks(req, prompts.BlockGoldAnswer, prompts.BlockResponse)
	if err != nil {
		return nil, err
	}
	gold, resp := blocks[prompts.BlockGoldAnswer], blocks[prompts.BlockResponse]
	label, reason := prompts.LabelWrong, "The response lacks words of the reference answer."
	if terms := lexis.Terms(gold); len(terms) > 0 {
		have := lexis.NewTermSet(resp)
		missing := 0
		for _, t := range terms {
			if _, ok := have[t]; !ok {
				missing++
			}
		}
		if missing == 0 {
			label, reason = prompts.LabelCorrect, "The response holds every content word of the reference answer."
		}
	} else if g := strings.Join(lexis.Words(gold), " "); g != "" && strings.Contains(" "+strings.Join(lexis.Words(resp), " ")+" ", " "+g+" ") {
		label, reason = prompts.LabelCorrect, "The response contains the reference answer."
	}
	return jsonResponse(req, map[string]string{"reasoning": reason, "label": label})
}
