//go:build !purego

package dot

import "golang.org/x/sys/cpu"

// useAVX is whether the processor and the operating system run AVX.
var useAVX = cpu.X86.HasAVX

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
