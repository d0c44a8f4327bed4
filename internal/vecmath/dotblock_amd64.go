package vecmath

// dot4x3AVX2 computes the 4×3 dot products of four rows of q (stride ldq) and three rows of d
// (stride ldd) over k elements, k a positive multiple of 8, into out[0:12] row-major.
//
//go:noescape
func dot4x3AVX2(q *float32, ldq int, d *float32, ldd int, k int, out *float32)

// dot4x1AVX2 computes the dot products of four rows of q (stride ldq) with d over k elements, k
// a positive multiple of 8, into out[0:4].
//
//go:noescape
func dot4x1AVX2(q *float32, ldq int, d *float32, k int, out *float32)

// dot4x6AVX512 computes the 4×6 dot products of four rows of q (stride ldq) and six rows of d
// (stride ldd) over k elements, k a positive multiple of 16, into out[0:24] row-major.
//
//go:noescape
func dot4x6AVX512(q *float32, ldq int, d *float32, ldd int, k int, out *float32)
