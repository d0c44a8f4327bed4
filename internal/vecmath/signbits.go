package vecmath

import "math"

// SignBits writes the sign sketch of x into dst, one word per 64 coordinates: bit i of dst[j] is
// the sign bit of x[64j+i] (the unused bits of a last partial word are zero). The AVX2 kernel
// reads four coordinates' sign bits per instruction (VMOVMSKPD); plain Go does the rest, and all
// of it without AVX2. Panics if dst has fewer than ⌈len(x)/64⌉ words.
func SignBits(x []float64, dst []uint64) {
	words := (len(x) + 63) / 64
	if len(dst) < words {
		panic("vecmath.SignBits: dst too short")
	}
	full := 0
	if useAVX2 {
		full = len(x) / 64
		if full > 0 {
			signBitsAVX2(&x[0], full, &dst[0])
		}
	}
	for j := full; j < words; j++ {
		var word uint64
		for i, v := range x[j*64 : min((j+1)*64, len(x))] {
			word |= math.Float64bits(v) >> 63 << i
		}
		dst[j] = word
	}
}
