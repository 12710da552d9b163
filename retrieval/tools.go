package retrieval

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/store"
)

// maxToolTopK bounds the top_k a model may ask of a search tool.
const maxToolTopK = 20

type searchArgs struct {
	Query string `json:"query" jsonschema:"what to look for, in plain words"`
	TopK  int    `json:"top_k,omitempty" jsonschema:"how many results, 1 to 20 (default 5)"`
}

type insightArgs struct {
	Query       string `json:"query" jsonschema:"what to look for, in plain words"`
	InsightType string `json:"insight_type,omitempty" jsonschema:"session (facts from one session) or long_term (the profile); empty for both"`
	TopK        int    `json:"top_k,omitempty" jsonschema:"how many results, 1 to 20 (default 5)"`
}

// SearchTools returns the mini-agent's three search tools, bound to
// userID: the model chooses what to search, never whose memory.
func (r *Retriever) SearchTools(userID string) []agent.Tool {
	search := func(kind store.Kind) func(context.Context, searchArgs) (string, error) {
		return func(ctx context.Context, a searchArgs) (string, error) {
			return r.toolSearch(ctx, userID, a.Query, a.TopK, SearchOptions{Kinds: []store.Kind{kind}})
		}
	}
	return []agent.Tool{
		agent.MustFuncTool("search_insights",
			"Search facts and preferences extracted from the user's past sessions, and the user's long-term profile.",
			func(ctx context.Context, a insightArgs) (string, error) {
				t := store.InsightType(a.InsightType)
				if t != "" && t != store.InsightSession && t != store.InsightLongTerm {
					return "", fmt.Errorf("insight_type %q: want session, long_term or empty", a.InsightType)
				}
				return r.toolSearch(ctx, userID, a.Query, a.TopK, SearchOptions{Kinds: []store.Kind{store.KindInsight}, InsightType: t})
			}),
		agent.MustFuncTool("search_interactions",
			"Search the stored conversation with the user, in chunks of consecutive messages, for details, figures and decisions.",
			search(store.KindInteraction)),
		agent.MustFuncTool("search_session_summaries",
			"Search the summaries of the user's past sessions, to see when something was discussed and how it developed.",
			search(store.KindSessionSummary)),
	}
}

func (r *Retriever) toolSearch(ctx context.Context, userID, query string, topK int, opts SearchOptions) (string, error) {
	if strings.TrimSpace(query) == "" {
		return "", fmt.Errorf("query is empty")
	}
	if topK < 0 || topK > maxToolTopK {
		return "", fmt.Errorf("top_k %d: want 1 to %d", topK, maxToolTopK)
	}
	opts.TopK = topK
	ms, err := r.Search(ctx, userID, query, opts)
	if err != nil {
		r.cfg.Logger.WarnContext(ctx, "memory: search tool failed", "user", userID, "err", err)
		return fenced(NoMemoryAvailable), nil
	}
	return fenced(Format(ms)), nil
}
