//go:build !amd64 || purego

package dot

// useAVX is false: this build has no AVX kernel, and the functions below
// are never called.
const useAVX = false

func addAVX(a, b *float32, n int, acc *Acc) { panic("dot: no AVX kernel in this build") }

func sumAVX(acc *Acc) float32 { panic("dot: no AVX kernel in this build") }

func dotAVX(a, b *float32, n int) float32 { panic("dot: no AVX kernel in this build") }
