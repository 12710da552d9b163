package sqlite

import (
	"cmp"
	"slices"

	"modernc.org/libc"

	"github.com/agentmemory/agentmemory/internal/topk"
	"github.com/agentmemory/agentmemory/store/driver"
)

// BM25 constants of FTS5's bm25().
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

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
func (x *textIndex) rank(sc *scores, f *filter, ph []phrase, k int) (_ []driver.Scored, skipped bool) {
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
		h.Offer(driver.Scored{ID: d.row.id, Score: sc.s[slot]})
	}
	return h.Sorted(), false
}

// rankSkipping is rank without walking the floored phrases, or ok false
// when that cannot give the full computation's result.
func (x *textIndex) rankSkipping(sc *scores, f *filter, ph []phrase, idf []float64, isFloored []bool, avgdl float64, floored, k int) (_ []driver.Scored, ok bool) {
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
		h.Offer(driver.Scored{ID: d.row.id, Score: s})
	}
	return h.Sorted(), true
}
