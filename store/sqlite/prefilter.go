package sqlite

import (
	"cmp"
	"math"
	"slices"
	"sync"

	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/internal/dot"
	"github.com/agentmemory/agentmemory/internal/topk"
	"github.com/agentmemory/agentmemory/store/driver"
)

// The vector pre-filter: exact top k through int8 codes.
//
// A coded set keeps, next to each vector v of the set's dimension, an int8
// code c (cᵢ = round(vᵢ/s), s = max|vᵢ|/127, so |cᵢ| ≤ 127), its scale s
// and the norm r of its residual v − s·c. A query q is coded the same way:
// d, s_q and the residual f = q − s_q·d. Then, exactly,
//
//	q·v = s_q·s·(d·c) + s_q·d·(v − s·c) + f·v,
//
// and by Cauchy–Schwarz
//
//	|q·v − s_q·s·(d·c)| ≤ s_q·‖d‖·r + ‖f‖·‖v‖.
//
// d·c is integer arithmetic (dot.Int8: 384 bytes read for 384 dimensions
// against 1,536 for the float32 vector, about 17 ns), so each row gets an
// interval that holds its similarity, widened by the float32 rounding of
// the exact dot product (boundSlack). A row whose interval lies below the
// threshold, or below the k-th largest lower end of all the rows', cannot
// be among the leg's k best; only the others are ranked exactly, by the
// exact scan's own arithmetic. The result is the exact scan's, scores,
// order and ties bit for bit (TestVecSetPrefilterExact): the codes decide
// only how much work it takes. On random 384-d unit vectors the interval
// is about ±0.015 wide, and a leg of depth 100 ranks about 2% of 10,000
// rows exactly.
//
// The slack covers float32 rounding relative to ‖q‖·‖v‖, which holds while
// products neither overflow nor fall into subnormals: so a vector whose
// norm is outside [codeMinNorm, codeMaxNorm] is not bounded but always
// ranked exactly, and a query outside that range ranks every row exactly.

// The norms between which vectors are bounded through their codes.
const (
	codeMinNorm = 1e-15
	codeMaxNorm = 1e15
)

// codeMeta is what a vector's bound needs besides its code, relative to
// its norm so that a scan of the codes reads no row (and the struct stays
// small enough for the compiler to keep in registers). The zero value
// marks a vector the exact scan skips too (absent, of another length, or
// zero); always one it ranks but that has no bound.
type codeMeta struct {
	factor float32 // s/‖v‖ (its rounding is within the slack)
	resid  float32 // ‖v − s·c‖/‖v‖, rounded up
	always bool
}

// codable reports whether a vector or query of norm n is bounded through
// codes.
func codable(n float32) bool { return n >= codeMinNorm && n <= codeMaxNorm }

// encodeInt8 writes v's code into code (len(v) bytes) and returns its
// meta, norm being ‖v‖ as the row has it.
func encodeInt8(v []float32, norm float32, code []int8) codeMeta {
	clear(code)
	switch {
	case norm == 0:
		return codeMeta{}
	case !codable(norm):
		return codeMeta{always: true}
	}
	var m float32
	for _, x := range v {
		m = max(m, x, -x)
	}
	s := m / 127
	var r float64
	for i, x := range v {
		c := max(-127, min(127, math.Round(float64(x)/float64(s))))
		code[i] = int8(c)
		e := float64(x) - float64(s)*c
		r += e * e
	}
	return codeMeta{factor: float32(float64(s) / float64(norm)), resid: roundUp(math.Sqrt(r) / float64(norm))}
}

// roundUp returns x as a float32 no smaller than x.
func roundUp(x float64) float32 {
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// queryCode is a query's code and the quantities of its bound.
type queryCode struct {
	d     []int8
	scale float64 // s_q
	dn    float64 // ‖d‖
	fn    float64 // ‖f‖
}

// encode codes q, of norm qn, into qc (reusing qc.d) and reports whether
// it is bounded through codes.
func (qc *queryCode) encode(q []float32, qn float32) bool {
	if !codable(qn) {
		return false
	}
	qc.d = grow(qc.d, len(q))
	var m float32
	for _, x := range q {
		m = max(m, x, -x)
	}
	s := float64(m) / 127
	var dn, fn float64
	for i, x := range q {
		c := max(-127, min(127, math.Round(float64(x)/s)))
		qc.d[i] = int8(c)
		dn += c * c
		f := float64(x) - s*c
		fn += f * f
	}
	// ‖f‖ is used against ‖v‖·(1/‖v‖) computed in float32: 1e-6 more
	// covers that and its own rounding.
	qc.scale, qc.dn, qc.fn = s, math.Sqrt(dn), math.Sqrt(fn)*(1+1e-6)
	return true
}

// prefilter says when vector legs go through the codes.
type prefilter struct {
	// min is the number of rows from which a set is coded and its legs
	// pre-filtered; <= 0 turns the pre-filter off.
	min int
}

func (p prefilter) on() bool { return p.min > 0 }

// scratch is a search's pre-filter working memory, reused across searches.
type scratch struct {
	qc    queryCode
	rows  []int32             // matching rows
	ints  []int32             // their codes' dot products with the query's, for one slot
	hi    []float64           // their similarities' upper bounds
	sel   *topk.Heap[float64] // the k largest lower bounds
	cands []int32             // the rows (indices into rows) to rank exactly
}

var scratchPool = sync.Pool{New: func() any { return &scratch{sel: topk.New(0, lessFloat)} }}

// grow returns s[:n], reallocated when too small.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// queryBounds are a query's constant factors of its similarity bounds.
type queryBounds struct{ est, resid, base float64 }

// bounds returns the factors of a query of code qc and norm 1/qinv; slack
// is boundSlack of the dimension.
func (qc *queryCode) bounds(qinv, slack float64) queryBounds {
	return queryBounds{est: qc.scale * qinv, resid: qc.scale * qc.dn * qinv, base: qc.fn*qinv + slack}
}

// interval returns the bounds [lo, hi] of the similarity, as the exact
// scan computes it, to a vector of meta m whose code's dot product with
// the query's is ip. In units of ‖q‖·‖v‖, the estimate is s_q·s·(d·c) and
// the bound s_q·‖d‖·r + ‖f‖·‖v‖ (see the top of the file).
func (qb queryBounds) interval(m codeMeta, ip int32) (lo, hi float64) {
	est := qb.est * float64(m.factor) * float64(ip)
	b := qb.resid*float64(m.resid) + qb.base
	return est - b, est + b
}

// rankPrefiltered is rank through the codes: per slot, bound every
// matching row's similarity, and rank exactly the rows whose bound does
// not rule them out. The caller has checked that the
// set is coded, the query has the set's dimension and qn > 0.
func (s *vecSet) rankPrefiltered(f *filter, slots []int, query []float32, qn float32, k int, minSim float64, pf prefilter) [][]driver.Scored {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	if !sc.qc.encode(query, qn) {
		return s.rankExact(f, slots, query, qn, k, minSim)
	}
	sc.rows = sc.rows[:0]
	all := f.all()
	for i := range s.rows {
		if all || f.match(&s.rows[i]) {
			sc.rows = append(sc.rows, int32(i))
		}
	}
	n := len(sc.rows)
	sc.ints, sc.hi = grow(sc.ints, n), grow(sc.hi, n)
	slack := float64(boundSlack(s.dim))
	legs := make([][]driver.Scored, len(slots))
	for j, slot := range slots {
		codes, meta := s.codes[slot], s.meta[slot]
		if all {
			dot.Int8Rows(sc.qc.d, codes[:len(s.rows)*s.dim], sc.ints)
		} else {
			for x, i := range sc.rows {
				sc.ints[x] = dot.Int8(sc.qc.d, codes[int(i)*s.dim:int(i+1)*s.dim])
			}
		}
		// No row below the threshold, nor below the k-th largest lower
		// bound (tau, kept with a min-heap of the k largest), can be among
		// the k best.
		sc.sel.Reset(k)
		qb := sc.qc.bounds(1/float64(qn), slack)
		for x, i := range sc.rows {
			m := meta[i]
			switch {
			case m.always:
				sc.hi[x] = math.Inf(1)
				continue
			case m.factor == 0:
				sc.hi[x] = math.Inf(-1)
				continue
			}
			lo, hi := qb.interval(m, sc.ints[x])
			sc.hi[x] = hi
			if hi < minSim {
				continue
			}
			// Most rows fall below the cut-off: compare inline before
			// offering.
			if !sc.sel.Full() || lo > sc.sel.Min() {
				sc.sel.Offer(lo)
			}
		}
		tau := math.Inf(-1)
		if sc.sel.Full() {
			tau = sc.sel.Min()
		}
		cut := max(minSim, tau)
		// The candidates in decreasing order of their upper bounds: the
		// heap fills with the likely best first, its cut-off rises to
		// about the leg's worst at once, and the scan ends at the first
		// upper bound below it.
		sc.cands = sc.cands[:0]
		for x := range sc.rows {
			if sc.hi[x] >= cut {
				sc.cands = append(sc.cands, int32(x))
			}
		}
		slices.SortFunc(sc.cands, func(a, b int32) int { return cmp.Compare(sc.hi[b], sc.hi[a]) })
		h := newTop(k)
		for _, x := range sc.cands {
			if sc.hi[x] < cut {
				break
			}
			r := &s.rows[sc.rows[x]]
			n := r.norms[slot]
			sim := float64(embed.Dot(query, r.vecs[slot]) / (n * qn))
			if sim < minSim {
				continue
			}
			h.Offer(driver.Scored{ID: r.id, Score: sim})
			if h.Full() {
				cut = max(cut, h.Min().Score)
			}
		}
		legs[j] = h.Sorted()
		if legs[j] == nil {
			legs[j] = []driver.Scored{}
		}
	}
	return legs
}

// boundSlack is the margin, in units of cosine, by which a similarity's
// interval is widened for the float32 rounding of the exact dot product
// the scan computes: a float32 dot product of d terms in 32 lanes summed
// pairwise is within about (d/32+6)·2⁻²⁴·‖q‖·‖v‖ of the real one, and the
// norms and products within a few ulps; (d/8+16)·2⁻²¹ is well over four
// times their sum (3·10⁻⁵ for 384 dimensions).
func boundSlack(d int) float32 {
	return float32(d/8+16) * 0x1p-21
}
