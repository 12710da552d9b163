package dot

import "fmt"

// Int8 returns the dot product of two int8 vectors of the same length, in
// int32: exact for vectors of up to 133,000 components (|a[i]·b[i]| ≤ 2¹⁴),
// with an AVX2 kernel on amd64.
func Int8(a, b []int8) int32 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("dot: lengths %d and %d", len(a), len(b)))
	}
	bulk := len(a) &^ 31
	var s int32
	if useAVX2 && bulk > 0 {
		s = int8AVX2(&a[0], &b[0], bulk)
		a, b = a[bulk:], b[bulk:]
	}
	return s + int8Generic(a, b)
}

// int8Generic is Int8's portable loop.
func int8Generic(a, b []int8) int32 {
	var s0, s1, s2, s3 int32
	for len(a) >= 4 && len(b) >= 4 {
		s0 += int32(a[0]) * int32(b[0])
		s1 += int32(a[1]) * int32(b[1])
		s2 += int32(a[2]) * int32(b[2])
		s3 += int32(a[3]) * int32(b[3])
		a, b = a[4:], b[4:]
	}
	for i := range a {
		s0 += int32(a[i]) * int32(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// Int8Rows sets out[i] to the dot product of q and the i-th row of codes,
// a matrix of len(out) rows of len(q) components: one call for a scan of
// many codes.
func Int8Rows(q, codes []int8, out []int32) {
	d := len(q)
	if len(codes) != d*len(out) {
		panic(fmt.Sprintf("dot: %d codes for %d rows of %d", len(codes), len(out), d))
	}
	if len(out) == 0 {
		return
	}
	if useAVX2 && d > 0 && d&31 == 0 {
		// q sign-extended once, rather than once a row.
		q16 := make([]int16, d)
		for i, x := range q {
			q16[i] = int16(x)
		}
		int8RowsAVX2(&q16[0], &codes[0], d, len(out), &out[0])
		return
	}
	for i := range out {
		out[i] = Int8(q, codes[i*d:(i+1)*d])
	}
}
