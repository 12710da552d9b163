package sqlite

import (
	"math"

	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/internal/dot"
)

// Exact threshold pruning of the vector scans. A leg keeps a candidate only
// if its cosine reaches a cut-off: the search's MinSimilarity, or, once
// the leg's heap holds its k candidates, the worst of them (a candidate
// scoring below it can never enter). The dot product q·v is computed in
// pruneBlocks blocks of dimensions, and after blocks 0..i−1 Cauchy–Schwarz
// bounds what the remaining ones can add:
//
//	q·v = q[:e]·v[:e] + q[e:]·v[e:] ≤ q[:e]·v[:e] + ‖q[e:]‖·‖v[e:]‖,
//
// so a candidate whose bound, over ‖q‖·‖v‖, is below the cut-off by more
// than the float32 rounding of the computed quantities (pruneSlack) is
// abandoned. Nothing else changes: a candidate that is not abandoned is
// scored by the same arithmetic as embed.Dot (the same lanes of a
// dot.Acc, continued across the blocks, TestPrunedDotIsDot), so scores,
// threshold, ties and order are bit for bit those of the unpruned scan
// (TestPruningExact).
//
// Each vector keeps the norms of its suffixes v[e₁:], v[e₂:], v[e₃:]
// (tails, 12 bytes a vector), computed when it is put; a query computes
// its own once per search.

// pruneBlocks is the number of blocks of a pruned dot product; a
// candidate is checked after each block but the last.
const pruneBlocks = 4

// tails are the norms of a vector's suffixes from each block boundary.
type tails [pruneBlocks - 1]float32

// blockEnds returns the boundaries e₁ ≤ e₂ ≤ e₃ of a d-dimensional
// vector's blocks: multiples of dot.Lanes, so that every component keeps
// the lane it has in one embed.Dot over the whole vectors, and never past
// d.
func blockEnds(d int) [pruneBlocks - 1]int {
	size := ((d+pruneBlocks-1)/pruneBlocks + dot.Lanes - 1) &^ (dot.Lanes - 1)
	var e [pruneBlocks - 1]int
	for i := range e {
		e[i] = min((i+1)*size, d&^(dot.Lanes-1))
	}
	return e
}

// suffixNorms returns v's tails, accumulated in float64 from the end.
func suffixNorms(v []float32) tails {
	var t tails
	ends := blockEnds(len(v))
	var sum float64
	hi := len(v)
	for i := len(ends) - 1; i >= 0; i-- {
		for _, x := range v[ends[i]:hi] {
			sum += float64(x) * float64(x)
		}
		hi = ends[i]
		t[i] = float32(math.Sqrt(sum))
	}
	return t
}

// pruneSlack is the margin, in units of cosine, by which a bound must miss
// the cut-off before a candidate is abandoned. It exceeds the rounding
// error of everything compared: a float32 dot product of d terms in 32
// lanes summed pairwise is within about (d/32+6)·2⁻²⁴·‖q‖·‖v‖ of the real
// one, and so is its partial sum; the norms and the cut-off's products are
// within a few ulps. (d/8+16)·2⁻²¹ is well over four times their sum
// (3·10⁻⁵ for 384 dimensions), and costs nothing measurable in pruning.
func pruneSlack(d int) float32 {
	return float32(d/8+16) * 0x1p-21
}

// pruner holds a query's blocks for pruned dot products against vectors
// of its length.
type pruner struct {
	ends  [pruneBlocks - 1]int
	tails tails
	slack float32
	qn    float32
}

func newPruner(query []float32, qn float32) pruner {
	return pruner{ends: blockEnds(len(query)), tails: suffixNorms(query), slack: pruneSlack(len(query)), qn: qn}
}

// pruneMinCut is the lowest cut-off that pruning is tried for. Below it
// the bound almost never prunes (on random 384-d vectors the partial sums
// stay far below ‖q_rest‖·‖v_rest‖, and a leg's worst is about 0.1), and
// the checks would cost about 5% of each dot product for nothing.
const pruneMinCut = 0.2

// limit returns the value that the partial dot product plus its bound must
// reach for a vector of norm n not to be abandoned under cut-off cut (a
// cosine), or −Inf when nothing is to be abandoned: a cut-off below
// pruneMinCut, or norms so large or small that float32 rounding is no
// longer relative.
func (p *pruner) limit(cut float64, n float32) float32 {
	nq := n * p.qn
	if !(nq >= 1e-30 && nq <= 1e30) || cut < pruneMinCut {
		return float32(math.Inf(-1))
	}
	return (float32(cut) - p.slack) * nq
}

// dot returns q·v computed exactly as embed.Dot(q, v) and true, or false
// as soon as the partial sum plus the Cauchy–Schwarz bound of the
// remaining blocks is below lim. q has the pruner's length, v the same,
// and vt are v's tails.
func (p *pruner) dot(q, v []float32, vt *tails, lim float32) (float32, bool) {
	if math.IsInf(float64(lim), -1) {
		return embed.Dot(q, v), true
	}
	if len(q) != len(v) {
		panic("sqlite: pruned dot product of vectors of different lengths")
	}
	var acc dot.Acc
	lo := 0
	for b, hi := range p.ends {
		acc.Add(q[lo:hi], v[lo:hi])
		lo = hi
		if acc.Sum()+p.tails[b]*vt[b] < lim {
			return 0, false
		}
	}
	acc.Add(q[lo:], v[lo:])
	return acc.Sum(), true
}
