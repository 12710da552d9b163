package sqlite

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/dot"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

func TestEncodeInt8(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range []int{1, 7, 64, 100, 384} {
		v := make([]float32, d)
		for i := range v {
			v[i] = float32(math.Tanh(rng.NormFloat64())) // |v[i]| < 1
			if i%3 == 1 {
				v[i] = 0 // sparse components code as 0
			}
		}
		v[0] = 2 // the largest magnitude codes as 127
		code := make([]int8, d)
		m := encodeInt8(v, embed.Norm(v), code)
		n := float64(embed.Norm(v))
		assert.InDelta(t, 2.0/127/n, m.factor, 1e-6, "d=%d", d)
		assert.Equal(t, int8(127), code[0], "d=%d", d)
		var r float64
		for i, x := range v {
			if x == 0 {
				assert.Zero(t, code[i])
			}
			e := float64(x) - float64(float32(2)/127)*float64(code[i])
			assert.LessOrEqual(t, math.Abs(e), 1.0/127*(1+1e-6), "d=%d i=%d: rounded to nearest", d, i)
			r += e * e
		}
		assert.GreaterOrEqual(t, float64(m.resid), math.Sqrt(r)/n, "d=%d: residual rounded up", d)
		assert.InDelta(t, math.Sqrt(r)/n, m.resid, 1e-6, "d=%d", d)
	}
	code := []int8{5, 5}
	assert.Zero(t, encodeInt8([]float32{0, 0}, 0, code), "zero vector")
	assert.Equal(t, []int8{0, 0}, code)
	assert.Equal(t, codeMeta{always: true}, encodeInt8([]float32{1, float32(math.Inf(1))}, float32(math.Inf(1)), code), "infinite component: ranked exactly")
	assert.Equal(t, codeMeta{always: true}, encodeInt8([]float32{1e-20, 0}, 1e-20, code), "tiny: ranked exactly")
	assert.Equal(t, codeMeta{always: true}, encodeInt8([]float32{1e20, 0}, 1e20, code), "huge: ranked exactly")
	var qc queryCode
	assert.False(t, qc.encode([]float32{0, 0}, 0))
	assert.False(t, qc.encode([]float32{1e-20, 0}, 1e-20))
	assert.True(t, qc.encode([]float32{0, -3}, 3))
	assert.Equal(t, []int8{0, -127}, qc.d)
}

// boundedSet puts vectors into a coded set of dimension d and returns it
// with a function that checks the bound of every row against the exact
// scan's similarity for a query.
func boundedSet(t *testing.T, vs [][]float32) (*vecSet, func(q []float32)) {
	t.Helper()
	s := newVecSet(1, len(vs)).withCodes()
	for i, v := range vs {
		r := vecRow{id: fmt.Sprintf("r%04d", i)}
		r.setVectors(v, nil)
		s.put(r)
	}
	return s, func(q []float32) {
		t.Helper()
		var qc queryCode
		qn := embed.Norm(q)
		if !qc.encode(q, qn) {
			return
		}
		slack := float64(boundSlack(len(q)))
		for i := range s.rows {
			r := &s.rows[i]
			m := s.meta[0][i]
			if m.factor == 0 || m.always {
				continue
			}
			lo, hi := qc.bounds(1/float64(qn), slack).interval(m, dot.Int8(qc.d, s.codes[0][i*s.dim:(i+1)*s.dim]))
			sim := float64(embed.Dot(q, r.vecs[0]) / (r.norms[0] * qn))
			if math.IsInf(sim, 0) || math.IsNaN(sim) || r.norms[0] == 0 || math.IsInf(float64(r.norms[0]), 0) {
				continue // the exact scan has no finite similarity to bound either
			}
			if !(lo <= sim && sim <= hi) {
				t.Fatalf("row %d: similarity %v outside its bound [%v, %v]", i, sim, lo, hi)
			}
		}
	}
}

// TestBoundHoldsSimilarity checks the pre-filter's interval against the
// exact scan's similarity on dense, sparse, one-hot, wide-ranging and
// near-duplicate vectors.
func TestBoundHoldsSimilarity(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	for _, d := range []int{1, 3, 32, 100, 384} {
		var vs [][]float32
		for i := range 300 {
			v := make([]float32, d)
			for j := range v {
				switch i % 4 {
				case 0: // dense
					v[j] = float32(rng.NormFloat64())
				case 1: // sparse
					if rng.IntN(4) == 0 {
						v[j] = float32(rng.NormFloat64())
					}
				case 2: // wide range of magnitudes
					v[j] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(12)-6)))
				case 3: // one-hot
					if j == i%d {
						v[j] = 1
					}
				}
			}
			vs = append(vs, v)
		}
		_, check := boundedSet(t, vs)
		for qi := range 50 {
			q := slices.Clone(vs[rng.IntN(len(vs))])
			for j := range q {
				if qi%2 == 0 {
					q[j] += float32(rng.NormFloat64()) * 1e-3 // near-duplicate
				} else {
					q[j] = float32(rng.NormFloat64())
				}
			}
			check(q)
		}
	}
}

func FuzzBound(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{8, 7, 6, 5, 4, 3, 2, 1}, uint8(2))
	f.Add(make([]byte, 64), make([]byte, 64), uint8(8))
	f.Fuzz(func(t *testing.T, a, b []byte, dims uint8) {
		d := 1 + int(dims)%16
		floats := func(raw []byte) [][]float32 {
			var out [][]float32
			for len(raw) >= 4*d {
				v := make([]float32, d)
				for j := range v {
					v[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
					if math.IsNaN(float64(v[j])) || math.IsInf(float64(v[j]), 0) {
						v[j] = 0 // the store refuses non-finite vectors
					}
				}
				out = append(out, v)
				raw = raw[4*d:]
			}
			return out
		}
		vs, qs := floats(a), floats(b)
		if len(vs) == 0 {
			return
		}
		_, check := boundedSet(t, vs)
		for _, q := range qs {
			check(q)
		}
	})
}

// checkCodes verifies that every row's codes are those of its vectors.
func checkCodes(t *testing.T, s *vecSet) {
	t.Helper()
	for j := range s.meta {
		require.Len(t, s.meta[j], len(s.rows), "slot %d", j)
		if s.dim > 0 {
			require.Len(t, s.codes[j], len(s.rows)*s.dim, "slot %d", j)
		}
	}
	for i, r := range s.rows {
		for j, v := range r.vecs {
			if s.dim <= 0 || len(v) != s.dim {
				assert.Zero(t, s.meta[j][i], "row %s slot %d", r.id, j)
				continue
			}
			code := make([]int8, s.dim)
			m := encodeInt8(v, embed.Norm(v), code)
			assert.Equal(t, m, s.meta[j][i], "row %s slot %d", r.id, j)
			assert.Equal(t, code, s.codes[j][i*s.dim:(i+1)*s.dim], "row %s slot %d", r.id, j)
		}
	}
}

func TestVecSetCodesFollowRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	vec := func(d int) []float32 {
		v := make([]float32, d)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	s := newVecSet(1, 0).withCodes()
	// Rows without vectors first: the dimension is learnt later.
	for i := range 3 {
		s.put(vecRow{id: fmt.Sprintf("empty%d", i)})
	}
	checkCodes(t, s)
	assert.Zero(t, s.dim)
	before := s.bytes
	for i := range 200 {
		r := vecRow{id: fmt.Sprintf("r%03d", rng.IntN(120))}
		switch i % 5 {
		case 0:
			r.setVectors(vec(70), nil)
		case 1:
			r.setVectors(nil, vec(70))
		case 2:
			r.setVectors(vec(70), vec(69)) // another length: no code
		default:
			r.setVectors(vec(70), vec(70))
		}
		s.put(r)
		if i%3 == 0 {
			s.remove(fmt.Sprintf("r%03d", rng.IntN(120)))
		}
		if i == 0 {
			s.remove("empty1")
		}
	}
	assert.Equal(t, 70, s.dim)
	checkCodes(t, s)
	var rowBytes int64
	for i := range s.rows {
		rowBytes += s.rows[i].size()
	}
	assert.Equal(t, rowBytes+int64(len(s.rows))*2*codeBytes(70), s.bytes, "bytes count the codes")
	for _, r := range slices.Clone(s.rows) {
		s.remove(r.id)
	}
	assert.Zero(t, s.bytes)
	_ = before
}

// TestVecSetPrefilterExact checks that a pre-filtered leg is the exact
// scan's, bit for bit, whatever the filter, threshold, depth and rows
// without a code.
func TestVecSetPrefilterExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	const d = 48
	vec := func() []float32 {
		v := make([]float32, d)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	s := newVecSet(1, 3000).withCodes()
	for i := range 3000 {
		r := vecRow{id: fmt.Sprintf("r%05d", i), session: fmt.Sprintf("s%d", i%9)}
		a, b := vec(), vec()
		switch i % 10 {
		case 0:
			a = nil
		case 1:
			b = make([]float32, d) // zero vector
		case 2:
			b = vec()[:d-1]
		case 3:
			b = slices.Clone(s.rows[len(s.rows)-1].vecs[0]) // duplicates: ties
		case 4:
			for j := range a {
				a[j] *= []float32{1e-18, 1e17}[i%20/10] // no bound: always ranked
			}
		}
		r.setVectors(a, b)
		s.put(r)
	}
	on := prefilter{min: 1}
	for qi := range 40 {
		q := vec()
		switch qi % 10 {
		case 3, 7:
			q = slices.Clone(s.rows[rng.IntN(len(s.rows))].vecs[1]) // a stored vector
		case 9:
			for j := range q {
				q[j] *= 1e-17 // no bound: an exact scan
			}
		}
		f := filter{kind: store.KindInteraction}
		if qi%3 == 0 {
			f.session = "s4"
		}
		minSim := []float64{-1, 0, 0.2, 0.75}[qi%4]
		for _, k := range []int{1, 5, 100, 5000} {
			exact := s.rank(&f, []int{0, 1}, q, k, minSim, prefilter{})
			require.Equal(t, exact, s.rank(&f, []int{0, 1}, q, k, minSim, on), "query %d k %d", qi, k)
			got := s.rank(&f, []int{1, 0}, q, k, minSim, on)
			require.Equal(t, [][]driver.Scored{exact[1], exact[0]}, got, "query %d k %d, slots swapped", qi, k)
		}
	}
	// A query of another length than the set's is ranked exactly (it
	// matches nothing here), and so is a set below min.
	assert.False(t, s.usePrefilter(d-1, on))
	assert.Equal(t, [][]driver.Scored{{}}, s.rank(&filter{kind: store.KindInteraction}, []int{0}, vec()[:10], 5, -1, on))
	assert.True(t, s.usePrefilter(d, on))
	assert.False(t, s.usePrefilter(d, prefilter{min: 3001}))
	assert.False(t, s.usePrefilter(d, prefilter{}))
}

// rankFixture is a coded set of n rows with two vector fields and
// queries for it.
type rankFixture struct {
	set     *vecSet
	queries [][]float32
}

func randomRankFixture(n, queries int) rankFixture {
	rng := rand.New(rand.NewPCG(13, 14))
	vec := func() []float32 {
		v := make([]float32, benchDims)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		embed.Normalize(v)
		return v
	}
	fx := rankFixture{set: newVecSet(1, n).withCodes()}
	for i := range n {
		r := vecRow{id: fmt.Sprintf("r%06d", i)}
		r.setVectors(vec(), vec())
		fx.set.put(r)
	}
	for range queries {
		fx.queries = append(fx.queries, vec())
	}
	return fx
}

// lexicalRankFixture embeds generated sentences with embed/lexical: a
// content of 20–60 words and a summary of 8–15 of them, from a Zipf-
// distributed vocabulary; a query is 12 consecutive words of a document's
// content with a third of them replaced by random words.
func lexicalRankFixture(t testing.TB, n, queries int) rankFixture {
	rng := rand.New(rand.NewPCG(15, 16))
	vocab := benchVocabulary()
	zipf := rand.NewZipf(rng, 1.1, 1, uint64(len(vocab)-1))
	words := func(k int) []string {
		w := make([]string, k)
		for i := range w {
			w[i] = vocab[zipf.Uint64()]
		}
		return w
	}
	contents := make([][]string, n)
	texts := make([]string, 0, 2*n)
	for i := range contents {
		contents[i] = words(20 + rng.IntN(41))
		sum := slices.Clone(contents[i][rng.IntN(10):])
		sum = sum[:min(len(sum), 8+rng.IntN(8))]
		texts = append(texts, strings.Join(contents[i], " "), strings.Join(sum, " "))
	}
	for range queries {
		c := contents[rng.IntN(n)]
		start := rng.IntN(len(c) - 12 + 1)
		q := slices.Clone(c[start : start+12])
		for j := range q {
			if rng.IntN(3) == 0 {
				q[j] = vocab[rng.IntN(len(vocab))]
			}
		}
		texts = append(texts, strings.Join(q, " "))
	}
	e, err := lexical.New(lexical.Config{Dimensions: benchDims})
	require.NoError(t, err)
	vs, err := e.Embed(context.Background(), texts)
	require.NoError(t, err)
	fx := rankFixture{set: newVecSet(1, n).withCodes()}
	for i := range n {
		r := vecRow{id: fmt.Sprintf("r%06d", i)}
		r.setVectors(vs[2*i], vs[2*i+1])
		fx.set.put(r)
	}
	fx.queries = vs[2*n:]
	return fx
}

// shiftedRankFixture returns fx with every cosine c mapped to floor +
// (1 − floor)·c, as internal/affine does (one more dimension): the same
// rankings with the cosines of a real embedding model, text-embedding-3's
// about 0.15–0.5 for floor 0.15.
func shiftedRankFixture(fx rankFixture, floor float64) rankFixture {
	shift := func(v []float32) []float32 {
		if len(v) == 0 {
			return nil
		}
		w := make([]float32, len(v)+1)
		f := float32(math.Sqrt(1-floor)) / embed.Norm(v)
		for i, x := range v {
			w[i] = x * f
		}
		w[len(v)] = float32(math.Sqrt(floor))
		return w
	}
	out := rankFixture{set: newVecSet(1, len(fx.set.rows)).withCodes()}
	for i := range fx.set.rows {
		src := &fx.set.rows[i]
		r := vecRow{id: src.id}
		r.setVectors(shift(src.vecs[0]), shift(src.vecs[1]))
		out.set.put(r)
	}
	for _, q := range fx.queries {
		out.queries = append(out.queries, shift(q))
	}
	return out
}

// TestPrefilterExactOnFixtures compares pre-filtered and exact legs of
// depth 100 (a search with TopK 5) on 10,000 random unit vectors and
// embed/lexical embeddings of generated sentences (2,000 under the race
// detector), at thresholds 0 and 0.3, and logs the share of rows whose
// bound reaches the leg's worst score: about the share ranked exactly.
func TestPrefilterExactOnFixtures(t *testing.T) {
	t.Parallel()
	n, queries := 10_000, 40
	if raceEnabled {
		n, queries = 2_000, 10
	}
	for _, c := range []struct {
		name string
		fx   func() rankFixture
	}{
		{"random", func() rankFixture { return randomRankFixture(n, queries) }},
		{"lexical", func() rankFixture { return lexicalRankFixture(t, n, queries) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx := c.fx()
			f := filter{kind: store.KindInteraction}
			var qc queryCode
			var ranked, total int
			for _, q := range fx.queries {
				for _, minSim := range []float64{0, 0.3} {
					exact := fx.set.rank(&f, []int{0, 1}, q, legDepth, minSim, prefilter{})
					require.Equal(t, exact, fx.set.rank(&f, []int{0, 1}, q, legDepth, minSim, prefilter{min: 1}))
					if minSim != 0 || len(exact[0]) == 0 {
						continue
					}
					require.True(t, qc.encode(q, embed.Norm(q)))
					worst := exact[0][len(exact[0])-1].Score
					for i := range fx.set.rows {
						m, d := fx.set.meta[0][i], fx.set.dim
						if m.factor == 0 || m.always {
							continue
						}
						_, hi := qc.bounds(1/float64(embed.Norm(q)), float64(boundSlack(d))).interval(m, dot.Int8(qc.d, fx.set.codes[0][i*d:(i+1)*d]))
						if hi >= worst {
							ranked++
						}
						total++
					}
				}
			}
			t.Logf("%d rows, %d queries, depth %d: %.1f%% of rows bounded at or above the leg's worst score", n, queries, legDepth, 100*float64(ranked)/float64(total))
		})
	}
}

// BenchmarkVecSetRank times the two vector legs of a search (depth 100) on
// a coded set of 10,000 random or embed/lexical vectors, and lexical ones
// with cosines shifted into text-embedding-3's range (0.15 + 0.85·c): exact
// scans and the pre-filter, with no threshold (-1, direct-mode retrieval's default) and at
// MinSimilarity 0 and 0.75.
func BenchmarkVecSetRank(b *testing.B) {
	const n = 10_000
	f := filter{kind: store.KindInteraction}
	for _, fx := range []struct {
		name string
		fx   func() rankFixture
	}{
		{"random", func() rankFixture { return randomRankFixture(n, 64) }},
		{"lexical", func() rankFixture { return lexicalRankFixture(b, n, 64) }},
		{"lexical-shifted", func() rankFixture { return shiftedRankFixture(lexicalRankFixture(b, n, 64), 0.15) }},
	} {
		x := fx.fx()
		for _, c := range []struct {
			name string
			pf   prefilter
		}{
			{"exact", prefilter{}},
			{"prefilter", prefilter{min: 1}},
		} {
			for _, minSim := range []float64{-1, 0, 0.75} {
				pf := c.pf
				b.Run(fmt.Sprintf("%s/n=%d/%s/min=%v", fx.name, n, c.name, minSim), func(b *testing.B) {
					for i := 0; b.Loop(); i++ {
						x.set.rank(&f, []int{0, 1}, x.queries[i%len(x.queries)], legDepth, minSim, pf)
					}
				})
			}
		}
	}
}

// TestStorePrefilter searches a store whose pre-filter is on from the first
// document (so its codes are built on load and kept in step by cached
// writes) against one with exact scans only: the same hits and scores,
// before and after writes.
func TestStorePrefilter(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	open := func(min int) *Store {
		s, err := Open(ctx, newFile(t), Config{Dimensions: 16, VectorPrefilterMin: min})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	}
	pre, exact := open(1), open(-1)
	rng := rand.New(rand.NewPCG(17, 18))
	vec := func() []float32 {
		v := make([]float32, 16)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	put := func(from, to int) {
		for i := from; i < to; i++ {
			in := &store.Interaction{ID: store.InteractionID("s", i, i), SessionID: "s", FirstTurn: i, LastTurn: i,
				Timestamp: t0(i % 24), Content: fmt.Sprintf("turn %d", i), ContentVector: vec(), Summary: "sum", SummaryVector: vec()}
			if i%4 == 0 {
				in.SummaryVector = nil
			}
			require.NoError(t, pre.PutInteraction(ctx, "u", in))
			require.NoError(t, exact.PutInteraction(ctx, "u", in))
		}
	}
	check := func() {
		for range 5 {
			q := store.SearchRequest{Vector: vec(), TopK: 5}
			a, err := pre.SearchInteractions(ctx, "u", q)
			require.NoError(t, err)
			b, err := exact.SearchInteractions(ctx, "u", q)
			require.NoError(t, err)
			require.Equal(t, len(b), len(a))
			for i := range a {
				assert.Equal(t, b[i].Doc.ID, a[i].Doc.ID)
				assert.Equal(t, b[i].Score, a[i].Score)
			}
		}
	}
	put(1, 30)
	check() // loads the sets
	put(20, 50)
	require.NoError(t, pre.DeleteDocument(ctx, "u", store.KindInteraction, store.InteractionID("s", 3, 3)))
	require.NoError(t, exact.DeleteDocument(ctx, "u", store.KindInteraction, store.InteractionID("s", 3, 3)))
	check() // cached writes
	set := pre.cache.get(cacheKey{"u", store.KindInteraction})
	require.NotNil(t, set)
	assert.True(t, set.coded)
	checkCodes(t, set)
}
