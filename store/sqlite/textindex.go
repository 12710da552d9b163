package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"modernc.org/libc"

	"github.com/agentmemory/agentmemory/internal/topk"
	"github.com/agentmemory/agentmemory/store"
)

// The text leg: BM25 over a per-user, per-kind in-memory inverted index,
// with FTS5's bm25() formula and the user's own corpus statistics.
//
// FTS5's bm25() scores a row matching any of the query's phrases as
//
//	sum over phrases i of idf_i * f_i*(k1+1) / (f_i + k1*(1 - b + b*D/avgdl))
//
// with k1 = 1.2, b = 0.75, f_i the phrase's occurrences in the row (all
// columns, weight 1), D the row's token count, avgdl the corpus's tokens
// per row, and idf_i = ln((N - n_i + 0.5)/(n_i + 0.5)) (at least 1e-6)
// where N is the corpus's row count and n_i the rows matching phrase i.
// Here the corpus is the user's searchable documents of the kind (every
// one but superseded insights): the index keeps N, the total of D and each
// token's n up to date as documents are written and removed, so a search
// reads no statistics from the file, and one user's documents never shape
// another's scores. The result is what bm25() returns over an FTS5 table
// holding only that user's documents (TestTextIndexMatchesFTS5 checks it,
// bit for bit).
//
// Tokens come from FTS5 itself, never from a Go re-implementation of its
// tokenizer: documents and query words are run through a temporary FTS5
// table with the same tokenizer (tokenize below), on the connection of the
// current transaction, and read back with fts5vocab. A query word of
// several tokens is a phrase to FTS5: its occurrences are found by
// tokenizing, with positions, the documents holding all its tokens.

// tokenize must be the tokenizer of the FTS5 tables in the schema
// (TestTokenizerMatchesSchema checks it).
const tokenize = "porter unicode61"

// tokSetup creates the connection's temporary tokenizer table and its
// instance view, if not already there. Temporary objects are per
// connection and never touch the database file.
const tokSetup = `CREATE VIRTUAL TABLE IF NOT EXISTS temp.am_tok USING fts5 (c0, c1, c2, c3, content = '', tokenize = '` + tokenize + `');
CREATE VIRTUAL TABLE IF NOT EXISTS temp.am_tok_inst USING fts5vocab (temp, am_tok, 'instance')`

// BM25 constants of FTS5's bm25().
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// ftsColumns returns the SQL expressions, over the kind's base table
// aliased t, of the text its FTS5 triggers index, padded to four columns.
// They must stay those of the triggers in schema.go.
func ftsColumns(kind store.Kind) string {
	switch kind {
	case store.KindInteraction:
		return `t.doc ->> '$.content', t.doc ->> '$.summary',
	(SELECT group_concat(value, ' ') FROM json_each(t.doc, '$.metadata.mentioned_topics')),
	(SELECT group_concat(value, ' ') FROM json_each(t.doc, '$.metadata.entities'))`
	case store.KindInsight:
		return `t.doc ->> '$.insight_text', NULL, NULL, NULL`
	default:
		return `t.doc ->> '$.summary', (SELECT group_concat(value, ' ') FROM json_each(t.doc, '$.key_topics')), NULL, NULL`
	}
}

// ftsColumnCount is the number of columns of the kind's FTS5 table.
func ftsColumnCount(kind store.Kind) int {
	switch kind {
	case store.KindInteraction:
		return 4
	case store.KindInsight:
		return 1
	default:
		return 2
	}
}

// posting is one document's occurrences of one token.
type posting struct {
	slot uint32 // index in textIndex.docs
	tf   uint32
}

// textDoc is one indexed document: its filter columns (row, without
// vectors), its token count and, while live, its distinct tokens (indexes
// in textIndex.postings), to update the document counts when it goes.
type textDoc struct {
	row    vecRow
	terms  []uint32
	length int32
	live   bool
}

// termFreq is a token and its occurrences in one document.
type termFreq struct {
	term string
	tf   uint32
}

// docTerms is one document's tokens, as a write hands them to the cache.
type docTerms struct {
	terms  []termFreq
	length int
}

// textIndex is one user's documents of one kind as an inverted index with
// its BM25 statistics. Replacing or removing a document leaves a dead slot
// behind, skipped by searches; a set with too many is reloaded (see
// tooSparse). Slots only grow, so every posting list is in slot order.
type textIndex struct {
	docs []textDoc
	// lens[slot] is the slot's token count while it is live, else -1: the
	// one field of a document a posting walk reads, kept apart so that the
	// walk touches 4 bytes a document rather than a textDoc.
	lens     []int32
	pos      map[string]uint32 // id → live slot
	terms    map[string]uint32 // token → index in postings
	postings [][]posting
	// df[t] is the number of live documents holding token t (n in BM25).
	df []uint32
	// live is the number of live documents (N), tokens their total length.
	live   int
	tokens int64
	dead   int
	bytes  int64
}

func newTextIndex(n int) *textIndex {
	return &textIndex{pos: make(map[string]uint32, n), terms: make(map[string]uint32)}
}

// Size model: the bytes of postings (with the document's own list of its
// tokens), documents and terms, approximately.
const (
	postingBytes = 12
	textDocBytes = 208
	termBytes    = 68
)

// addDoc appends a live document with no postings yet and returns its
// slot, killing the id's previous slot.
func (x *textIndex) addDoc(row vecRow, length int) uint32 {
	row.vecs, row.norms = [2][]float32{}, [2]float32{}
	x.remove(row.id)
	slot := uint32(len(x.docs))
	x.docs = append(x.docs, textDoc{row: row, length: int32(length), live: true})
	x.lens = append(x.lens, int32(length))
	x.pos[row.id] = slot
	x.live++
	x.tokens += int64(length)
	x.bytes += textDocBytes + int64(len(row.id)+len(row.session)+len(row.category))
	return slot
}

// termID returns the id of term, adding it without postings if new.
func (x *textIndex) termID(term []byte) uint32 {
	ti, ok := x.terms[string(term)]
	if !ok {
		ti = uint32(len(x.postings))
		x.terms[string(term)] = ti
		x.postings = append(x.postings, nil)
		x.df = append(x.df, 0)
		x.bytes += termBytes + int64(len(term))
	}
	return ti
}

// addPosting records tf occurrences of term in slot, a live document
// that has no posting for term yet and no later slot with postings.
func (x *textIndex) addPosting(term []byte, slot, tf uint32) {
	ti := x.termID(term)
	x.postings[ti] = append(x.postings[ti], posting{slot, tf})
	x.df[ti]++
	d := &x.docs[slot]
	d.terms = append(d.terms, ti)
	x.bytes += postingBytes
}

// put indexes a document, replacing any with its id.
func (x *textIndex) put(row vecRow, d *docTerms) {
	slot := x.addDoc(row, d.length)
	for _, t := range d.terms {
		x.addPosting([]byte(t.term), slot, t.tf)
	}
}

// remove kills the id's slot, if any, and takes it out of the statistics.
func (x *textIndex) remove(id string) {
	slot, ok := x.pos[id]
	if !ok {
		return
	}
	d := &x.docs[slot]
	for _, ti := range d.terms {
		x.df[ti]--
	}
	x.bytes -= int64(4 * len(d.terms))
	d.terms = nil
	d.live = false
	x.lens[slot] = -1
	x.live--
	x.tokens -= int64(d.length)
	x.dead++
	delete(x.pos, id)
}

// tooSparse reports whether dead slots have piled up enough to rebuild.
func (x *textIndex) tooSparse() bool {
	return x.dead > 1024 && x.dead > len(x.docs)/4
}

// phrase is one query phrase over an index: the postings of the
// documents holding it, in slot order (dead slots included), and the
// number of live ones.
type phrase struct {
	post []posting
	df   int
}

// tfIn returns the phrase's occurrences in slot (0 if none).
func (p *phrase) tfIn(slot uint32) uint32 {
	i, ok := slices.BinarySearchFunc(p.post, slot, func(q posting, s uint32) int { return cmp.Compare(q.slot, s) })
	if !ok {
		return 0
	}
	return p.post[i].tf
}

// sqliteLog is the natural logarithm bm25() computes idf with: the C
// library's log as modernc.org/libc provides it to SQLite (a port of
// musl's on Linux, math.Log elsewhere), which can differ from math.Log in
// the last bit. It reads no thread state, hence the nil TLS.
func sqliteLog(x float64) float64 { return libc.Xlog(nil, x) }

// BM25 idf floor: bm25() raises an idf at or below zero (a phrase in at
// least half the documents) to 1e-6.
const idfFloor = 1e-6

// bm25Term is one phrase's term of bm25()'s sum, with its expression and
// rounding (fts5Bm25Function); the conversions keep Go from fusing
// operations into one rounding.
func bm25Term(idf float64, tf uint32, length int32, avgdl float64) float64 {
	const k1, b = bm25K1, bm25B
	fr := float64(tf)
	D := float64(length)
	return float64(idf * (float64(fr*(k1+1)) / (fr + float64(k1*(1-b+float64(b*D)/avgdl)))))
}

// scores is a search's scratch: a score per slot and the slots touched.
type scores struct {
	s       []float64
	touched []uint32
}

// reset makes sc ready for n slots, all zero.
func (sc *scores) reset(n int) {
	for _, slot := range sc.touched {
		if int(slot) < len(sc.s) {
			sc.s[slot] = 0
		}
	}
	sc.touched = sc.touched[:0]
	if len(sc.s) < n {
		sc.s = make([]float64, n)
	}
}

// add adds phrase p's term, weighted by idf, to the score of every live
// document holding it.
func (x *textIndex) add(sc *scores, p *phrase, idf, avgdl float64) {
	for _, q := range p.post {
		D := x.lens[q.slot]
		if D < 0 {
			continue // dead
		}
		if sc.s[q.slot] == 0 {
			sc.touched = append(sc.touched, q.slot)
		}
		sc.s[q.slot] = sc.s[q.slot] + bm25Term(idf, q.tf, D, avgdl)
	}
}

// rank returns the best k live documents matching f that hold any of the
// phrases (in query order), by BM25 over the index's statistics, best
// first, ties by id: FTS5's ORDER BY bm25(), id over the user's corpus.
//
// A phrase in at least half the documents has the idf floor, 1e-6: its
// term adds less than 2.2e-6 to a score. When the other phrases alone give
// k documents matching f a score above what all such phrases together can
// add, no document holding only those phrases can reach the top k, and
// they can reorder only documents whose scores without them lie within
// that bound of the k-th: so the floored phrases' postings are not walked,
// and only those contenders are scored in full (binary search in each
// phrase's postings). Otherwise every posting is walked. Either way the
// result is the full computation's; skipped reports the first way.
func (x *textIndex) rank(sc *scores, f *filter, ph []phrase, k int) (_ []store.Scored, skipped bool) {
	if k <= 0 || x.live == 0 {
		return nil, false
	}
	N := float64(x.live)
	avgdl := float64(x.tokens) / N
	idf := make([]float64, len(ph))
	isFloored := make([]bool, len(ph))
	floored := 0
	for i := range ph {
		n := ph[i].df
		if n == 0 {
			continue // adds nothing anywhere
		}
		v := sqliteLog((float64(x.live-n) + 0.5) / (float64(n) + 0.5))
		if v <= 0 {
			v = idfFloor
			isFloored[i] = true
			floored++
		}
		idf[i] = v
	}
	sc.reset(len(x.docs))
	if floored > 0 && floored < len(ph) {
		if out, ok := x.rankSkipping(sc, f, ph, idf, isFloored, avgdl, floored, k); ok {
			return out, true
		}
		sc.reset(len(x.docs))
	}
	for i := range ph {
		if idf[i] != 0 {
			x.add(sc, &ph[i], idf[i], avgdl)
		}
	}
	h := newTop(k)
	for _, slot := range sc.touched {
		d := &x.docs[slot]
		if !f.match(&d.row) {
			continue
		}
		h.Offer(store.Scored{ID: d.row.id, Score: sc.s[slot]})
	}
	return h.Sorted(), false
}

// rankSkipping is rank without walking the floored phrases, or ok false
// when that cannot give the full computation's result.
func (x *textIndex) rankSkipping(sc *scores, f *filter, ph []phrase, idf []float64, isFloored []bool, avgdl float64, floored, k int) (_ []store.Scored, ok bool) {
	for i := range ph {
		if idf[i] != 0 && !isFloored[i] {
			x.add(sc, &ph[i], idf[i], avgdl)
		}
	}
	// What the floored phrases can add to a score, and a margin for the
	// rounding of sums in another order (scores stay far below 1e6, whose
	// sums of 64 terms are exact to 1e-8).
	bound := float64(floored) * idfFloor * (bm25K1 + 1)
	const slack = 1e-7
	// The k-th best partial score among matching documents, if above the
	// bound: a min-heap of the k best.
	top := topk.New(k, lessFloat)
	for _, slot := range sc.touched {
		p := sc.s[slot]
		if p <= bound+slack || (top.Full() && p <= top.Min()) {
			continue
		}
		if !f.match(&x.docs[slot].row) {
			continue
		}
		top.Offer(p)
	}
	if !top.Full() {
		return nil, false
	}
	cut := top.Min() - bound - slack
	h := newTop(k)
	for _, slot := range sc.touched {
		if sc.s[slot] < cut {
			continue
		}
		d := &x.docs[slot]
		if !f.match(&d.row) {
			continue
		}
		var s float64
		for i := range ph {
			if idf[i] == 0 {
				continue
			}
			if tf := ph[i].tfIn(slot); tf > 0 {
				s = s + bm25Term(idf[i], tf, d.length, avgdl)
			}
		}
		h.Offer(store.Scored{ID: d.row.id, Score: s})
	}
	return h.Sorted(), true
}

// worse reports whether a ranks below b: a lower score, then a higher id.
func worse(a, b store.Scored) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.ID > b.ID
}

// newTop returns a heap keeping the k best results.
func newTop(k int) *topk.Heap[store.Scored] { return topk.New(k, worse) }

// lessFloat orders floats as <.
func lessFloat(a, b float64) bool { return a < b }

// withTokenizer runs fn with the connection's temporary tokenizer table
// ready and empty, and empties it afterwards.
func withTokenizer(ctx context.Context, tx *sql.Tx, fn func() error) (err error) {
	if _, err := tx.ExecContext(ctx, tokSetup); err != nil {
		return fmt.Errorf("tokenizer table: %w", err)
	}
	defer func() {
		if _, derr := tx.ExecContext(context.WithoutCancel(ctx), `INSERT INTO temp.am_tok (am_tok) VALUES ('delete-all')`); derr != nil {
			err = errors.Join(err, fmt.Errorf("tokenizer table: %w", derr))
		}
	}()
	return fn()
}

// readInstances calls fn for every token instance in the tokenizer table,
// in (token, row, column, offset) order. The token bytes are valid only
// during the call.
func readInstances(ctx context.Context, tx *sql.Tx, fn func(term []byte, row int64, off int)) error {
	rows, err := tx.QueryContext(ctx, `SELECT term, doc, offset FROM temp.am_tok_inst`)
	if err != nil {
		return fmt.Errorf("read tokens: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var term sql.RawBytes
		var row int64
		var off int
		if err := rows.Scan(&term, &row, &off); err != nil {
			return err
		}
		fn(term, row, off)
	}
	return rows.Err()
}

// textBuilder builds a loaded set's text index: documents get their
// slots in row order, their tokens are added in any order (a terms row
// each, or tokenized), and finish builds every posting list in one pass,
// each allocated to its final length.
type textBuilder struct {
	x *textIndex
	// tids and tfs hold every document's tokens (term ids) and counts,
	// document after document; slot s's are at [start[s], end[s]).
	tids       []uint32
	tfs        []uint32
	start, end []uint32
}

// newTextBuilder returns a builder for about n documents of avgTerms
// distinct tokens.
func newTextBuilder(n, avgTerms int) *textBuilder {
	return &textBuilder{
		x:     newTextIndex(n),
		tids:  make([]uint32, 0, n*avgTerms),
		tfs:   make([]uint32, 0, n*avgTerms),
		start: make([]uint32, 0, n),
		end:   make([]uint32, 0, n),
	}
}

// addDoc adds a document with no tokens yet and returns its slot.
func (tb *textBuilder) addDoc(row vecRow) uint32 {
	slot := tb.x.addDoc(row, 0)
	tb.start = append(tb.start, 0)
	tb.end = append(tb.end, 0)
	return slot
}

// setTerms gives slot, a document added without tokens, the tokens of an
// encoded terms row; on a malformed row slot keeps none.
func (tb *textBuilder) setTerms(slot uint32, blob []byte) error {
	from := len(tb.tids)
	var length uint64
	err := decodeTerms(blob, func(term []byte, tf uint32) {
		tb.tids = append(tb.tids, tb.x.termID(term))
		tb.tfs = append(tb.tfs, tf)
		length += uint64(tf)
	})
	if err == nil && length > math.MaxInt32 {
		err = fmt.Errorf("%w: %d tokens", errTerms, length)
	}
	if err != nil {
		tb.tids, tb.tfs = tb.tids[:from], tb.tfs[:from]
		return err
	}
	tb.setRange(slot, from, int32(length))
	return nil
}

// setDocTerms gives slot, a document added without tokens, the tokens d.
func (tb *textBuilder) setDocTerms(slot uint32, d *docTerms) {
	from := len(tb.tids)
	for _, t := range d.terms {
		tb.tids = append(tb.tids, tb.x.termID([]byte(t.term)))
		tb.tfs = append(tb.tfs, t.tf)
	}
	tb.setRange(slot, from, int32(d.length))
}

func (tb *textBuilder) setRange(slot uint32, from int, length int32) {
	tb.start[slot], tb.end[slot] = uint32(from), uint32(len(tb.tids))
	x := tb.x
	x.docs[slot].length = length
	x.lens[slot] = length
	x.tokens += int64(length)
}

// finish builds the postings and returns the index.
func (tb *textBuilder) finish() *textIndex {
	x := tb.x
	n := len(tb.tids)
	for _, ti := range tb.tids {
		x.df[ti]++
	}
	// One block for all postings, each list its part of it.
	block := make([]posting, n)
	off := 0
	for ti, df := range x.df {
		x.postings[ti] = block[off : off : off+int(df)]
		off += int(df)
	}
	// The documents' term ids, kept for remove, in one block too.
	ids := make([]uint32, 0, n)
	for slot := range x.docs {
		lo, hi := tb.start[slot], tb.end[slot]
		from := len(ids)
		for i := lo; i < hi; i++ {
			ti := tb.tids[i]
			x.postings[ti] = append(x.postings[ti], posting{uint32(slot), tb.tfs[i]})
			ids = append(ids, ti)
		}
		x.docs[slot].terms = ids[from:len(ids):len(ids)]
	}
	x.bytes += int64(n) * postingBytes
	tb.tids, tb.tfs, tb.start, tb.end = nil, nil, nil, nil
	return x
}

// tokenCache remembers the tokens of query words (by exact text): the
// tokenizer is deterministic, so entries never go stale.
type tokenCache struct {
	mu sync.Mutex
	m  map[string][]string
}

const tokenCacheMax = 8192

func (c *tokenCache) get(w string) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[w]
	return t, ok
}

func (c *tokenCache) put(w string, toks []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= tokenCacheMax {
		c.m = make(map[string][]string)
	}
	c.m[w] = toks
}

// queryTokens returns the FTS5 tokens of each query word, in order.
func (s *Store) queryTokens(ctx context.Context, tx *sql.Tx, words []string) ([][]string, error) {
	out := make([][]string, len(words))
	var missing []int
	for i, w := range words {
		if t, ok := s.toks.get(w); ok {
			out[i] = t
		} else {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	type at struct {
		tok string
		off int
	}
	found := make(map[int64][]at)
	err := withTokenizer(ctx, tx, func() error {
		// One statement for all the words: a statement costs tens of
		// microseconds, a word's tokenizing far less.
		var q strings.Builder
		q.WriteString(`INSERT INTO temp.am_tok (rowid, c0) VALUES `)
		args := make([]any, 0, 2*len(missing))
		for j, i := range missing {
			if j > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?)")
			args = append(args, i+1, words[i])
		}
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return fmt.Errorf("tokenize query: %w", err)
		}
		return readInstances(ctx, tx, func(term []byte, row int64, off int) {
			found[row-1] = append(found[row-1], at{string(term), off})
		})
	})
	if err != nil {
		return nil, err
	}
	for _, i := range missing {
		ats := found[int64(i)]
		toks := make([]string, len(ats))
		for _, a := range ats {
			if a.off >= 0 && a.off < len(toks) {
				toks[a.off] = a.tok
			}
		}
		out[i] = toks
		s.toks.put(words[i], toks)
	}
	return out, nil
}

// textLegIndex ranks the user's documents in the index x for the query
// words (one FTS5 phrase each, as sanitise makes them), by BM25 over the
// user's corpus: the text leg.
func (s *Store) textLegIndex(ctx context.Context, tx *sql.Tx, userID string, x *textIndex, sp spec, f *filter, words []string, k int) ([]store.Scored, error) {
	ph, err := s.queryPhrases(ctx, tx, userID, x, sp, words)
	if err != nil {
		return nil, err
	}
	sc, _ := s.scratch.Get().(*scores)
	if sc == nil {
		sc = new(scores)
	}
	defer s.scratch.Put(sc)
	out, _ := x.rank(sc, f, ph, k)
	return out, nil
}

// queryPhrases returns the phrases of the query words over x, in order.
func (s *Store) queryPhrases(ctx context.Context, tx *sql.Tx, userID string, x *textIndex, sp spec, words []string) ([]phrase, error) {
	toks, err := s.queryTokens(ctx, tx, words)
	if err != nil {
		return nil, err
	}
	ph := make([]phrase, len(toks))
	for i, t := range toks {
		switch len(t) {
		case 0:
			// No token: matches nothing.
		case 1:
			if ti, ok := x.terms[t[0]]; ok {
				ph[i] = phrase{post: x.postings[ti], df: int(x.df[ti])}
			}
		default:
			if ph[i], err = phraseOf(ctx, tx, userID, x, sp, t); err != nil {
				return nil, err
			}
		}
	}
	return ph, nil
}

// phraseOf finds the live documents of the user's index x holding the
// phrase toks (two tokens or more, consecutive in one column, as FTS5
// matches a phrase) and counts its occurrences in each, by tokenizing with
// positions the documents that hold every one of its tokens.
func phraseOf(ctx context.Context, tx *sql.Tx, userID string, x *textIndex, sp spec, toks []string) (phrase, error) {
	// The documents holding every token: the intersection of the
	// postings, from the rarest token's.
	lists := make([]phrase, len(toks))
	for i, t := range toks {
		ti, ok := x.terms[t]
		if !ok {
			return phrase{}, nil
		}
		lists[i] = phrase{post: x.postings[ti]}
	}
	slices.SortFunc(lists, func(a, b phrase) int { return cmp.Compare(len(a.post), len(b.post)) })
	var cand []uint32
	for _, p := range lists[0].post {
		if x.lens[p.slot] < 0 {
			continue
		}
		in := true
		for j := 1; j < len(lists) && in; j++ {
			in = lists[j].tfIn(p.slot) > 0
		}
		if in {
			cand = append(cand, p.slot)
		}
	}
	if len(cand) == 0 {
		return phrase{}, nil
	}
	type place struct {
		row    int64
		col    string
		offset int
	}
	at := make(map[place]string)
	var starts []place
	err := withTokenizer(ctx, tx, func() error {
		// A temporary row per candidate, numbered by its place in cand.
		for i, slot := range cand {
			if _, err := tx.ExecContext(ctx, `INSERT INTO temp.am_tok (rowid, c0, c1, c2, c3) SELECT ?, `+
				ftsColumns(sp.kind)+` FROM `+sp.table+` AS t WHERE t.user_id = ? AND t.id = ?`, i+1, userID, x.docs[slot].row.id); err != nil {
				return fmt.Errorf("tokenize: %w", err)
			}
		}
		args := make([]any, len(toks))
		for i, t := range toks {
			args[i] = t
		}
		rows, err := tx.QueryContext(ctx, `SELECT term, doc, col, offset FROM temp.am_tok_inst WHERE term IN (`+placeholders(len(toks))+`)`, args...)
		if err != nil {
			return fmt.Errorf("read tokens: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var term string
			var p place
			if err := rows.Scan(&term, &p.row, &p.col, &p.offset); err != nil {
				return err
			}
			at[p] = term
			if term == toks[0] {
				starts = append(starts, p)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return phrase{}, err
	}
	var out phrase
	for _, p := range starts {
		match := true
		for j := 1; j < len(toks) && match; j++ {
			match = at[place{p.row, p.col, p.offset + j}] == toks[j]
		}
		if !match {
			continue
		}
		slot := cand[p.row-1]
		if n := len(out.post); n > 0 && out.post[n-1].slot == slot {
			out.post[n-1].tf++
			continue
		}
		out.post = append(out.post, posting{slot, 1})
	}
	// starts came in (token, row, column, offset) order: rows ascend with
	// slots, since cand does.
	out.df = len(out.post)
	return out, nil
}
