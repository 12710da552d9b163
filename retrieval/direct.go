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

// Search is direct mode: no model, one query embedding, and the store's
// hybrid search (vector legs thresholded at Config.MinSimilarity, BM25 full
// text over the query's words without stopwords) per kind.
//
//   - Interactions, the conversation itself with its dates and turn ids,
//     are re-ranked by score rather than rank (see rank.go): BM25, vector
//     similarity, the share of the query's terms a document holds, and the
//     period a date in the query names.
//   - Insights (distilled facts about the user) keep the store's order and
//     are fused with the interactions by Reciprocal Rank Fusion. Unless
//     opts.Kinds or opts.InsightType asks for it, the long-term profile is
//     left out: every session's initialization block shows it already.
//   - Session summaries fill the places left, after interactions and
//     insights, unless they are the only kind asked for. A summary is the
//     least specific document (and the recent ones are in every session's
//     context already); it holds no turn ids, and on LoCoMo fusing them as
//     equals cost a tenth of the questions their evidence. They are searched
//     only when needed.
//
// It returns at most TopK memories of userID, best first.
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
	want := map[store.Kind]bool{}
	for _, k := range kinds {
		if !k.Valid() {
			return nil, fmt.Errorf("retrieval: unknown kind %q: %w", k, store.ErrInvalid)
		}
		want[k] = true
	}
	vec, err := embed.One(ctx, r.cfg.Embedder, query)
	if err != nil {
		return nil, fmt.Errorf("retrieval: embed query: %w", err)
	}
	req := store.SearchRequest{Text: rankQueryText(query), Vector: vec, TopK: max(r.cfg.Candidates, topK), MinSimilarity: r.minSim(), SessionID: opts.SessionID}

	var lists [][]Memory
	if want[store.KindInteraction] {
		ms, err := r.searchInteractions(ctx, userID, query, req)
		if err != nil {
			return nil, err
		}
		lists = append(lists, ms)
	}
	if want[store.KindInsight] {
		q := req
		q.InsightType = opts.InsightType
		if q.InsightType == "" && len(opts.Kinds) == 0 {
			// A search of everything leaves the long-term profile out: it
			// is in every session's initialization block already.
			q.InsightType = store.InsightSession
		}
		hits, err := r.st.SearchInsights(ctx, userID, q)
		if err != nil {
			return nil, fmt.Errorf("retrieval: search insights: %w", err)
		}
		var ms []Memory
		for _, h := range hits {
			d := h.Doc
			m := Memory{Kind: store.KindInsight, ID: d.ID, Time: d.CreatedAt, Text: d.InsightText, Score: h.Score}
			if len(d.SessionIDs) > 0 {
				m.SessionID = d.SessionIDs[0]
			}
			ms = append(ms, m)
		}
		lists = append(lists, ms)
	}
	out := fuse(lists, topK)
	if want[store.KindSessionSummary] && len(out) < topK {
		hits, err := r.st.SearchSessions(ctx, userID, req)
		if err != nil {
			return nil, fmt.Errorf("retrieval: search session summaries: %w", err)
		}
		for _, h := range hits {
			d := h.Doc
			if d.Summary == "" {
				continue
			}
			out = append(out, Memory{Kind: store.KindSessionSummary, ID: d.ID, SessionID: d.ID, Time: d.StartTime, Text: d.Summary, Score: h.Score})
			if len(out) == topK {
				break
			}
		}
	}
	return out, nil
}

// searchInteractions returns the user's interactions for query, ranked by
// rankScore.
func (r *Retriever) searchInteractions(ctx context.Context, userID, query string, req store.SearchRequest) ([]Memory, error) {
	hits, err := r.st.SearchInteractions(ctx, userID, req)
	if err != nil {
		return nil, fmt.Errorf("retrieval: search interactions: %w", err)
	}
	byID := make(map[string]*rankCandidate, len(hits))
	cands := make([]*rankCandidate, 0, len(hits))
	add := func(h store.Hit[*store.Interaction]) *rankCandidate {
		c := byID[h.Doc.ID]
		if c == nil {
			c = &rankCandidate{doc: h.Doc, text: h.TextScore, similarity: h.Similarity}
			byID[h.Doc.ID] = c
			cands = append(cands, c)
		}
		return c
	}
	for _, h := range hits {
		add(h)
	}
	if since, until, ok := rankDateWindow(query); ok {
		q := req
		q.Since, q.Until = since, until
		dated, err := r.st.SearchInteractions(ctx, userID, q)
		if err != nil {
			return nil, fmt.Errorf("retrieval: search interactions of %s to %s: %w", since.Format("2006-01-02"), until.Format("2006-01-02"), err)
		}
		for _, h := range dated {
			add(h).inWindow = true
		}
	}
	rankScore(query, cands)
	ms := make([]Memory, len(cands))
	for i, c := range cands {
		d := c.doc
		ms[i] = Memory{Kind: store.KindInteraction, ID: d.ID, SessionID: d.SessionID, Time: d.Timestamp, Text: d.Content, Summary: d.Summary, TurnIDs: d.TurnIDs, Score: c.score}
	}
	return ms, nil
}

// fuse merges ranked lists of memories with Reciprocal Rank Fusion into at
// most topK; a single non-empty list keeps its order and scores.
func fuse(lists [][]Memory, topK int) []Memory {
	var nonEmpty [][]Memory
	for _, l := range lists {
		if len(l) > 0 {
			nonEmpty = append(nonEmpty, l)
		}
	}
	switch len(nonEmpty) {
	case 0:
		return nil
	case 1:
		return nonEmpty[0][:min(topK, len(nonEmpty[0]))]
	}
	byKey := make(map[string]Memory)
	ids := make([][]string, len(nonEmpty))
	for i, l := range nonEmpty {
		for _, m := range l {
			byKey[key(m)] = m
			ids[i] = append(ids[i], key(m))
		}
	}
	var out []Memory
	for _, f := range store.FuseRRF(store.RRFK, ids...) {
		m := byKey[f.ID]
		m.Score = f.Score
		out = append(out, m)
		if len(out) == topK {
			break
		}
	}
	return out
}

// key distinguishes documents of different kinds that share an id.
func key(m Memory) string { return string(m.Kind) + "/" + m.ID }
