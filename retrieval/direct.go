package retrieval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

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
// search per kind: BM25 full text over the query's words without
// stopwords, and vector legs unless the embedder is lexical
// (embed.IsLexical: its vectors encode only words, which the text leg
// matches already; measured on LoCoMo they added nothing at any weight).
//
// A vector match counts by its relevance, never by an absolute cosine
// (unless Config.MinSimilarity sets one): relative to the query's own
// similarities to the user's documents, rel = (s − b)/(t − b) clamped to
// [0, 1], where t is the similarity of the user's nearest document and b
// that of the Candidates-th nearest (the farthest, with fewer): 1 for the
// nearest, 0 at or below that background. It is the same number whatever
// scale the embedder's cosines live on (any increasing affine map of the
// cosines leaves it unchanged), so one setting serves text-embedding-3-small,
// whose unrelated pairs sit near 0.2, and ada-002, whose sit near 0.7.
//
//   - Interactions, the conversation itself with its dates and turn ids,
//     are gathered from the text leg and the vector leg separately (each
//     Config.Candidates deep) and re-ranked by score rather than rank (see
//     rank.go): BM25, relevance, the share of the query's terms a document
//     holds, and the period a date in the query names. A vector-only
//     candidate therefore competes on what it is worth, never displacing
//     a text match by rank alone.
//   - Insights (distilled facts about the user) keep the store's order
//     and are fused with the interactions by Reciprocal Rank Fusion; a
//     vector-only insight is kept only when its relevance is at least
//     relevanceGate. Unless opts.Kinds or opts.InsightType asks for it,
//     the long-term profile is left out: every session's initialization
//     block shows it already.
//   - Session summaries fill the places left, after interactions and
//     insights, unless they are the only kind asked for (the same gate
//     applies). A summary is the least specific document (and the recent
//     ones are in every session's context already); it holds no turn ids,
//     and on LoCoMo fusing them as equals cost a tenth of the questions
//     their evidence. They are searched only when needed.
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
	var vec []float32
	if !embed.IsLexical(r.cfg.Embedder) {
		v, err := embed.One(ctx, r.cfg.Embedder, query)
		if err != nil {
			return nil, fmt.Errorf("retrieval: embed query: %w", err)
		}
		vec = v
	}
	req := store.SearchRequest{Text: rankQueryText(query), Vector: vec, TopK: max(r.cfg.Candidates, topK), MinSimilarity: r.minSim(), SessionID: opts.SessionID}

	var lists [][]Memory
	if want[store.KindInteraction] {
		ms, err := r.searchInteractions(ctx, userID, query, req, topK)
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
		for _, h := range gate(hits) {
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
		for _, h := range gate(hits) {
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

// relevanceGate is the least relevance of a vector-only insight or session
// summary (one the text leg did not find) for it to be kept: halfway from
// the query's background to its nearest document. Not measured with a
// semantic model yet (no LoCoMo question's evidence is an insight or a
// summary); a lexical embedder has no vector leg.
const relevanceGate = 0.5

// relevance maps similarities to relevance relative to the background
// (b, the lowest) and the nearest (t, the highest) of ref:
// (s − b)/(t − b), clamped to [0, 1]; 0 for every s when t = b.
type relevance struct{ b, t float64 }

func relevanceOf(ref []float64) relevance {
	if len(ref) == 0 {
		return relevance{}
	}
	return relevance{b: slices.Min(ref), t: slices.Max(ref)}
}

func (rv relevance) of(s float64) float64 {
	if rv.t <= rv.b {
		return 0
	}
	return max(0, min(1, (s-rv.b)/(rv.t-rv.b)))
}

// gate keeps the hits the text leg found and the vector-only ones whose
// relevance, relative to the hits' own similarities, is at least
// relevanceGate. Hits keep their order.
func gate[T any](hits []store.Hit[T]) []store.Hit[T] {
	var sims []float64
	for _, h := range hits {
		if h.TextScore == 0 {
			sims = append(sims, h.Similarity)
		}
	}
	if len(sims) == 0 {
		return hits
	}
	var all []float64
	for _, h := range hits {
		if h.Similarity != 0 || h.TextScore == 0 {
			all = append(all, h.Similarity)
		}
	}
	rv := relevanceOf(all)
	out := hits[:0:0]
	for _, h := range hits {
		if h.TextScore > 0 || rv.of(h.Similarity) >= relevanceGate {
			out = append(out, h)
		}
	}
	return out
}

// searchInteractions returns the user's interactions for query, ranked by
// rankScore: the text leg's candidates and, with a query vector, the
// vector leg's, each req.TopK deep.
func (r *Retriever) searchInteractions(ctx context.Context, userID, query string, req store.SearchRequest, topK int) ([]Memory, error) {
	textReq := req
	textReq.Vector = nil
	hits, err := r.st.SearchInteractions(ctx, userID, textReq)
	if err != nil {
		return nil, fmt.Errorf("retrieval: search interactions: %w", err)
	}
	byID := make(map[string]*rankCandidate, len(hits))
	cands := make([]*rankCandidate, 0, len(hits))
	add := func(h store.Hit[*store.Interaction]) *rankCandidate {
		c := byID[h.Doc.ID]
		if c == nil {
			c = &rankCandidate{doc: h.Doc, similarity: similarity(req.Vector, h.Doc)}
			byID[h.Doc.ID] = c
			cands = append(cands, c)
		}
		c.text = max(c.text, h.TextScore)
		return c
	}
	for _, h := range hits {
		add(h)
	}
	var rv relevance
	if len(req.Vector) > 0 {
		vecReq := req
		vecReq.Text = ""
		near, err := r.st.SearchInteractions(ctx, userID, vecReq)
		if err != nil {
			return nil, fmt.Errorf("retrieval: search interactions by vector: %w", err)
		}
		ref := make([]float64, 0, len(near))
		for _, h := range near {
			ref = append(ref, add(h).similarity)
		}
		rv = relevanceOf(ref)
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
	for _, c := range cands {
		c.relevance = rv.of(c.similarity)
	}
	rankScore(query, cands)
	cands = r.followOns(ctx, userID, cands, byID, topK)
	ms := make([]Memory, len(cands))
	for i, c := range cands {
		d := c.doc
		ms[i] = Memory{Kind: store.KindInteraction, ID: d.ID, SessionID: d.SessionID, Time: d.Timestamp, Text: d.Content, Summary: d.Summary, TurnIDs: d.TurnIDs, Score: c.score}
	}
	return ms, nil
}

// followOns adds to cands, ranked, the chunk that continues each of the
// first topK in its session, at rankFollowWeight times its score, unless
// it is a candidate already (byID), and sorts them again. The chunks are
// read by id (store.ChunkID of the turn after the candidate's last), so a
// session's last chunk, and interactions stored under another id scheme
// by earlier versions, have none. A read that fails is logged and the
// ranking kept without that chunk: the follow-ons only add. A search its
// caller has given up reads and logs nothing.
func (r *Retriever) followOns(ctx context.Context, userID string, cands []*rankCandidate, byID map[string]*rankCandidate, topK int) []*rankCandidate {
	if ctx.Err() != nil {
		return cands // the caller gave the search up: nothing to add, nothing failed
	}
	lead := cands[:min(len(cands), topK)]
	next := make([]*store.Interaction, len(lead))
	var wg sync.WaitGroup
	for i, c := range lead {
		id := store.ChunkID(c.doc.SessionID, c.doc.LastTurn+1)
		if byID[id] != nil || c.doc.LastTurn <= 0 {
			continue
		}
		wg.Go(func() {
			d, err := r.st.GetInteraction(ctx, userID, id)
			switch {
			case errors.Is(err, store.ErrNotFound), err != nil && ctx.Err() != nil:
			case err != nil:
				r.cfg.Logger.WarnContext(ctx, "retrieval: read the chunk after a result", "user_id", userID, "session_id", c.doc.SessionID, "err", err)
			case d.SessionID == c.doc.SessionID && d.FirstTurn == c.doc.LastTurn+1:
				next[i] = d
			}
		})
	}
	wg.Wait()
	added := false
	for i, d := range next {
		if d == nil || byID[d.ID] != nil {
			continue
		}
		f := &rankCandidate{doc: d, score: rankFollowWeight * lead[i].score}
		byID[d.ID] = f
		cands = append(cands, f)
		added = true
	}
	if added {
		rankSort(cands)
	}
	return cands
}

// similarity is the query's best cosine with an interaction's vectors,
// computed here so that every candidate, from whichever leg, has one; 0
// without a query vector or a vector of its length.
func similarity(q []float32, d *store.Interaction) float64 {
	best, ok := 0.0, false
	for _, v := range [][]float32{d.ContentVector, d.SummaryVector} {
		if len(q) > 0 && len(v) == len(q) {
			s := float64(embed.Cosine(q, v))
			if !ok || s > best {
				best, ok = s, true
			}
		}
	}
	return best
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
