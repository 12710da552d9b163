// Package dot computes float32 dot products for vector search, in one fixed
// summation order on every platform, with an AVX kernel on amd64.
//
// # Summation order
//
// The product of the components i of two vectors is added to
// lane i mod Lanes of an accumulator (lanes in order of i), and the lanes
// are then summed pairwise by halving: lane i += lane i+16, then i+8, i+4,
// i+2 and i+1. Every product and every sum is a float32 operation rounded
// on its own (the kernel multiplies and adds; it never fuses them), so the
// AVX kernel and the portable loop give bit for bit the same results on
// the same inputs. Thirty-two lanes are four eight-float registers: enough
// independent sums to keep the floating-point units busy.
//
// Acc exposes the lanes, so that a caller can stop a sum part way (to
// check a bound after each block of components) and still get exactly
// Dot's result when it goes on.
package dot

import "fmt"

// Lanes is the number of partial sums of a dot product.
const Lanes = 32

// Acc holds the partial sums of a dot product in progress. The zero value
// is an empty sum.
type Acc [Lanes]float32

// Add adds the products a[j]·b[j] to lane j mod Lanes. a and b must have
// the same length. To continue one dot product over several calls, split
// the vectors at multiples of Lanes, so that each component keeps the lane
// it has in a single call over the whole vectors.
func (acc *Acc) Add(a, b []float32) {
	if len(a) != len(b) {
		panic(fmt.Sprintf("dot: lengths %d and %d", len(a), len(b)))
	}
	bulk := len(a) &^ (Lanes - 1)
	if bulk > 0 {
		if useAVX {
			addAVX(&a[0], &b[0], bulk, acc)
		} else {
			addGeneric(a[:bulk], b[:bulk], acc)
		}
	}
	for j := bulk; j < len(a); j++ {
		acc[j&(Lanes-1)] += a[j] * b[j]
	}
}

// Sum returns the sum of the lanes, in the order of the package comment.
func (acc *Acc) Sum() float32 {
	if useAVX {
		return sumAVX(acc)
	}
	return sumGeneric(acc)
}

// Dot returns the dot product of a and b, which must have the same length:
// the Sum of an Acc to which a and b were added.
func Dot(a, b []float32) float32 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("dot: lengths %d and %d", len(a), len(b)))
	}
	if useAVX && len(a)&(Lanes-1) == 0 {
		if len(a) == 0 {
			return 0
		}
		return dotAVX(&a[0], &b[0], len(a))
	}
	var acc Acc
	acc.Add(a, b)
	return acc.Sum()
}

// addGeneric is Add's portable loop over whole blocks of Lanes components.
// The lanes are local variables, which the compiler keeps in registers
// where it has enough of them (arm64 has 32).
func addGeneric(a, b []float32, acc *Acc) {
	s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15, s16, s17, s18, s19, s20, s21, s22, s23, s24, s25, s26, s27, s28, s29, s30, s31 := acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7], acc[8], acc[9], acc[10], acc[11], acc[12], acc[13], acc[14], acc[15], acc[16], acc[17], acc[18], acc[19], acc[20], acc[21], acc[22], acc[23], acc[24], acc[25], acc[26], acc[27], acc[28], acc[29], acc[30], acc[31]
	for len(a) >= Lanes && len(b) >= Lanes {
		x, y := (*[Lanes]float32)(a), (*[Lanes]float32)(b)
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
		s4 += x[4] * y[4]
		s5 += x[5] * y[5]
		s6 += x[6] * y[6]
		s7 += x[7] * y[7]
		s8 += x[8] * y[8]
		s9 += x[9] * y[9]
		s10 += x[10] * y[10]
		s11 += x[11] * y[11]
		s12 += x[12] * y[12]
		s13 += x[13] * y[13]
		s14 += x[14] * y[14]
		s15 += x[15] * y[15]
		s16 += x[16] * y[16]
		s17 += x[17] * y[17]
		s18 += x[18] * y[18]
		s19 += x[19] * y[19]
		s20 += x[20] * y[20]
		s21 += x[21] * y[21]
		s22 += x[22] * y[22]
		s23 += x[23] * y[23]
		s24 += x[24] * y[24]
		s25 += x[25] * y[25]
		s26 += x[26] * y[26]
		s27 += x[27] * y[27]
		s28 += x[28] * y[28]
		s29 += x[29] * y[29]
		s30 += x[30] * y[30]
		s31 += x[31] * y[31]
		a, b = a[Lanes:], b[Lanes:]
	}
	*acc = Acc{s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15, s16, s17, s18, s19, s20, s21, s22, s23, s24, s25, s26, s27, s28, s29, s30, s31}
}

// sumGeneric is Sum's portable reduction.
func sumGeneric(acc *Acc) float32 {
	var s [Lanes / 2]float32
	for i := range s {
		s[i] = acc[i] + acc[i+16]
	}
	for h := 8; h > 0; h /= 2 {
		for i := range h {
			s[i] += s[i+h]
		}
	}
	return s[0]
}
