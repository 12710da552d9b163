package sqlite

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/store"
)

func TestScanCodeIsTernaryDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range []int{1, 7, 64, 100, 384} {
		q, v := make([]float32, d), make([]float32, d)
		for i := range q {
			q[i], v[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			if i%3 == 1 {
				v[i] = 0 // sparse components code as 0
			}
		}
		if d == 1 {
			v[0] = 1
		}
		norm := embed.Norm(v)
		tau := ternaryThreshold * float64(norm) / math.Sqrt(float64(d))
		code := make([]byte, 2*codeBytes(d))
		fa := encodeTernary(v, norm, code)
		var want, sum float64
		var n int
		for i, x := range v {
			switch {
			case float64(x) > tau:
				want += float64(q[i])
				sum += float64(x)
				n++
			case float64(x) < -tau:
				want -= float64(q[i])
				sum -= float64(x)
				n++
			}
		}
		lut := make([]float32, codeBytes(d)*256)
		buildLUT(q, lut)
		assert.InDelta(t, want, scanCode(lut, code), 1e-3, "d=%d", d)
		assert.InDelta(t, sum/float64(n)/float64(norm), fa, 1e-6, "d=%d", d)
	}
	assert.Zero(t, encodeTernary(make([]float32, 8), 0, make([]byte, 16)), "zero vector")
}

func TestNthLargest(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		n := 1 + rng.IntN(200)
		a := make([]float32, n)
		for i := range a {
			if trial%3 == 0 {
				a[i] = float32(rng.IntN(5)) // many ties
			} else {
				a[i] = float32(rng.NormFloat64())
			}
		}
		sorted := slices.Clone(a)
		slices.Sort(sorted)
		p := 1 + rng.IntN(n)
		assert.Equal(t, sorted[n-p], nthLargest(slices.Clone(a), p), "n=%d p=%d", n, p)
	}
	nan := float32(math.NaN())
	_ = nthLargest([]float32{1, nan, 3, nan, 2}, 2) // terminates
}

// checkCodes verifies that every row's codes are those of its vectors.
func checkCodes(t *testing.T, s *vecSet) {
	t.Helper()
	for j := range s.factors {
		require.Len(t, s.factors[j], len(s.rows), "slot %d", j)
		if s.dim > 0 {
			require.Len(t, s.codes[j], len(s.rows)*2*codeBytes(s.dim), "slot %d", j)
		}
	}
	for i, r := range s.rows {
		for j, v := range r.vecs {
			if s.dim <= 0 || len(v) != s.dim {
				assert.Zero(t, s.factors[j][i], "row %s slot %d", r.id, j)
				continue
			}
			stride := 2 * codeBytes(s.dim)
			code := make([]byte, stride)
			fa := encodeTernary(v, r.norms[j], code)
			assert.Equal(t, fa, s.factors[j][i], "row %s slot %d", r.id, j)
			assert.Equal(t, code, s.codes[j][i*stride:(i+1)*stride], "row %s slot %d", r.id, j)
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
	assert.Equal(t, rowBytes+int64(len(s.rows)*2*(2*codeBytes(70)+4)), s.bytes, "bytes count the codes")
	for _, r := range slices.Clone(s.rows) {
		s.remove(r.id)
	}
	assert.Zero(t, s.bytes)
	_ = before
}

// TestVecSetPrefilterExact checks that a pre-filtered leg returns exact
// scores in the exact order, the exact result when the pool holds every
// row, and honours filters, thresholds and rows without a code.
func TestVecSetPrefilterExact(t *testing.T) {
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
		}
		r.setVectors(a, b)
		s.put(r)
	}
	all := prefilter{min: 1, perResult: 1, fraction: 1, floor: 1}
	narrow := prefilter{min: 1, perResult: 3, fraction: 0.01, floor: 10}
	for qi := range 30 {
		q := vec()
		f := filter{kind: store.KindInteraction}
		if qi%3 == 0 {
			f.session = "s4"
		}
		minSim := []float64{-1, 0, 0.2}[qi%3]
		for _, k := range []int{1, 5, 100} {
			exact := s.rank(&f, []int{0, 1}, q, k, minSim, prefilter{})
			require.Equal(t, exact, s.rank(&f, []int{0, 1}, q, k, minSim, all), "pool of every row: exact")
			got := s.rank(&f, []int{1, 0}, q, k, minSim, narrow)
			for j, slot := range []int{1, 0} {
				prev := math.Inf(1)
				for _, sc := range got[j] {
					r := &s.rows[s.pos[sc.ID]]
					require.True(t, f.match(r))
					assert.Equal(t, float64(embed.Dot(q, r.vecs[slot])/(r.norms[slot]*embed.Norm(q))), sc.Score, "exact score")
					assert.GreaterOrEqual(t, sc.Score, minSim)
					assert.LessOrEqual(t, sc.Score, prev)
					prev = sc.Score
				}
				assert.LessOrEqual(t, len(got[j]), len(exact[slot]))
			}
		}
	}
	// A query of another length than the set's is ranked exactly (it
	// matches nothing here), and a set below min is scanned exactly.
	assert.Equal(t, [][]store.Scored{{}}, s.rank(&filter{kind: store.KindInteraction}, []int{0}, vec()[:10], 5, -1, narrow))
	small := prefilter{min: 3001, perResult: 1, fraction: 0.001, floor: 1}
	q := vec()
	f := filter{kind: store.KindInteraction}
	assert.Equal(t, s.rank(&f, []int{0, 1}, q, 5, -1, prefilter{}), s.rank(&f, []int{0, 1}, q, 5, -1, small))

	// The pool serves only thresholds below exactThreshold, full-length
	// queries and large enough sets; otherwise the scan is exact.
	assert.True(t, s.usePrefilter(d, 0.2, narrow))
	assert.True(t, s.usePrefilter(d, -1, narrow))
	assert.False(t, s.usePrefilter(d, exactThreshold, narrow))
	assert.False(t, s.usePrefilter(d, 0.75, narrow))
	assert.False(t, s.usePrefilter(d-1, 0.2, narrow))
	assert.False(t, s.usePrefilter(d, 0.2, small))
	assert.False(t, s.usePrefilter(d, 0.2, prefilter{}))

	// From exactThreshold on, even the narrowest pool gives the exact scan's
	// result: a noisy copy of a stored vector is found.
	for i := 3; i < 3000; i += 97 {
		r := &s.rows[i]
		if len(r.vecs[0]) != d {
			continue
		}
		near := slices.Clone(r.vecs[0])
		for j := range near {
			near[j] += float32(rng.NormFloat64()) * 0.1
		}
		for _, minSim := range []float64{exactThreshold, 0.75} {
			want := s.rank(&f, []int{0, 1}, near, 5, minSim, prefilter{})
			require.NotEmpty(t, want[0])
			require.Equal(t, want, s.rank(&f, []int{0, 1}, near, 5, minSim, narrow), "threshold %v", minSim)
		}
	}
}

// recallFixture is a coded set of n rows with two vector fields and
// queries for it.
type recallFixture struct {
	set     *vecSet
	queries [][]float32
}

func randomRecallFixture(n, queries int) recallFixture {
	rng := rand.New(rand.NewPCG(13, 14))
	vec := func() []float32 {
		v := make([]float32, benchDims)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		embed.Normalize(v)
		return v
	}
	fx := recallFixture{set: newVecSet(1, n).withCodes()}
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

// lexicalRecallFixture embeds generated sentences with embed/lexical: a
// content of 20–60 words and a summary of 8–15 of them, from a Zipf-
// distributed vocabulary; a query is 12 consecutive words of a document's
// content with a third of them replaced by random words.
func lexicalRecallFixture(t testing.TB, n, queries int) recallFixture {
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
	fx := recallFixture{set: newVecSet(1, n).withCodes()}
	for i := range n {
		r := vecRow{id: fmt.Sprintf("r%06d", i)}
		r.setVectors(vs[2*i], vs[2*i+1])
		fx.set.put(r)
	}
	fx.queries = vs[2*n:]
	return fx
}

// recall is the measured agreement of pre-filtered and exact ranking.
type recall struct {
	leg5, legDepth, fused5 float64
}

// measureRecall compares, over the fixture's queries, the pre-filtered
// legs (both fields, depth 100 as in a search with TopK 5) with the exact
// ones: the fraction of each exact leg's top 5 and top 100 found, and of
// the top 5 of their fusion (store.Combine, what a vector search returns).
func measureRecall(fx recallFixture, pf prefilter) recall {
	const topK, depth = 5, legDepth
	f := filter{kind: store.KindInteraction}
	var r recall
	var n5, nd, nf int
	for _, q := range fx.queries {
		exact := fx.set.rank(&f, []int{0, 1}, q, depth, -1, prefilter{})
		got := fx.set.rank(&f, []int{0, 1}, q, depth, -1, pf)
		for j := range exact {
			in := make(map[string]bool)
			for _, s := range got[j] {
				in[s.ID] = true
			}
			for i, s := range exact[j] {
				if in[s.ID] {
					if i < topK {
						r.leg5++
					}
					r.legDepth++
				}
				if i < topK {
					n5++
				}
				nd++
			}
		}
		in := make(map[string]bool)
		for _, x := range store.Combine(topK, got, nil) {
			in[x.ID] = true
		}
		for _, x := range store.Combine(topK, exact, nil) {
			if in[x.ID] {
				r.fused5++
			}
			nf++
		}
	}
	r.leg5 /= float64(n5)
	r.legDepth /= float64(nd)
	r.fused5 /= float64(nf)
	return r
}

// TestPrefilterRecall measures the default pool's recall against exact
// ranking on 10,000 documents (2,500 under the race detector) and 200
// queries (30): random unit vectors, and lexical embeddings of generated
// sentences. The fused top 5 and each leg's top 5 must agree at 0.99.
func TestPrefilterRecall(t *testing.T) {
	n, queries := 10_000, 200
	if raceEnabled {
		n, queries = 2_500, 30
	}
	pf := prefilter{min: DefaultVectorPrefilterMin, perResult: DefaultVectorPoolPerResult,
		fraction: DefaultVectorPoolFraction, floor: vectorPoolFloor}
	for _, c := range []struct {
		name string
		fx   func() recallFixture
	}{
		{"random", func() recallFixture { return randomRecallFixture(n, queries) }},
		{"lexical", func() recallFixture { return lexicalRecallFixture(t, n, queries) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx := c.fx()
			r := measureRecall(fx, pf)
			t.Logf("%d docs, %d queries, pool %d: leg recall@5 %.4f, leg recall@%d %.4f, fused top-5 recall %.4f",
				n, queries, pf.pool(legDepth, n), r.leg5, legDepth, r.legDepth, r.fused5)
			assert.GreaterOrEqual(t, r.leg5, 0.99)
			assert.GreaterOrEqual(t, r.fused5, 0.99)
		})
	}
}

// TestPrefilterRecallTable logs the recall of several pools (tuning aid;
// run with -run PrefilterRecallTable -v -args -recall-table).
func TestPrefilterRecallTable(t *testing.T) {
	if !*recallTable {
		t.Skip("tuning aid: -args -recall-table")
	}
	fracs := []float64{0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5}
	for _, n := range []int{10_000, *recallTableN} {
		if n == 0 {
			continue
		}
		for name, fx := range map[string]recallFixture{"random": randomRecallFixture(n, 200), "lexical": lexicalRecallFixture(t, n, 200)} {
			for _, frac := range fracs {
				pf := prefilter{min: 1, perResult: 1, fraction: frac, floor: 1}
				r := measureRecall(fx, pf)
				t.Logf("%s n=%d pool %d (%.0f%%): leg@5 %.4f leg@100 %.4f fused@5 %.4f", name, n, pf.pool(legDepth, n), frac*100, r.leg5, r.legDepth, r.fused5)
			}
		}
	}
}

var (
	recallTable  = flag.Bool("recall-table", false, "log the pre-filter's recall for several pools")
	recallTableN = flag.Int("recall-table-n", 0, "a second set size for -recall-table")
)

// BenchmarkVecSetRank times the two vector legs of a search (depth 100) on
// a coded set of 10,000 random or embed/lexical vectors: exact scans and
// the default pool (40%), with threshold pruning (prune.go) and without,
// at MinSimilarity 0 and 0.75 (direct-mode retrieval's default).
func BenchmarkVecSetRank(b *testing.B) {
	const n = 10_000
	f := filter{kind: store.KindInteraction}
	for _, fx := range []struct {
		name string
		fx   func() recallFixture
	}{
		{"random", func() recallFixture { return randomRecallFixture(n, 64) }},
		{"lexical", func() recallFixture { return lexicalRecallFixture(b, n, 64) }},
	} {
		x := fx.fx()
		for _, c := range []struct {
			name string
			pf   prefilter
		}{
			{"exact", prefilter{}},
			{"pool=40%", prefilter{min: 1, perResult: 1, fraction: 0.4, floor: 1}},
		} {
			for _, minSim := range []float64{0, 0.75} {
				for _, exhaustive := range []bool{true, false} {
					pf := c.pf
					pf.exhaustive = exhaustive
					name := fmt.Sprintf("%s/n=%d/%s/min=%v/pruned=%v", fx.name, n, c.name, minSim, !exhaustive)
					b.Run(name, func(b *testing.B) {
						for i := 0; b.Loop(); i++ {
							x.set.rank(&f, []int{0, 1}, x.queries[i%len(x.queries)], legDepth, minSim, pf)
						}
					})
				}
			}
		}
	}
}

// TestStorePrefilter searches a store whose pre-filter is on from the first
// document (so its codes are built on load and kept in step by cached
// writes, and its pools of at least 200 hold every row) against one with
// exact scans only: the same hits and scores, before and after writes.
func TestStorePrefilter(t *testing.T) {
	ctx := t.Context()
	open := func(min int) *Store {
		s, err := Open(ctx, filepath.Join(t.TempDir(), "s.db"), Config{Dimensions: 16, VectorPrefilterMin: min})
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
