package retrieval

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/store"
)

// SearchOptions narrows a direct search.
type SearchOptions struct {
	// TopK overrides Config.TopK when positive.
	TopK int
	// Kinds limits the kinds searched; empty means all three.
	Kinds []store.Kind
	// SessionID keeps documents of one session.
	SessionID string
	// InsightType keeps insights of one type.
	InsightType store.InsightType
}

// Search is direct mode: it embeds query once, searches each kind (hybrid
// vector and full text in the store), and fuses the kinds' rankings with
// Reciprocal Rank Fusion into the TopK best memories of userID.
func (r *Retriever) Search(ctx context.Context, userID, query string, opts SearchOptions) ([]Memory, error) {
	if err := store.CheckUserID(userID); err != nil {
		return nil, fmt.Errorf("retrieval: %w", err)
	}
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, fmt.Errorf("retrieval: empty query: %w", store.ErrInvalid)
	}
	topK := r.cfg.TopK
	if opts.TopK > 0 {
		topK = opts.TopK
	}
	kinds := opts.Kinds
	if len(kinds) == 0 {
		kinds = store.Kinds
	}
	vec, err := embed.One(ctx, r.cfg.Embedder, query)
	if err != nil {
		return nil, fmt.Errorf("retrieval: embed query: %w", err)
	}
	req := store.SearchRequest{Text: query, Vector: vec, TopK: max(r.cfg.Candidates, topK), MinSimilarity: r.minSim(), SessionID: opts.SessionID}

	byID := make(map[string]Memory)
	var lists [][]string
	for _, k := range kinds {
		var list []string
		switch k {
		case store.KindInteraction:
			hits, err := r.st.SearchInteractions(ctx, userID, req)
			if err != nil {
				return nil, fmt.Errorf("retrieval: search interactions: %w", err)
			}
			for _, h := range hits {
				d := h.Doc
				m := Memory{Kind: k, ID: d.ID, SessionID: d.SessionID, Time: d.Timestamp, Text: d.Content, Summary: d.Summary, TurnIDs: d.TurnIDs}
				list = append(list, key(m))
				byID[key(m)] = m
			}
		case store.KindInsight:
			q := req
			q.InsightType = opts.InsightType
			hits, err := r.st.SearchInsights(ctx, userID, q)
			if err != nil {
				return nil, fmt.Errorf("retrieval: search insights: %w", err)
			}
			for _, h := range hits {
				d := h.Doc
				m := Memory{Kind: k, ID: d.ID, Time: d.CreatedAt, Text: d.InsightText}
				if len(d.SessionIDs) > 0 {
					m.SessionID = d.SessionIDs[0]
				}
				list = append(list, key(m))
				byID[key(m)] = m
			}
		case store.KindSessionSummary:
			hits, err := r.st.SearchSessions(ctx, userID, req)
			if err != nil {
				return nil, fmt.Errorf("retrieval: search session summaries: %w", err)
			}
			for _, h := range hits {
				d := h.Doc
				if d.Summary == "" {
					continue
				}
				m := Memory{Kind: k, ID: d.ID, SessionID: d.ID, Time: d.StartTime, Text: d.Summary}
				list = append(list, key(m))
				byID[key(m)] = m
			}
		default:
			return nil, fmt.Errorf("retrieval: unknown kind %q: %w", k, store.ErrInvalid)
		}
		lists = append(lists, list)
	}
	var out []Memory
	for _, f := range store.FuseRRF(store.RRFK, lists...) {
		m := byID[f.ID]
		m.Score = f.Score
		out = append(out, m)
		if len(out) == topK {
			break
		}
	}
	return out, nil
}

// key distinguishes documents of different kinds that share an id.
func key(m Memory) string { return string(m.Kind) + "/" + m.ID }

