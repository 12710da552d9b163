package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/agentmemory/agentmemory/store"
)

// The text leg's fast path: BM25 over a per-user, per-kind in-memory
// inverted index, giving the same ranking and scores as FTS5's bm25() over
// the kind's FTS5 table.
//
// FTS5's bm25() scores a row matching any of the query's phrases as
//
//	sum over phrases i of idf_i * f_i*(k1+1) / (f_i + k1*(1 - b + b*D/avgdl))
//
// with k1 = 1.2, b = 0.75, f_i the phrase's occurrences in the row (all
// columns, weight 1), D the row's token count, avgdl the table's tokens per
// row, and idf_i = ln((N - n_i + 0.5)/(n_i + 0.5)) (at least 1e-6) where N
// is the table's row count and n_i the rows matching phrase i. The index
// holds f and D for the user's documents; N, avgdl and n_i are the whole
// table's (all users, as bm25() has them) and are read from FTS5 itself at
// every search, so other users' writes are accounted for.
//
// Tokens come from FTS5 itself, never from a Go re-implementation of its
// tokenizer: documents and query words are run through a temporary FTS5
// table with the same tokenizer (tokenize below), on the connection of the
// current transaction, and read back with fts5vocab. A query word that is
// not exactly one token (a phrase to FTS5) sends the search down the SQL
// path, which stays the engine of record.

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
// vectors) and its token count.
type textDoc struct {
	row    vecRow
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

// textIndex is one user's documents of one kind as an inverted index.
// Replacing or removing a document leaves a dead slot behind, skipped by
// searches; a set with too many is reloaded (see tooSparse).
type textIndex struct {
	docs     []textDoc
	pos      map[string]uint32 // id → live slot
	terms    map[string]uint32 // token → index in postings
	postings [][]posting
	dead     int
	bytes    int64
}

func newTextIndex(n int) *textIndex {
	return &textIndex{pos: make(map[string]uint32, n), terms: make(map[string]uint32)}
}

// Size model: the bytes of postings, documents and terms, approximately.
const (
	postingBytes = 8
	textDocBytes = 180
	termBytes    = 64
)

// addDoc appends a live document with no postings yet and returns its
// slot, killing the id's previous slot.
func (x *textIndex) addDoc(row vecRow, length int) uint32 {
	row.vecs, row.norms, row.tails = [2][]float32{}, [2]float32{}, [2]tails{}
	x.remove(row.id)
	slot := uint32(len(x.docs))
	x.docs = append(x.docs, textDoc{row: row, length: int32(length), live: true})
	x.pos[row.id] = slot
	x.bytes += textDocBytes + int64(len(row.id)+len(row.session)+len(row.category))
	return slot
}

// addPosting records tf occurrences of term in slot.
func (x *textIndex) addPosting(term []byte, slot, tf uint32) {
	ti, ok := x.terms[string(term)]
	if !ok {
		ti = uint32(len(x.postings))
		x.terms[string(term)] = ti
		x.postings = append(x.postings, nil)
		x.bytes += termBytes + int64(len(term))
	}
	x.postings[ti] = append(x.postings[ti], posting{slot, tf})
	x.bytes += postingBytes
}

// put indexes a document, replacing any with its id.
func (x *textIndex) put(row vecRow, d *docTerms) {
	slot := x.addDoc(row, d.length)
	for _, t := range d.terms {
		x.addPosting([]byte(t.term), slot, t.tf)
	}
}

// remove kills the id's slot, if any.
func (x *textIndex) remove(id string) {
	slot, ok := x.pos[id]
	if !ok {
		return
	}
	x.docs[slot].live = false
	x.dead++
	delete(x.pos, id)
}

// tooSparse reports whether dead slots have piled up enough to rebuild.
func (x *textIndex) tooSparse() bool {
	return x.dead > 1024 && x.dead > len(x.docs)/4
}

// rank returns the best k live documents matching f that contain any of
// toks (one token per query phrase, in query order), by BM25 with the
// phrases' idf and the table's avgdl, best first, ties by id: FTS5's
// ORDER BY bm25(), id.
func (x *textIndex) rank(f *filter, toks []string, idf []float64, avgdl float64, k int) []store.Scored {
	if k <= 0 {
		return nil
	}
	score := make([]float64, len(x.docs))
	var touched []uint32
	const k1, b = bm25K1, bm25B
	for i, tok := range toks {
		ti, ok := x.terms[tok]
		if !ok {
			continue
		}
		w := idf[i]
		for _, p := range x.postings[ti] {
			d := &x.docs[p.slot]
			if !d.live {
				continue
			}
			fr := float64(p.tf)
			D := float64(d.length)
			// The expression and its rounding are those of fts5Bm25Function.
			if score[p.slot] == 0 {
				touched = append(touched, p.slot)
			}
			score[p.slot] = score[p.slot] + w*(float64(fr*(k1+1))/(fr+float64(k1*(1-b+float64(b*D)/avgdl))))
		}
	}
	h := make(scoredMinHeap, 0, k+1)
	for _, slot := range touched {
		d := &x.docs[slot]
		if !f.match(&d.row) {
			continue
		}
		h.offer(store.Scored{ID: d.row.id, Score: score[slot]}, k)
	}
	return h.sorted()
}

// scoredMinHeap keeps the k best Scored (higher score, then lower id), the
// worst at the root.
type scoredMinHeap []store.Scored

func worse(a, b store.Scored) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.ID > b.ID
}

func (h *scoredMinHeap) offer(s store.Scored, k int) {
	if len(*h) == k {
		if !worse((*h)[0], s) {
			return
		}
		(*h)[0] = s
		h.down(0)
		return
	}
	*h = append(*h, s)
	// up
	a := *h
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !worse(a[i], a[p]) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h scoredMinHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && worse(h[r], h[l]) {
			m = r
		}
		if !worse(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// sorted empties the heap into a slice, best first.
func (h scoredMinHeap) sorted() []store.Scored {
	if len(h) == 0 {
		return nil
	}
	out := make([]store.Scored, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = h[0]
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		h.down(0)
	}
	return out
}

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

// loadText builds the text index of the user's rows of one kind (those
// loadSet read: rowByRid maps their rids to them), tokenizing their text
// as the kind's FTS5 triggers index it.
func loadText(ctx context.Context, tx *sql.Tx, userID string, sp spec, rowByRid map[int64]*vecRow) (*textIndex, error) {
	x := newTextIndex(len(rowByRid))
	slots := make(map[int64]uint32, len(rowByRid))
	for rid, r := range rowByRid {
		slots[rid] = x.addDoc(*r, 0)
	}
	where := "t.user_id = ?"
	if sp.kind == store.KindInsight {
		where += " AND t.superseded = 0"
	}
	var (
		last    []byte
		lastRow int64 = -1
		slot    uint32
		known   bool
		tf      uint32
	)
	flush := func() {
		if tf > 0 && known {
			x.addPosting(last, slot, tf)
		}
		tf = 0
	}
	err := withTokenizer(ctx, tx, func() error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO temp.am_tok (rowid, c0, c1, c2, c3) SELECT t.rid, `+
			ftsColumns(sp.kind)+` FROM `+sp.table+` AS t WHERE `+where, userID); err != nil {
			return fmt.Errorf("tokenize: %w", err)
		}
		return readInstances(ctx, tx, func(term []byte, row int64, _ int) {
			if row == lastRow && string(term) == string(last) {
				tf++
			} else {
				flush()
				if string(term) != string(last) {
					last = append([]byte(nil), term...)
				}
				if row != lastRow {
					slot, known = slots[row]
					lastRow = row
				}
				tf = 1
			}
			if known {
				x.docs[slot].length++
			}
		})
	})
	if err != nil {
		return nil, err
	}
	flush()
	return x, nil
}

// changeTerms tokenizes documents written by the current transaction, for
// the cache: terms[i] are the tokens of ids[i], read back from the rows as
// written, so exactly what the FTS5 triggers indexed.
func changeTerms(ctx context.Context, tx *sql.Tx, userID string, sp spec, ids []string) ([]*docTerms, error) {
	out := make([]*docTerms, len(ids))
	for i := range out {
		out[i] = &docTerms{}
	}
	if len(ids) == 0 {
		return out, nil
	}
	var last []byte
	lastRow := int64(-1)
	err := withTokenizer(ctx, tx, func() error {
		for i, id := range ids {
			if _, err := tx.ExecContext(ctx, `INSERT INTO temp.am_tok (rowid, c0, c1, c2, c3) SELECT ?, `+
				ftsColumns(sp.kind)+` FROM `+sp.table+` AS t WHERE t.user_id = ? AND t.id = ?`, i+1, userID, id); err != nil {
				return fmt.Errorf("tokenize: %w", err)
			}
		}
		return readInstances(ctx, tx, func(term []byte, row int64, _ int) {
			if row < 1 || int(row) > len(out) {
				return
			}
			d := out[row-1]
			d.length++
			if row == lastRow && string(term) == string(last) {
				d.terms[len(d.terms)-1].tf++
				return
			}
			last = append(last[:0], term...)
			lastRow = row
			d.terms = append(d.terms, termFreq{string(term), 1})
		})
	})
	return out, err
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
		for _, i := range missing {
			if _, err := tx.ExecContext(ctx, `INSERT INTO temp.am_tok (rowid, c0) VALUES (?, ?)`, i+1, words[i]); err != nil {
				return fmt.Errorf("tokenize query: %w", err)
			}
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

// textLegIndex is textLeg over the in-memory index x: it returns ok false,
// and no error, when a query word is not exactly one token, so that the
// caller runs the SQL path instead.
func (s *Store) textLegIndex(ctx context.Context, tx *sql.Tx, x *textIndex, sp spec, f *filter, words []string, k int) (_ []store.Scored, ok bool, _ error) {
	toks, err := s.queryTokens(ctx, tx, words)
	if err != nil {
		return nil, false, err
	}
	single := make([]string, len(toks))
	for i, t := range toks {
		if len(t) != 1 {
			return nil, false, nil
		}
		single[i] = t[0]
	}
	nRow, nTok, err := ftsTotals(ctx, tx, sp)
	if err != nil {
		return nil, false, err
	}
	if nRow <= 0 {
		return nil, true, nil
	}
	// idf per phrase, computed by SQLite's ln() (the libm log bm25() uses)
	// over the phrase's table-wide row count, as bm25() counts it.
	idf := make([]float64, len(words))
	byTok := make(map[string]float64, len(words))
	for i, w := range words {
		if v, ok := byTok[single[i]]; ok {
			idf[i] = v
			continue
		}
		var v float64
		if err := tx.QueryRowContext(ctx, `SELECT ln((CAST(? - n AS REAL) + 0.5) / (CAST(n AS REAL) + 0.5)) FROM
	(SELECT count(*) AS n FROM `+sp.fts+` WHERE `+sp.fts+` MATCH ?)`, nRow, `"`+w+`"`).Scan(&v); err != nil {
			return nil, false, fmt.Errorf("full-text idf: %w", err)
		}
		if v <= 0 {
			v = 1e-6
		}
		idf[i], byTok[single[i]] = v, v
	}
	avgdl := float64(nTok) / float64(nRow)
	return x.rank(f, single, idf, avgdl, k), true, nil
}

// ftsTotals reads the FTS5 table's row count and total token count (all
// columns) from its averages record, as bm25() does.
func ftsTotals(ctx context.Context, tx *sql.Tx, sp spec) (nRow, nTok int64, err error) {
	var blk []byte
	err = tx.QueryRowContext(ctx, `SELECT block FROM `+sp.fts+`_data WHERE id = 1`).Scan(&blk)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("full-text totals: %w", err)
	}
	if len(blk) == 0 {
		return 0, 0, nil // an empty table
	}
	v, n := getVarint(blk)
	if n == 0 {
		return 0, 0, fmt.Errorf("full-text totals: bad averages record")
	}
	nRow = int64(v)
	blk = blk[n:]
	// As sqlite3Fts5IndexGetAverages: a total per column, while there are
	// bytes.
	for range ftsColumnCount(sp.kind) {
		if len(blk) == 0 {
			break
		}
		v, n := getVarint(blk)
		if n == 0 {
			return 0, 0, fmt.Errorf("full-text totals: bad averages record")
		}
		nTok += int64(v)
		blk = blk[n:]
	}
	return nRow, nTok, nil
}

// getVarint decodes an SQLite varint (big-endian groups of 7 bits, the
// ninth byte whole), returning its value and length, or 0 bytes if b is
// truncated.
func getVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return v, 9
}
