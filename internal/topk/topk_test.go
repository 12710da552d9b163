package topk

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scored is a search result: ranked by score, then by lower id, a total
// order as the stores use.
type scored struct {
	id    string
	score float64
}

func below(a, b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.id > b.id
}

// best returns the k greatest of vs under below by sorting, best first.
func best(vs []scored, k int) []scored {
	s := slices.Clone(vs)
	slices.SortFunc(s, func(a, b scored) int {
		if below(a, b) {
			return 1
		}
		if below(b, a) {
			return -1
		}
		return 0
	})
	if len(s) > k {
		s = s[:k]
	}
	if len(s) == 0 {
		return nil
	}
	return s
}

// stream returns n results with scores from few distinct values, so that
// ties on score are common and only the id decides.
func stream(rng *rand.Rand, n int) []scored {
	vs := make([]scored, n)
	for i := range vs {
		vs[i] = scored{id: strconv.Itoa(rng.IntN(4 * n)), score: float64(rng.IntN(5))}
	}
	return vs
}

func TestMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := rng.IntN(60)
		k := rng.IntN(n + 5)
		vs := stream(rng, n)
		h := New(k, below)
		for _, v := range vs {
			h.Offer(v)
		}
		want := best(vs, k)
		require.Equal(t, want, h.Sorted(), "n=%d k=%d stream=%v", n, k, vs)
		require.Equal(t, len(want), h.Len())
		if len(want) > 0 {
			assert.Equal(t, want[len(want)-1], h.Min(), "the least kept is the k-th best")
		}
	}
}

func FuzzMatchesSort(f *testing.F) {
	f.Add([]byte{3, 1, 4, 1, 5, 9, 2, 6}, 3)
	f.Add([]byte{}, 0)
	f.Add([]byte{7, 7, 7, 7}, 2)
	f.Fuzz(func(t *testing.T, data []byte, k int) {
		k %= 70
		var vs []float64
		for _, b := range data {
			vs = append(vs, float64(b%16))
		}
		h := New(k, func(a, b float64) bool { return a < b })
		for _, v := range vs {
			h.Offer(v)
		}
		want := slices.Clone(vs)
		slices.SortFunc(want, func(a, b float64) int { return cmp.Compare(b, a) })
		want = want[:min(max(k, 0), len(want))]
		if len(want) == 0 {
			want = nil
		}
		// Equal floats are interchangeable, so the values must match.
		require.Equal(t, want, h.Sorted())
	})
}

func TestOfferReportsWhetherKept(t *testing.T) {
	h := New(2, func(a, b int) bool { return a < b })
	assert.True(t, h.Offer(5), "kept while not full")
	assert.False(t, h.Full())
	assert.True(t, h.Offer(3))
	assert.True(t, h.Full())
	assert.Equal(t, 3, h.Min())
	assert.False(t, h.Offer(3), "equal to the least kept: not kept")
	assert.False(t, h.Offer(1))
	assert.True(t, h.Offer(4))
	assert.Equal(t, 4, h.Min())
	assert.Equal(t, []int{5, 4}, h.Sorted())
}

func TestKeepsNothingWithKZeroOrLess(t *testing.T) {
	for _, k := range []int{0, -1} {
		h := New(k, func(a, b int) bool { return a < b })
		assert.False(t, h.Offer(1), "k=%d", k)
		assert.Equal(t, 0, h.Len())
		assert.Nil(t, h.Sorted())
	}
}

func TestSortedLeavesHeapUnchanged(t *testing.T) {
	h := New(3, func(a, b int) bool { return a < b })
	for _, v := range []int{4, 8, 1, 9, 2} {
		h.Offer(v)
	}
	assert.Equal(t, []int{9, 8, 4}, h.Sorted())
	assert.Equal(t, []int{9, 8, 4}, h.Sorted(), "a second call sees the same values")
	h.Offer(5)
	assert.Equal(t, []int{9, 8, 5}, h.Sorted(), "offers go on after Sorted")
}

func TestResetStartsANewStream(t *testing.T) {
	h := New(2, func(a, b int) bool { return a < b })
	h.Offer(10)
	h.Offer(20)
	h.Reset(3)
	assert.Equal(t, 0, h.Len())
	for _, v := range []int{1, 2, 3, 4} {
		h.Offer(v)
	}
	assert.Equal(t, []int{4, 3, 2}, h.Sorted())
}

func TestOfferAllocatesNothingOnceWarm(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vs := stream(rng, 1000)
	h := New(10, below)
	allocs := testing.AllocsPerRun(20, func() {
		h.Reset(10)
		for _, v := range vs {
			h.Offer(v)
		}
	})
	assert.Zero(t, allocs)
}

// BenchmarkOffer ranks a stream of 10,000 random scores for the best 10,
// the shape of a search leg.
func BenchmarkOffer(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	vs := make([]scored, 10000)
	for i := range vs {
		vs[i] = scored{id: strconv.Itoa(i), score: rng.Float64()}
	}
	h := New(10, below)
	b.ReportAllocs()
	for b.Loop() {
		h.Reset(10)
		for _, v := range vs {
			h.Offer(v)
		}
	}
}
