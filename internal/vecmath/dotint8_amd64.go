package vecmath

// dotInt8x4AVX2 computes four int8 document rows (stride ldd bytes) against an int16 query over
// k elements, k a positive multiple of 16, into out[0:4].
//
//go:noescape
func dotInt8x4AVX2(q *int16, d *int8, ldd int, k int, out *int32)
