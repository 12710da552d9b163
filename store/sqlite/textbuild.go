package sqlite

import (
	"fmt"
	"math"
)

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
