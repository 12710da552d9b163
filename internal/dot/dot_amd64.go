//go:build !purego

package dot

import "golang.org/x/sys/cpu"

// useAVX and useAVX2 are whether the processor and the operating system
// run AVX and AVX2.
var (
	useAVX  = cpu.X86.HasAVX
	useAVX2 = cpu.X86.HasAVX2
)

// addAVX adds a[j]·b[j] to lane j mod 32 of acc for j < n, a multiple of 32.
//
//go:noescape
func addAVX(a, b *float32, n int, acc *Acc)

// sumAVX returns the sum of acc's lanes.
//
//go:noescape
func sumAVX(acc *Acc) float32

// dotAVX returns the dot product of the n components of a and b, n a
// multiple of 32 and > 0.
//
//go:noescape
func dotAVX(a, b *float32, n int) float32

// int8AVX2 returns the dot product of the n components of a and b, n a
// multiple of 32 and > 0.
//
//go:noescape
func int8AVX2(a, b *int8, n int) int32

// int8RowsAVX2 sets out[i] to the dot product of q (int8 values widened
// to int16) and codes[i*d:], for i < rows; d is a multiple of 32 and > 0.
//
//go:noescape
func int8RowsAVX2(q *int16, codes *int8, d, rows int, out *int32)
