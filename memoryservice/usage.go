package memoryservice

import (
	"github.com/agentmemory/agentmemory/usage"
)

// apiUsage reports the tokens an operation's model calls spent, as a
// usage.Meter counted them: input and output are the chat calls' prompt
// and completion tokens, embedding the embedding calls' input tokens, and
// total all three. The details are zero: agent.Usage carries no cached or
// reasoning counts.
type apiUsage struct {
	EmbeddingTokens     int                 `json:"embedding_tokens"`
	InputTokens         int                 `json:"input_tokens"`
	InputTokensDetails  inputTokensDetails  `json:"input_tokens_details"`
	OutputTokens        int                 `json:"output_tokens"`
	OutputTokensDetails outputTokensDetails `json:"output_tokens_details"`
	TotalTokens         int                 `json:"total_tokens"`
}

type inputTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type outputTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

func usageOf(m *usage.Meter) apiUsage {
	t := m.Totals()
	return apiUsage{InputTokens: t.InputTokens, OutputTokens: t.OutputTokens, EmbeddingTokens: t.EmbeddingTokens, TotalTokens: t.Total()}
}

// plus adds what b (if any) counted to u.
func (u apiUsage) plus(b *apiUsage) apiUsage {
	if b == nil {
		return u
	}
	u.EmbeddingTokens += b.EmbeddingTokens
	u.InputTokens += b.InputTokens
	u.OutputTokens += b.OutputTokens
	u.TotalTokens += b.TotalTokens
	return u
}
