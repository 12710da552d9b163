package sqlite

import (
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
// table with the same tokenizer (the constant tokenize), on the connection of the
// current transaction, and read back with fts5vocab. A query word of
// several tokens is a phrase to FTS5: its occurrences are found by
// tokenizing, with positions, the documents holding all its tokens.

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
