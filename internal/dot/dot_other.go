//go:build !amd64 || purego

package dot

// useAVX and useAVX2 are false: this build has no AVX kernel, and the
// functions below are never called.
const (
	useAVX  = false
	useAVX2 = false
)

func addAVX(a, b *float32, n int, acc *Acc) { panic("dot: no AVX kernel in this build") }

func sumAVX(acc *Acc) float32 { panic("dot: no AVX kernel in this build") }

func dotAVX(a, b *float32, n int) float32 { panic("dot: no AVX kernel in this build") }

func int8AVX2(a, b *int8, n int) int32 { panic("dot: no AVX2 kernel in this build") }

func int8RowsAVX2(q *int16, codes *int8, d, rows int, out *int32) {
	panic("dot: no AVX2 kernel in this build")
}
