package dot

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// reference is the package comment's order, written out as plainly as it
// reads.
func reference(a, b []float32) float32 {
	var lanes [Lanes]float32
	for j := range a {
		lanes[j%Lanes] += a[j] * b[j]
	}
	w := Lanes
	for w > 1 {
		w /= 2
		for i := range w {
			lanes[i] += lanes[i+w]
		}
	}
	return lanes[0]
}

func same(x, y float32) bool {
	return math.Float32bits(x) == math.Float32bits(y)
}

func TestDotFollowsTheDocumentedOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 8, 31, 32, 33, 63, 64, 100, 384, 385, 768, 1536, 3072} {
		for range 20 {
			a, b := randVec(rng, n), randVec(rng, n)
			want := reference(a, b)
			if got := Dot(a, b); !same(got, want) {
				t.Fatalf("n=%d: Dot = %v, want %v", n, got, want)
			}
			var acc Acc
			addGeneric(a[:n&^31], b[:n&^31], &acc)
			for j := n &^ 31; j < n; j++ {
				acc[j%Lanes] += a[j] * b[j]
			}
			if got := sumGeneric(&acc); !same(got, want) {
				t.Fatalf("n=%d: portable loop = %v, want %v", n, got, want)
			}
		}
	}
}

func TestAVXMatchesPortable(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX kernel in this build or on this processor")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{32, 64, 96, 384, 1536} {
		for range 50 {
			a, b := randVec(rng, n), randVec(rng, n)
			var gen, avx Acc
			start := randVec(rng, Lanes) // a sum already under way
			gen, avx = Acc(start), Acc(start)
			addGeneric(a, b, &gen)
			addAVX(&a[0], &b[0], n, &avx)
			if gen != avx {
				t.Fatalf("n=%d: lanes differ:\n%v\n%v", n, gen, avx)
			}
			if g, x := sumGeneric(&gen), sumAVX(&avx); !same(g, x) {
				t.Fatalf("n=%d: sums %v and %v", n, g, x)
			}
			var zero Acc
			addGeneric(a, b, &zero)
			if g, x := sumGeneric(&zero), dotAVX(&a[0], &b[0], n); !same(g, x) {
				t.Fatalf("n=%d: dotAVX = %v, portable %v", n, x, g)
			}
		}
	}
}

func TestAccSplitAtLanes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{384, 390, 1000} {
		a, b := randVec(rng, n), randVec(rng, n)
		want := Dot(a, b)
		var acc Acc
		lo := 0
		for _, hi := range []int{96, 192, 288, n} {
			acc.Add(a[lo:hi], b[lo:hi])
			lo = hi
		}
		if got := acc.Sum(); !same(got, want) {
			t.Fatalf("n=%d: split sum %v, Dot %v", n, got, want)
		}
	}
}

func TestSpecialValues(t *testing.T) {
	a := make([]float32, 64)
	b := make([]float32, 64)
	for i := range a {
		a[i], b[i] = 1, 2
	}
	if got := Dot(a, b); got != 128 {
		t.Fatalf("Dot of ones and twos = %v, want 128", got)
	}
	a[40] = float32(math.Inf(1))
	if got := Dot(a, b); !math.IsInf(float64(got), 1) {
		t.Fatalf("Dot with +Inf = %v", got)
	}
	a[3] = float32(math.NaN())
	if got := Dot(a, b); !math.IsNaN(float64(got)) {
		t.Fatalf("Dot with NaN = %v", got)
	}
}

func TestLengthMismatchPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Dot of lengths 3 and 4 did not panic")
		}
	}()
	Dot(make([]float32, 3), make([]float32, 4))
}

func FuzzDot(f *testing.F) {
	f.Add(uint64(1), 384)
	f.Add(uint64(2), 33)
	f.Add(uint64(3), 0)
	f.Fuzz(func(t *testing.T, seed uint64, n int) {
		n = int(uint(n) % 4096)
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		a, b := randVec(rng, n), randVec(rng, n)
		for i := range a {
			// Occasional extreme magnitudes: overflow and subnormals.
			switch rng.IntN(64) {
			case 0:
				a[i] *= 1e38
			case 1:
				b[i] *= 1e-40
			}
		}
		want, got := reference(a, b), Dot(a, b)
		if !same(got, want) && !(math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
			t.Fatalf("n=%d: Dot = %v, reference %v", n, got, want)
		}
	})
}

func BenchmarkDot(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{384, 1536} {
		x, y := randVec(rng, n), randVec(rng, n)
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			var s float32
			for b.Loop() {
				s += Dot(x, y)
			}
			_ = s
		})
		b.Run("portable/n="+strconv.Itoa(n), func(b *testing.B) {
			var s float32
			for b.Loop() {
				var acc Acc
				addGeneric(x, y, &acc)
				s += sumGeneric(&acc)
			}
			_ = s
		})
	}
}
