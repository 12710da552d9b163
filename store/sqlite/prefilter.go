package sqlite

import (
	"encoding/binary"
	"math"
	"math/bits"
	"sync"

	"github.com/agentmemory/agentmemory/store"
)

// The vector pre-filter. A cached set keeps, next to each vector v, a
// ternary code t (tᵢ = +1 when vᵢ > τ, −1 when vᵢ < −τ, else 0, with
// τ = 0.75·‖v‖/√d) as two bit planes, and a factor α/‖v‖ where
// α = Σ|vᵢ|/#{tᵢ ≠ 0} over the coded components (α·t is the closest
// multiple of t to v). Then
//
//	factor(v) · Σᵢ qᵢ·tᵢ ≈ q·v/‖v‖,
//
// an estimate of the cosine up to the query's norm. A plain sign code
// (1 bit, no zero) was measured first: it correlates about 0.8 with the
// cosine on random vectors, but on the sparse vectors of embed/lexical (a
// quarter of the components non-zero) it codes every zero as −1 and its
// recall collapses (a leg's top 5 found 28% of the time in a pool of 2%);
// the zero level fixes that and helps dense vectors too.
//
// The sum is computed with a table built once per query: for every byte
// position b and byte value c, the sum of the qᵢ of byte b's components
// whose bit is set in c, so Σᵢ qᵢ·tᵢ = Σ_b T[b][pos_b] − T[b][neg_b]: 96
// table reads for 384 dimensions (about 25 ns, against 125–260 ns for an
// exact float32 dot product, and 100 bytes of memory traffic against
// 1,536). The pool of the best estimates is then ranked exactly.

// codeBytes is the length of one bit plane of a d-dimensional vector: d
// bits rounded up to whole 64-bit words. A code is two planes, positive
// then negative.
func codeBytes(d int) int { return (d + 63) / 64 * 8 }

// ternaryThreshold is τ in units of the vector's root mean square.
const ternaryThreshold = 0.75

// encodeTernary writes v's code into code (2·codeBytes(len(v)) bytes,
// zeroed by the caller) and returns its factor, 0 for a zero vector.
func encodeTernary(v []float32, norm float32, code []byte) float32 {
	if norm == 0 {
		return 0
	}
	pos, neg := code[:len(code)/2], code[len(code)/2:]
	tau := float32(ternaryThreshold * float64(norm) / math.Sqrt(float64(len(v))))
	var sum float64
	var n int
	for i, x := range v {
		switch {
		case x > tau:
			pos[i>>3] |= 1 << (i & 7)
			sum += float64(x)
			n++
		case x < -tau:
			neg[i>>3] |= 1 << (i & 7)
			sum -= float64(x)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return float32(sum / float64(n) / float64(norm))
}

// buildLUT fills lut (codeBytes(len(q))*256 entries) for query q: entry
// b*256+c is the sum of q[8b+j] over the bits j set in c. Components past
// len(q) count as 0.
func buildLUT(q []float32, lut []float32) {
	nb := len(lut) / 256
	for b := range nb {
		var comp [8]float32
		for j := range 8 {
			if i := 8*b + j; i < len(q) {
				comp[j] = q[i]
			}
		}
		t := lut[b*256 : b*256+256 : b*256+256]
		t[0] = 0
		for c := 1; c < 256; c++ {
			t[c] = t[c&(c-1)] + comp[bits.TrailingZeros8(uint8(c))]
		}
	}
}

// scanCode returns Σᵢ qᵢ·tᵢ for one code through the query's table. Code
// bytes are read a 64-bit word at a time.
func scanCode(lut []float32, code []byte) float32 {
	half := len(code) / 2
	pos, neg := code[:half:half], code[half:]
	var s0, s1, s2, s3 float32
	for len(pos) >= 8 && len(neg) >= 8 && len(lut) >= 8*256 {
		p := binary.LittleEndian.Uint64(pos)
		n := binary.LittleEndian.Uint64(neg)
		t := lut[: 8*256 : 8*256]
		s0 += t[0*256+int(p&255)] - t[0*256+int(n&255)]
		s1 += t[1*256+int(p>>8&255)] - t[1*256+int(n>>8&255)]
		s2 += t[2*256+int(p>>16&255)] - t[2*256+int(n>>16&255)]
		s3 += t[3*256+int(p>>24&255)] - t[3*256+int(n>>24&255)]
		s0 += t[4*256+int(p>>32&255)] - t[4*256+int(n>>32&255)]
		s1 += t[5*256+int(p>>40&255)] - t[5*256+int(n>>40&255)]
		s2 += t[6*256+int(p>>48&255)] - t[6*256+int(n>>48&255)]
		s3 += t[7*256+int(p>>56)] - t[7*256+int(n>>56)]
		pos, neg, lut = pos[8:], neg[8:], lut[8*256:]
	}
	return (s0 + s1) + (s2 + s3)
}

// prefilter says when and how widely a vector leg is pre-filtered.
type prefilter struct {
	// min is the number of rows from which a set is pre-filtered; <= 0
	// turns the pre-filter off.
	min int
	// The pool of a leg of depth k over n candidate vectors is
	// max(perResult·k, ⌈fraction·n⌉, floor) vectors.
	perResult int
	fraction  float64
	floor     int
	// exhaustive turns threshold pruning (prune.go) off: tests and
	// benchmarks compare the two.
	exhaustive bool
}

func (p prefilter) on() bool { return p.min > 0 }

func (p prefilter) pool(k, n int) int {
	return max(p.perResult*k, int(math.Ceil(p.fraction*float64(n))), p.floor)
}

// scratch is a search's pre-filter working memory, reused across searches.
type scratch struct {
	lut  []float32
	rows []int32   // matching rows with the query's length
	est  []float32 // their estimates, for one slot
	sel  []float32 // a copy of est for selection
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// grow returns s[:n], reallocated when too small.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// rankPrefiltered is rank through the ternary codes: per slot, estimate every
// matching row's similarity, keep the pool of the best estimates and rank
// it exactly. The caller has checked that the set is coded, the query has
// the set's dimension and qn > 0.
func (s *vecSet) rankPrefiltered(f *filter, slots []int, query []float32, qn float32, k int, minSim float64, pf prefilter) [][]store.Scored {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	stride := 2 * codeBytes(s.dim)
	sc.lut = grow(sc.lut, codeBytes(s.dim)*256)
	buildLUT(query, sc.lut)
	sc.rows = sc.rows[:0]
	for i := range s.rows {
		if f.match(&s.rows[i]) {
			sc.rows = append(sc.rows, int32(i))
		}
	}
	legs := make([][]store.Scored, len(slots))
	p := newPruner(query, qn)
	for j, slot := range slots {
		codes, factors := s.codes[slot], s.factors[slot]
		sc.est = grow(sc.est, len(sc.rows))
		n := 0 // rows with a code in this slot
		for x, i := range sc.rows {
			fa := factors[i]
			if fa == 0 {
				sc.est[x] = float32(math.Inf(-1))
				continue
			}
			n++
			sc.est[x] = fa * scanCode(sc.lut, codes[int(i)*stride:int(i+1)*stride])
		}
		thr := float32(math.Inf(-1)) // every coded row is a candidate
		if p := pf.pool(k, n); p < n {
			sc.sel = append(sc.sel[:0], sc.est...)
			thr = nthLargest(sc.sel, p)
		}
		h := make(scoredMinHeap, 0, k+1)
		cut := minSim // the leg's cut-off (prune.go)
		for x, i := range sc.rows {
			e := sc.est[x]
			if e < thr || factors[i] == 0 {
				continue
			}
			r := &s.rows[i]
			n := r.norms[slot]
			lim := float32(math.Inf(-1))
			if !pf.exhaustive {
				lim = p.limit(cut, n)
			}
			d, ok := p.dot(query, r.vecs[slot], &r.tails[slot], lim)
			if !ok {
				continue
			}
			sim := float64(d / (n * qn))
			if sim < minSim {
				continue
			}
			h.offer(store.Scored{ID: r.id, Score: sim}, k)
			if len(h) == k {
				cut = max(minSim, h[0].Score)
			}
		}
		legs[j] = h.sorted()
		if legs[j] == nil {
			legs[j] = []store.Scored{}
		}
	}
	return legs
}

// nthLargest returns the p-th largest value of a (1 ≤ p ≤ len(a)),
// reordering a: a quickselect with three-way partitions, so that equal
// values (and NaNs, equal to everything here) end it.
func nthLargest(a []float32, p int) float32 {
	lo, hi := 0, len(a) // the answer is within a[lo:hi], at index p-1
	p--
	for hi-lo > 1 {
		m := lo + (hi-lo)/2
		// Median of three as the pivot.
		x, y, z := a[lo], a[m], a[hi-1]
		if x > y {
			x, y = y, x
		}
		if y > z {
			y = z
		}
		if x > y {
			y = x
		}
		pivot := y
		// Partition a[lo:hi] into > pivot, == pivot, < pivot.
		gt, i, lt := lo, lo, hi
		for i < lt {
			switch v := a[i]; {
			case v > pivot:
				a[gt], a[i] = a[i], a[gt]
				gt++
				i++
			case v < pivot:
				lt--
				a[lt], a[i] = a[i], a[lt]
			default:
				i++
			}
		}
		switch {
		case p < gt:
			hi = gt
		case p >= lt:
			lo = lt
		default:
			return pivot
		}
	}
	return a[lo]
}
