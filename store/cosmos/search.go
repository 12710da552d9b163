package cosmos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

// SearchInteractions ranks the user's interactions for q.
func (s *Store) SearchInteractions(ctx context.Context, userID string, q store.SearchRequest) ([]store.Hit[*store.Interaction], error) {
	return search(ctx, s, userID, store.KindInteraction, q, interactionText, func(d *store.Interaction) string { return d.ID })
}

// SearchInsights ranks the user's active insights for q.
func (s *Store) SearchInsights(ctx context.Context, userID string, q store.SearchRequest) ([]store.Hit[*store.Insight], error) {
	return search(ctx, s, userID, store.KindInsight, q, insightText, func(d *store.Insight) string { return d.ID })
}

// SearchSessions ranks the user's session summaries for q.
func (s *Store) SearchSessions(ctx context.Context, userID string, q store.SearchRequest) ([]store.Hit[*store.Session], error) {
	return search(ctx, s, userID, store.KindSessionSummary, q, sessionText, func(d *store.Session) string { return d.ID })
}

// textProjection is what the full-text leg reads of each candidate: its id
// and the text fields it scores.
func textProjection(kind store.Kind) string {
	switch kind {
	case store.KindInteraction:
		return "c.id, c.content, c.summary, c.metadata"
	case store.KindInsight:
		return "c.id, c.insight_text"
	}
	return "c.id, c.summary, c.key_topics"
}

// search runs each leg of r as its own single-partition query — one per
// vector field, ordered by VectorDistance, and one full-text candidate
// query scored with BM25 here — concurrently, fuses them with driver.Combine
// (the exact RRF the contract specifies) and loads the winners with one
// more query.
func search[T any](ctx context.Context, s *Store, userID string, kind store.Kind, r store.SearchRequest,
	textOf func(*T) []string, idOf func(*T) string) ([]store.Hit[*T], error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	r, err := s.v.Search(kind, r)
	if err != nil {
		return nil, err
	}
	hits := []store.Hit[*T]{}
	terms := queryWords(r.Text)
	if len(terms) == 0 && len(r.Vector) == 0 {
		return hits, nil // only separators: nothing can match
	}
	depth := max(r.TopK, legDepth)

	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		legs     [][]driver.Scored
		textLeg  []driver.Scored
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
		}
	}
	if len(r.Vector) > 0 {
		legs = make([][]driver.Scored, len(r.VectorFields))
		for i, f := range r.VectorFields {
			wg.Go(func() {
				leg, err := s.vectorLeg(ctx, kind, userID, r, f, depth)
				if err != nil {
					fail(fmt.Errorf("cosmos: search %s: %s leg: %w", kind, f, err))
					return
				}
				legs[i] = leg
			})
		}
	}
	if len(terms) > 0 {
		wg.Go(func() {
			leg, err := textLegOf(ctx, s, kind, userID, r, terms, textOf, idOf, depth)
			if err != nil {
				fail(fmt.Errorf("cosmos: search %s: full-text leg: %w", kind, err))
				return
			}
			textLeg = leg
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	ranked := driver.Combine(r.TopK, legs, textLeg)
	if len(ranked) == 0 {
		return hits, nil
	}
	ids := make([]string, len(ranked))
	for i, rk := range ranked {
		ids[i] = rk.ID
	}
	q := newQuery(userID)
	q.cond("ARRAY_CONTAINS(" + q.param(ids) + ", c.id)")
	if kind == store.KindInsight {
		q.active()
	}
	docs, err := queryDocs[T](ctx, s, kind, userID, "search "+string(kind)+": load hits", "SELECT * FROM c"+q.whereClause(), q.params)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*T, len(docs))
	for _, d := range docs {
		byID[idOf(d)] = d
	}
	for _, rk := range ranked {
		d, ok := byID[rk.ID]
		if !ok {
			continue // deleted or superseded since the legs ran
		}
		hits = append(hits, store.Hit[*T]{Doc: d, Score: rk.Score, Similarity: rk.Similarity, TextScore: rk.TextScore})
	}
	return hits, nil
}

// vectorQuery returns the vector leg's SQL and parameters:
//
//	SELECT TOP @k c.id, VectorDistance(c.<field>, @v<args>) AS score FROM c
//	WHERE c.user_id = @u AND <filters> AND ARRAY_CONTAINS(c.vector_fields, @f)
//	ORDER BY VectorDistance(c.<field>, @v<args>)
//
// where <args> are cfg's (see Config.vectorDistanceArgs): ", true" for an
// exact search. The containers' distance function is cosine, so
// VectorDistance is the cosine similarity and ORDER BY puts the most
// similar first.
func vectorQuery(kind store.Kind, userID string, r store.SearchRequest, field store.VectorField, depth int, cfg Config) (string, []azcosmos.QueryParameter) {
	q := newQuery(userID)
	q.searchFilters(kind, r)
	q.cond("ARRAY_CONTAINS(c.vector_fields, " + q.param(string(field)) + ")")
	k := q.param(depth)
	v := q.param(r.Vector)
	extra := cfg.vectorDistanceArgs()
	// field is one of the store.Field* constants (validated by
	// driver.Validator.Search), never user text.
	dist := "VectorDistance(c." + string(field) + ", " + v + extra + ")"
	return "SELECT TOP " + k + " c.id, " + dist + " AS score FROM c" + q.whereClause() + " ORDER BY " + dist, q.params
}

func (s *Store) vectorLeg(ctx context.Context, kind store.Kind, userID string, r store.SearchRequest, field store.VectorField, depth int) ([]driver.Scored, error) {
	sql, params := vectorQuery(kind, userID, r, field, depth, s.cfg)
	items, err := s.query(ctx, kind, userID, sql, params)
	if err != nil {
		return nil, err
	}
	var leg []driver.Scored
	for _, b := range items {
		var row struct {
			ID    string   `json:"id"`
			Score *float64 `json:"score"`
		}
		if err := json.Unmarshal(b, &row); err != nil {
			return nil, fmt.Errorf("decode vector row: %w", err)
		}
		if row.Score == nil || math.IsNaN(*row.Score) || *row.Score < r.MinSimilarity {
			continue
		}
		leg = append(leg, driver.Scored{ID: row.ID, Score: *row.Score})
	}
	sortScored(leg)
	return leg, nil
}

func sortScored(leg []driver.Scored) {
	slices.SortStableFunc(leg, func(a, b driver.Scored) int { return bestFirst(a.Score, a.ID, b.Score, b.ID) })
}

// bestFirst orders by score, highest first, then by id, as every ranking
// in Go does (driver.Below).
func bestFirst(aScore float64, aID string, bScore float64, bID string) int {
	switch {
	case aScore > bScore:
		return -1
	case aScore < bScore:
		return 1
	}
	return compareStrings(aID, bID)
}

// textMatch returns the full-text candidate predicate for terms, each
// word a parameter: ARRAY_CONTAINS over the search_terms array, the
// document's own words, so that the candidates are exactly the documents
// that hold a query word as a whole word, whatever the service's
// full-text index makes of them (it drops stopwords and does not search
// arrays). It returns the parameter names too.
func (q *sqlQuery) textMatch(terms []string) (string, []string) {
	names := make([]string, len(terms))
	ors := make([]string, len(terms))
	for i, t := range terms {
		names[i] = q.param(t)
		ors[i] = "ARRAY_CONTAINS(c.search_terms, " + names[i] + ")"
	}
	return "(" + strings.Join(ors, " OR ") + ")", names
}

// textQueries returns the full-text leg's candidate query — at most limit
// candidates with the text fields they are scored on — and the BM25
// statistics query over the same filtered documents.
func textQueries(kind store.Kind, userID string, r store.SearchRequest, terms []string, limit int) (cand string, candParams []azcosmos.QueryParameter, stats string, statsParams []azcosmos.QueryParameter) {
	sq := newQuery(userID)
	sq.searchFilters(kind, r)
	stats = "SELECT COUNT(1) AS n, SUM(c.search_length) AS total FROM c" + sq.whereClause()

	cq := newQuery(userID)
	cq.searchFilters(kind, r)
	top := cq.param(limit)
	match, _ := cq.textMatch(terms)
	cq.cond(match)
	cand = "SELECT TOP " + top + " " + textProjection(kind) + " FROM c" + cq.whereClause()
	return cand, cq.params, stats, sq.params
}

// textScanQuery returns the query that lists at most limit candidates
// without their text: each one's id, length and, per query word, whether
// it holds it.
//
//	SELECT TOP @n c.id, c.search_length, [ARRAY_CONTAINS(c.search_terms, @w1), ...] AS has
//	FROM c WHERE <filters> AND (ARRAY_CONTAINS(c.search_terms, @w1) OR ...)
func textScanQuery(kind store.Kind, userID string, r store.SearchRequest, terms []string, limit int) (string, []azcosmos.QueryParameter) {
	q := newQuery(userID)
	q.searchFilters(kind, r)
	top := q.param(limit)
	match, names := q.textMatch(terms)
	q.cond(match)
	has := make([]string, len(names))
	for i, n := range names {
		has[i] = "ARRAY_CONTAINS(c.search_terms, " + n + ")"
	}
	return "SELECT TOP " + top + " c.id, c.search_length, [" + strings.Join(has, ", ") + "] AS has FROM c" + q.whereClause(), q.params
}

// textLoadQuery returns the query that reads the text fields of the
// candidates ids that still pass r's filters.
func textLoadQuery(kind store.Kind, userID string, r store.SearchRequest, ids []string) (string, []azcosmos.QueryParameter) {
	q := newQuery(userID)
	q.searchFilters(kind, r)
	q.cond("ARRAY_CONTAINS(" + q.param(ids) + ", c.id)")
	return "SELECT " + textProjection(kind) + " FROM c" + q.whereClause(), q.params
}

// textScanFactor bounds the candidates a scan lists: textScanFactor times
// Config.MaxTextCandidates.
const textScanFactor = 10

// textLegOf ranks r's full-text candidates by BM25 over their words, with
// the document count and average length of the documents passing r's
// filters, and returns the best depth of them.
//
// The candidates are the documents holding a query word (textMatch). At
// most Config.MaxTextCandidates of them are read and scored, and when
// more match, those read are the best: one query reads the candidates'
// text, up to one more than the cap; only if that one more came back does
// a scan list the candidates without their text (bestCandidates), rank
// them by the score each would have if it held each of its query words
// once, and the best MaxTextCandidates are read.
func textLegOf[T any](ctx context.Context, s *Store, kind store.Kind, userID string, r store.SearchRequest, terms []string,
	textOf func(*T) []string, idOf func(*T) string, depth int) ([]driver.Scored, error) {
	var (
		n, total float64
		statsErr error
		wg       sync.WaitGroup
	)
	limit := s.cfg.MaxTextCandidates
	candSQL, candParams, statsSQL, statsParams := textQueries(kind, userID, r, terms, limit+1)
	wg.Go(func() {
		items, err := s.query(ctx, kind, userID, statsSQL, statsParams)
		if err != nil {
			statsErr = err
			return
		}
		for _, b := range items {
			var row struct {
				N     float64 `json:"n"`
				Total float64 `json:"total"`
			}
			if err := json.Unmarshal(b, &row); err != nil {
				statsErr = fmt.Errorf("decode statistics: %w", err)
				return
			}
			n += row.N
			total += row.Total
		}
	})
	items, err := s.query(ctx, kind, userID, candSQL, candParams)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if statsErr != nil {
		return nil, statsErr
	}
	docs := make([]*T, 0, len(items))
	for _, b := range items {
		d, err := decode[T](b)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}

	// df is each term's document count over the candidates: over those
	// read when all were, else over the scan's list.
	var df map[string]int
	if len(docs) > limit {
		var listed int
		if docs, df, listed, err = bestCandidates(ctx, s, kind, userID, r, terms, docs, idOf, n, total); err != nil {
			return nil, err
		}
		n = max(n, float64(listed))
	}

	type cand struct {
		id     string
		tf     map[string]int
		length int
	}
	cands := make([]cand, 0, len(docs))
	counted := df == nil
	if counted {
		df = make(map[string]int, len(terms))
	}
	candTotal := 0
	for _, d := range docs {
		c := cand{id: idOf(d), tf: make(map[string]int)}
		for _, text := range textOf(d) {
			for _, w := range words(text) {
				c.length++
				if slices.Contains(terms, w) {
					c.tf[w]++
				}
			}
		}
		if len(c.tf) == 0 {
			continue // changed since it matched
		}
		if counted {
			for t := range c.tf {
				df[t]++
			}
		}
		candTotal += c.length
		cands = append(cands, c)
	}
	// The statistics query and the candidates may see different writes;
	// keep the corpus at least as large as what was scored.
	if n < float64(len(cands)) {
		n, total = float64(len(cands)), float64(candTotal)
	}
	avg := 1.0
	if n > 0 && total > 0 {
		avg = total / n
	}
	leg := make([]driver.Scored, 0, len(cands))
	for _, c := range cands {
		if score := driver.BM25(c.tf, c.length, df, n, avg); score > 0 {
			leg = append(leg, driver.Scored{ID: c.id, Score: score})
		}
	}
	sortScored(leg)
	if len(leg) > depth {
		leg = leg[:depth]
	}
	return leg, nil
}

// scanned is one candidate of a scan: its id, length and which query
// words it holds.
type scanned struct {
	ID     string `json:"id"`
	Length int    `json:"search_length"`
	Has    []bool `json:"has"`
	// bound is its BM25 if it held each of those words once: a lower
	// bound of its score.
	bound float64
}

// bestCandidates lists the candidates of r without their text (at most
// textScanFactor times the cap), ranks them by the BM25 each would have
// if it held each of its query words once — a lower bound of its score,
// with exact document counts, lengths and corpus statistics; ties by id —
// and returns the best MaxTextCandidates with their text, reusing those of
// read and reading the others, each term's document count over the list,
// and the list's length.
func bestCandidates[T any](ctx context.Context, s *Store, kind store.Kind, userID string, r store.SearchRequest, terms []string,
	read []*T, idOf func(*T) string, n, total float64) (best []*T, df map[string]int, listed int, err error) {
	limit := s.cfg.MaxTextCandidates
	sql, params := textScanQuery(kind, userID, r, terms, textScanFactor*limit)
	items, err := s.query(ctx, kind, userID, sql, params)
	if err != nil {
		return nil, nil, 0, err
	}
	rows := make([]scanned, 0, len(items))
	df = make(map[string]int, len(terms))
	for _, b := range items {
		var row scanned
		if err := json.Unmarshal(b, &row); err != nil {
			return nil, nil, 0, fmt.Errorf("decode candidate: %w", err)
		}
		if len(row.Has) != len(terms) {
			return nil, nil, 0, fmt.Errorf("decode candidate %s: %d word flags for %d words", row.ID, len(row.Has), len(terms))
		}
		for i, has := range row.Has {
			if has {
				df[terms[i]]++
			}
		}
		rows = append(rows, row)
	}
	listed = len(rows)
	n = max(n, float64(listed))
	avg := 1.0
	if n > 0 && total > 0 {
		avg = total / n
	}
	for i := range rows {
		tf := make(map[string]int, len(terms))
		for j, has := range rows[i].Has {
			if has {
				tf[terms[j]] = 1
			}
		}
		rows[i].bound = driver.BM25(tf, max(rows[i].Length, len(tf)), df, n, avg)
	}
	slices.SortFunc(rows, func(a, b scanned) int { return bestFirst(a.bound, a.ID, b.bound, b.ID) })
	if len(rows) > limit {
		rows = rows[:limit]
	}

	byID := make(map[string]*T, len(read))
	for _, d := range read {
		byID[idOf(d)] = d
	}
	var missing []string
	for _, row := range rows {
		if _, ok := byID[row.ID]; !ok {
			missing = append(missing, row.ID)
		}
	}
	if len(missing) > 0 {
		sql, params := textLoadQuery(kind, userID, r, missing)
		items, err := s.query(ctx, kind, userID, sql, params)
		if err != nil {
			return nil, nil, 0, err
		}
		for _, b := range items {
			d, err := decode[T](b)
			if err != nil {
				return nil, nil, 0, err
			}
			byID[idOf(d)] = d
		}
	}
	best = make([]*T, 0, len(rows))
	for _, row := range rows {
		if d, ok := byID[row.ID]; ok {
			best = append(best, d)
		}
	}
	return best, df, listed, nil
}

// NativeFullText reports whether the full-text leg matches candidates
// with the service's FullTextContainsAny. It never does now.
//
// Deprecated: candidates always come from search_terms (see the package
// doc); NativeFullText is always false.
func (s *Store) NativeFullText() bool { return false }

// serviceMessage returns a short form of a service error for logs.
func serviceMessage(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		msg := re.Error()
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return msg
	}
	return err.Error()
}
