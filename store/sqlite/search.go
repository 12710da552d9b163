package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

// spec names a kind's tables and columns (constants, never user data).
type spec struct {
	kind    store.Kind
	table   string
	fts     string
	timeCol string
	// terms is the table of the kind's documents' tokens (terms.go).
	terms string
	// fields are the kind's vector fields, each stored in the column of the
	// same name; a field's index is its slot in vecRow.vecs.
	fields []store.VectorField
}

func specOf(kind store.Kind) (spec, bool) {
	switch kind {
	case store.KindInteraction:
		return spec{kind, "interactions", "interactions_fts", "ts", "interaction_terms",
			[]store.VectorField{store.FieldContentVector, store.FieldSummaryVector}}, true
	case store.KindInsight:
		return spec{kind, "insights", "insights_fts", "created_at", "insight_terms",
			[]store.VectorField{store.FieldInsightVector}}, true
	case store.KindSessionSummary:
		return spec{kind, "session_summaries", "sessions_fts", "start_time", "session_terms",
			[]store.VectorField{store.FieldSummaryVector}}, true
	}
	return spec{}, false
}

// SearchInteractions ranks the user's interactions for q.
func (s *Store) SearchInteractions(ctx context.Context, userID string, q store.SearchRequest) ([]store.Hit[*store.Interaction], error) {
	return search(ctx, s, userID, store.KindInteraction, q, func(ctx context.Context, tx txn, ids []string) ([]*store.Interaction, error) {
		return queryInteractions(ctx, tx, `SELECT id, doc, content_vector, summary_vector FROM interactions
WHERE user_id = ? AND id IN (`+placeholders(len(ids))+`)`, idArgs(userID, ids)...)
	}, func(d *store.Interaction) string { return d.ID })
}

// SearchInsights ranks the user's active insights for q.
func (s *Store) SearchInsights(ctx context.Context, userID string, q store.SearchRequest) ([]store.Hit[*store.Insight], error) {
	return search(ctx, s, userID, store.KindInsight, q, func(ctx context.Context, tx txn, ids []string) ([]*store.Insight, error) {
		return queryInsights(ctx, tx, `SELECT id, doc, insight_vector FROM insights
WHERE user_id = ? AND superseded = 0 AND id IN (`+placeholders(len(ids))+`)`, idArgs(userID, ids)...)
	}, func(d *store.Insight) string { return d.ID })
}

// SearchSessions ranks the user's session summaries for q.
func (s *Store) SearchSessions(ctx context.Context, userID string, q store.SearchRequest) ([]store.Hit[*store.Session], error) {
	return search(ctx, s, userID, store.KindSessionSummary, q, func(ctx context.Context, tx txn, ids []string) ([]*store.Session, error) {
		return querySessions(ctx, tx, `SELECT id, doc, summary_vector, etag FROM session_summaries
WHERE user_id = ? AND id IN (`+placeholders(len(ids))+`)`, idArgs(userID, ids)...)
	}, func(d *store.Session) string { return d.ID })
}

func idArgs(userID string, ids []string) []any {
	args := make([]any, 0, len(ids)+1)
	args = append(args, userID)
	for _, id := range ids {
		args = append(args, id)
	}
	return args
}

// legDepth is the minimum number of candidates each leg contributes to
// fusion. Fusion is exact (the same as over complete legs) whenever no leg
// has more candidates than max(TopK, legDepth); beyond that, a document
// missing from a leg would have added less than 1/(RRFK+legDepth+1) from it.
const legDepth = 100

// search runs the vector legs and the text leg of q in one read snapshot,
// fuses them with driver.Combine and loads the winners' documents.
func search[T any](ctx context.Context, s *Store, userID string, kind store.Kind, q store.SearchRequest,
	load func(context.Context, txn, []string) ([]T, error), idOf func(T) string) ([]store.Hit[T], error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	q, err := s.v.Search(kind, q)
	if err != nil {
		return nil, err
	}
	sp, _ := specOf(kind)
	words := queryWords(q.Text)
	match := matchExpr(words)
	if match == "" && len(q.Vector) == 0 {
		return nil, nil // only punctuation: nothing can match
	}
	f := filter{kind: kind, session: q.SessionID}
	if kind == store.KindInsight {
		f.insightType, f.category = q.InsightType, q.Category
	}
	if !q.Since.IsZero() {
		f.since = timeKey(q.Since)
	}
	if !q.Until.IsZero() {
		f.until = timeKey(q.Until)
	}
	depth := max(q.TopK, legDepth)
	var hits []store.Hit[T]
	err = s.read(ctx, "search "+string(kind), func(tx *readTx) error {
		// The user's set serves the vector legs and, through its text
		// index, the text leg.
		set, release, err := s.vectorSet(ctx, tx, userID, sp, match != "")
		if err != nil {
			return err
		}
		defer release()
		// The vector legs rank in memory on another goroutine while this
		// one runs the text leg: a hybrid search then takes about as long
		// as its slower leg when a second core is free.
		var legs [][]driver.Scored
		var vecDone chan struct{}
		if len(q.Vector) > 0 {
			slots := make([]int, len(q.VectorFields))
			for i, field := range q.VectorFields {
				slots[i] = slices.Index(sp.fields, field) // validated: always found
			}
			vecDone = make(chan struct{})
			go func() {
				defer close(vecDone)
				legs = set.rank(&f, slots, q.Vector, depth, q.MinSimilarity, s.pf)
			}()
		}
		var text []driver.Scored
		var textErr error
		if match != "" {
			text, textErr = s.textLegIndex(ctx, tx, userID, set.text, sp, &f, words, depth)
		}
		if vecDone != nil {
			<-vecDone
		}
		if textErr != nil {
			return textErr
		}
		ranked := driver.Combine(q.TopK, legs, text)
		if len(ranked) == 0 {
			return nil
		}
		ids := make([]string, len(ranked))
		for i, r := range ranked {
			ids[i] = r.ID
		}
		docs, err := load(ctx, tx, ids)
		if err != nil {
			return err
		}
		byID := make(map[string]T, len(docs))
		for _, d := range docs {
			byID[idOf(d)] = d
		}
		hits = make([]store.Hit[T], 0, len(ranked))
		for _, r := range ranked {
			d, ok := byID[r.ID]
			if !ok {
				continue // cannot happen within one snapshot; be safe
			}
			hits = append(hits, store.Hit[T]{Doc: d, Score: r.Score, Similarity: r.Similarity, TextScore: r.TextScore})
		}
		return nil
	})
	return hits, err
}

// vectorSet returns the user's vector set of a kind as of the snapshot of
// tx: the cached set when it is at the snapshot's generation (read-locked
// until release is called), else one loaded from the file, which it then
// caches. A cached set always has its text index; with the cache off, a
// set has one when withText asks for it.
func (s *Store) vectorSet(ctx context.Context, tx txn, userID string, sp spec, withText bool) (set *vecSet, release func(), err error) {
	gen, err := readGen(ctx, tx, userID, sp.kind)
	if err != nil {
		return nil, nil, err
	}
	key := cacheKey{userID, sp.kind}
	if set := s.cache.get(key); set != nil {
		set.mu.RLock()
		if set.gen == gen {
			return set, set.mu.RUnlock, nil
		}
		set.mu.RUnlock()
	}
	if s.cache.max <= 0 {
		// No cache: a set for this search alone.
		if set, _, err = loadSet(ctx, tx, userID, sp, gen, withText, false); err != nil {
			return nil, nil, err
		}
		return set, func() {}, nil
	}
	// The set is loaded in the background (see setLoads), shared by every
	// search waiting for it; this search waits as long as its context lets
	// it.
	l := s.loadShared(key, sp)
	select {
	case <-l.done:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if l.err == nil {
		// Shared once loaded: read-lock it like a cached one.
		l.set.mu.RLock()
		if l.set.gen == gen {
			return l.set, l.set.mu.RUnlock, nil
		}
		l.set.mu.RUnlock()
	}
	// The load failed, or read another snapshot than this search's (a
	// write came in between): load this snapshot's set here.
	if set, _, err = loadSet(ctx, tx, userID, sp, gen, true, s.pf.on()); err != nil {
		return nil, nil, err
	}
	s.cache.put(key, set)
	set.mu.RLock()
	return set, set.mu.RUnlock, nil
}

// loadSet reads a user's searchable rows of one kind (every row but
// superseded insights), their vectors and the columns the filters need, as
// of the transaction's snapshot (generation gen), and with withText their
// full-text index, with withCodes their int8 codes. The text index is
// built from the documents' terms rows; documents without one (or with a
// malformed one) are tokenized, and their tokens returned in unsaved, by
// rid, for the caller to store (Store.saveTerms).
func loadSet(ctx context.Context, tx txn, userID string, sp spec, gen int64, withText, withCodes bool) (_ *vecSet, unsaved map[int64]*docTerms, _ error) {
	terms := "NULL"
	if withText {
		terms = "x.terms"
	}
	var query string
	switch sp.kind {
	case store.KindInteraction:
		query = `SELECT t.rid, t.id, t.session_id, t.ts, t.content_vector, t.summary_vector, ` + terms + ` FROM interactions AS t`
	case store.KindInsight:
		query = `SELECT t.rid, t.id, t.doc -> '$.session_ids', t.created_at, t.insight_type, t.category, t.insight_vector, ` + terms + ` FROM insights AS t`
	case store.KindSessionSummary:
		query = `SELECT t.rid, t.id, t.start_time, t.summary_vector, ` + terms + ` FROM session_summaries AS t`
	}
	if withText {
		query += ` LEFT JOIN ` + sp.terms + ` AS x ON x.rid = t.rid`
	}
	query += ` WHERE t.user_id = ?`
	if sp.kind == store.KindInsight {
		query += ` AND t.superseded = 0`
	}
	var n, avgTerms int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+sp.table+` WHERE user_id = ?`, userID).Scan(&n); err != nil {
		return nil, nil, err
	}
	if withText && n > 0 {
		// The average terms row's length, for a first guess of the
		// tokens: about 6 bytes a token.
		var avg sql.NullFloat64
		if err := tx.QueryRowContext(ctx, `SELECT avg(length(x.terms)) FROM `+sp.terms+` AS x
WHERE x.rid IN (SELECT rid FROM `+sp.table+` WHERE user_id = ? LIMIT 64)`, userID).Scan(&avg); err != nil {
			return nil, nil, err
		}
		avgTerms = int(avg.Float64/6) + 1
	}
	set := newVecSet(gen, n)
	if withCodes {
		set.withCodes()
	}
	var tb *textBuilder
	var untokenized []int64 // rids
	var slotOf map[int64]uint32
	if withText {
		tb = newTextBuilder(n, avgTerms)
		slotOf = make(map[int64]uint32)
	}
	var arena vecArena
	if err := func() error {
		rows, err := tx.QueryContext(ctx, query, userID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r vecRow
			var rid int64
			var a, b, blob sql.RawBytes
			var sessions sql.NullString
			var err error
			switch sp.kind {
			case store.KindInteraction:
				err = rows.Scan(&rid, &r.id, &r.session, &r.t, &a, &b, &blob)
			case store.KindInsight:
				err = rows.Scan(&rid, &r.id, &sessions, &r.t, &r.insightType, &r.category, &a, &blob)
			case store.KindSessionSummary:
				err = rows.Scan(&rid, &r.id, &r.t, &a, &blob)
				r.session = r.id
			}
			if err != nil {
				return err
			}
			if sessions.Valid && sessions.String != "null" {
				if err := json.Unmarshal([]byte(sessions.String), &r.sessions); err != nil {
					return fmt.Errorf("decode session ids of insight %s: %w", r.id, err)
				}
			}
			va, err := arena.decode(a)
			if err != nil {
				return fmt.Errorf("decode %s of %s %s: %w", sp.fields[0], sp.kind, r.id, err)
			}
			vb, err := arena.decode(b)
			if err != nil {
				return fmt.Errorf("decode %s of %s %s: %w", store.FieldSummaryVector, sp.kind, r.id, err)
			}
			r.setVectors(va, vb)
			set.put(r)
			if tb != nil {
				slot := tb.addDoc(r)
				if blob == nil || tb.setTerms(slot, blob) != nil {
					untokenized = append(untokenized, rid)
					slotOf[rid] = slot
				}
			}
		}
		return rows.Err()
	}(); err != nil {
		return nil, nil, err
	}
	if tb == nil {
		return set, nil, nil
	}
	if len(untokenized) > 0 {
		var err error
		if unsaved, err = tokenizeRows(ctx, tx, userID, sp, untokenized); err != nil {
			return nil, nil, err
		}
		for rid, d := range unsaved {
			tb.setDocTerms(slotOf[rid], d)
		}
	}
	set.text = tb.finish()
	return set, unsaved, nil
}
