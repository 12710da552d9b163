package sqlite

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/internal/dot"
	"github.com/agentmemory/agentmemory/store"
)

func TestBlockEnds(t *testing.T) {
	assert.Equal(t, [3]int{96, 192, 288}, blockEnds(384))
	assert.Equal(t, [3]int{64, 128, 192}, blockEnds(200))
	assert.Equal(t, [3]int{32, 64, 64}, blockEnds(70))
	assert.Equal(t, [3]int{0, 0, 0}, blockEnds(30))
	for d := range 1200 {
		e := blockEnds(d)
		for i, x := range e {
			assert.Zero(t, x%dot.Lanes, "d=%d", d)
			assert.LessOrEqual(t, x, d, "d=%d", d)
			if i > 0 {
				assert.LessOrEqual(t, e[i-1], x, "d=%d", d)
			}
		}
	}
}

// TestPrunedDotIsDot checks that a pruned dot product that is not
// abandoned is bit for bit embed.Dot, that the tails are the suffixes'
// norms, and that an abandoned one was right to be: its exact cosine is
// below the cut-off.
func TestPrunedDotIsDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	lengths := []int{1, 7, 8, 9, 15, 16, 31, 33, 63, 64, 95, 96, 97, 100, 383, 384, 385, 768, 1000}
	var abandoned, kept int
	for _, d := range lengths {
		for trial := range 200 {
			q, v := make([]float32, d), make([]float32, d)
			for i := range q {
				q[i] = float32(rng.NormFloat64())
				v[i] = float32(rng.NormFloat64())
				switch trial % 4 {
				case 1: // sparse, as embed/lexical
					if rng.IntN(4) != 0 {
						v[i] = 0
					}
				case 2: // close to q: high cosines
					v[i] = q[i] + 0.3*v[i]
				case 3: // all of the weight at the end
					if i < d*3/4 {
						v[i] *= 1e-3
					}
				}
			}
			qn, vn := embed.Norm(q), embed.Norm(v)
			p := newPruner(q, qn)
			vt := suffixNorms(v)
			for i, e := range blockEnds(d) {
				assert.InDelta(t, float64(embed.Norm(v[e:])), float64(vt[i]), 1e-5*float64(vn)+1e-30)
				assert.InDelta(t, float64(embed.Norm(q[e:])), float64(p.tails[i]), 1e-5*float64(qn)+1e-30)
			}
			want := embed.Dot(q, v)
			got, ok := p.dot(q, v, &vt, float32(math.Inf(-1))) // embed.Dot itself
			require.True(t, ok)
			require.Equal(t, math.Float32bits(want), math.Float32bits(got))
			got, ok = p.dot(q, v, &vt, -math.MaxFloat32) // the blocks, never abandoned
			require.True(t, ok)
			require.Equal(t, math.Float32bits(want), math.Float32bits(got), "d=%d trial %d", d, trial)
			cos := float64(want / (vn * qn))
			for _, cut := range []float64{-1, 0, 0.1, 0.3, 0.5, 0.75, 0.9, 1, cos, cos - 1e-7, cos + 1e-7} {
				got, ok := p.dot(q, v, &vt, p.limit(cut, vn))
				if ok {
					kept++
					require.Equal(t, math.Float32bits(want), math.Float32bits(got), "d=%d trial %d cut %v", d, trial, cut)
				} else {
					abandoned++
					require.Less(t, cos, cut, "d=%d trial %d: abandoned a candidate reaching the cut-off", d, trial)
				}
			}
		}
	}
	t.Logf("%d kept, %d abandoned", kept, abandoned)
	assert.Positive(t, abandoned)
	// No pruning where rounding is no longer relative.
	small := newPruner([]float32{1e-20, 0, 0, 0, 0, 0, 0, 0, 0}, 1e-20)
	assert.Equal(t, float32(math.Inf(-1)), small.limit(0.5, 1e-20))
	large := newPruner([]float32{1e20, 0, 0, 0, 0, 0, 0, 0, 0}, 1e20)
	assert.Equal(t, float32(math.Inf(-1)), large.limit(0.5, 1e15))
	assert.Greater(t, large.limit(0.5, 1), float32(0))
}

// pruneFixture is a set of n rows with two vector fields of random or
// embed/lexical vectors, and queries for it: a third of them copies of a
// row's vector with noise of several levels, so that every threshold has
// hits and near-misses, and a tenth of the rows sharing one vector, so
// that equal scores are broken by id.
func pruneFixture(t testing.TB, lexicalVecs bool, n, queries int) rankFixture {
	var fx rankFixture
	if lexicalVecs {
		fx = lexicalRankFixture(t, n, queries)
	} else {
		fx = randomRankFixture(n, queries)
	}
	rng := rand.New(rand.NewPCG(23, 24))
	dup := fx.set.rows[0].vecs[0]
	for i := range fx.set.rows {
		if i%10 == 5 {
			r := fx.set.rows[i]
			r.setVectors(dup, r.vecs[1])
			fx.set.put(r)
		}
	}
	for i := range fx.queries {
		if i%3 != 0 {
			continue
		}
		r := &fx.set.rows[rng.IntN(n)]
		src := r.vecs[rng.IntN(2)]
		noise := []float64{0, 0.01, 0.03, 0.06, 0.1}[i/3%5]
		q := make([]float32, len(src))
		for j := range q {
			q[j] = src[j] + float32(noise*rng.NormFloat64())
		}
		fx.queries[i] = q
	}
	return fx
}

// TestPruningExact compares the vector legs with and without threshold
// pruning, exact scans and pre-filtered legs alike, on random and
// embed/lexical vectors, thresholds 0, 0.3 and 0.75 and depths 5 and 100:
// the same ids, order and scores, bit for bit.
func TestPruningExact(t *testing.T) {
	n, queries := 3_000, 60
	if raceEnabled {
		n, queries = 500, 12
	}
	pool := prefilter{min: 1}
	for _, lex := range []bool{false, true} {
		fx := pruneFixture(t, lex, n, queries)
		name := map[bool]string{false: "random", true: "lexical"}[lex]
		t.Run(name, func(t *testing.T) {
			hits := map[float64]int{}
			f := filter{kind: store.KindInteraction}
			for qi, q := range fx.queries {
				for _, minSim := range []float64{0, 0.3, 0.75} {
					for _, k := range []int{5, 100} {
						for _, pf := range []prefilter{{}, pool} {
							un := pf
							un.exhaustive = true
							want := fx.set.rank(&f, []int{0, 1}, q, k, minSim, un)
							got := fx.set.rank(&f, []int{0, 1}, q, k, minSim, pf)
							require.Equal(t, want, got, "query %d minSim %v k %d pool %v", qi, minSim, k, pf.on())
							if !pf.on() && k == 100 {
								hits[minSim] += len(got[0]) + len(got[1])
							}
						}
					}
				}
			}
			t.Logf("%s: %d rows, %d queries, leg hits (depth 100) by threshold: %v", name, n, len(fx.queries), hits)
			assert.Positive(t, hits[0.75], "the fixture has hits at 0.75")
		})
	}
}

// TestPruningTies ranks many equal vectors and vectors a rounding error
// apart, whose order is decided by id once the heap is full: pruning
// against the heap's worst score keeps VectorRanker's order.
func TestPruningTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	const d = 384
	base := make([]float32, d)
	for i := range base {
		base[i] = float32(rng.NormFloat64())
	}
	s := newVecSet(1, 600)
	for i := range 600 {
		v := base
		switch i % 3 {
		case 1: // one component one ulp away
			v = append([]float32(nil), base...)
			j := rng.IntN(d)
			v[j] = math.Nextafter32(v[j], float32(math.Inf(1)))
		case 2: // unrelated
			v = make([]float32, d)
			for j := range v {
				v[j] = float32(rng.NormFloat64())
			}
		}
		r := vecRow{id: fmt.Sprintf("r%04d", rng.IntN(10000))}
		r.setVectors(v, nil)
		s.put(r)
	}
	f := filter{kind: store.KindInteraction}
	for _, q := range [][]float32{base, s.rows[1].vecs[0], s.rows[2].vecs[0]} {
		for _, minSim := range []float64{-1, 0, 0.75, 0.999} {
			for _, k := range []int{1, 5, 100, 1000} {
				ref := store.NewVectorRanker(q, k, minSim)
				for i := range s.rows {
					ref.Add(s.rows[i].id, s.rows[i].vecs[0], s.rows[i].norms[0])
				}
				want := ref.Result()
				if len(want) == 0 {
					want = []store.Scored{}
				}
				got := s.rank(&f, []int{0}, q, k, minSim, prefilter{})
				require.Equal(t, want, got[0], "minSim %v k %d", minSim, k)
			}
		}
	}
}
