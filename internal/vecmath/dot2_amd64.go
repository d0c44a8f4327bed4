package vecmath

// dot2AVX2 computes (a·x, b·y) over the first n elements; n must be a positive multiple of 16.
//
//go:noescape
func dot2AVX2(a, x, b, y *float64, n int) (float64, float64)
