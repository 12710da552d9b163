package dot

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

func randInt8(rng *rand.Rand, n int) []int8 {
	v := make([]int8, n)
	for i := range v {
		v[i] = int8(rng.IntN(256) - 128)
	}
	return v
}

func int8Reference(a, b []int8) int32 {
	var s int32
	for i := range a {
		s += int32(a[i]) * int32(b[i])
	}
	return s
}

func TestInt8(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 5, 31, 32, 33, 64, 100, 384, 1536, 3072} {
		for range 20 {
			a, b := randInt8(rng, n), randInt8(rng, n)
			if got, want := Int8(a, b), int8Reference(a, b); got != want {
				t.Fatalf("n=%d: Int8 = %d, want %d", n, got, want)
			}
		}
	}
	// The extremes: −128·−128 in every component.
	a := make([]int8, 1024)
	for i := range a {
		a[i] = -128
	}
	if got := Int8(a, a); got != 1024*128*128 {
		t.Fatalf("Int8 of −128s = %d, want %d", got, 1024*128*128)
	}
}

func FuzzInt8(f *testing.F) {
	f.Add([]byte{1, 2, 3}, []byte{4, 5, 6})
	f.Add(make([]byte, 70), make([]byte, 70))
	f.Fuzz(func(t *testing.T, x, y []byte) {
		n := min(len(x), len(y))
		a, b := make([]int8, n), make([]int8, n)
		for i := range n {
			a[i], b[i] = int8(x[i]), int8(y[i])
		}
		if got, want := Int8(a, b), int8Reference(a, b); got != want {
			t.Fatalf("n=%d: Int8 = %d, want %d", n, got, want)
		}
	})
}

func BenchmarkInt8(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{384, 1536} {
		x, y := randInt8(rng, n), randInt8(rng, n)
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			var s int32
			for b.Loop() {
				s += Int8(x, y)
			}
			_ = s
		})
	}
}

func TestInt8Rows(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, d := range []int{1, 20, 32, 64, 384} {
		for _, rows := range []int{0, 1, 7, 100} {
			q, codes := randInt8(rng, d), randInt8(rng, d*rows)
			out := make([]int32, rows)
			Int8Rows(q, codes, out)
			for i := range out {
				if want := int8Reference(q, codes[i*d:(i+1)*d]); out[i] != want {
					t.Fatalf("d=%d row %d of %d: %d, want %d", d, i, rows, out[i], want)
				}
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Int8Rows with a short matrix did not panic")
		}
	}()
	Int8Rows(make([]int8, 4), make([]int8, 7), make([]int32, 2))
}

func BenchmarkInt8Rows(b *testing.B) {
	rng := rand.New(rand.NewPCG(15, 16))
	const d, rows = 384, 10_000
	q, codes := randInt8(rng, d), randInt8(rng, d*rows)
	out := make([]int32, rows)
	for b.Loop() {
		Int8Rows(q, codes, out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
}
