package vecmath

// DotInt8Rows sets out[j] = Σ_i q[i]·d[j·dim+i] for the n int8 rows of d (n×dim, row-major): the
// scores of an int8 scalar-quantised exact scan, a quarter of the memory traffic of float32.
// The query is int16 (quantised values widened once per query). The AVX2 kernel sign-extends
// 16 int8 values to int16 and multiplies-adds them pairwise into int32 (VPMADDWD), four rows per
// call. Values must stay within ±127 so no int32 sum can overflow for dim ≤ 2^17. Panics if a
// slice is too short.
func DotInt8Rows(q []int16, d []int8, n, dim int, out []int32) {
	if len(q) < dim || len(d) < n*dim || len(out) < n {
		panic("vecmath.DotInt8Rows: slice too short")
	}
	j := 0
	if useAVX2 && dim >= 16 {
		k := dim &^ 15
		for ; j+4 <= n; j += 4 {
			dotInt8x4AVX2(&q[0], &d[j*dim], dim, k, &out[j])
			if k < dim {
				for r := j; r < j+4; r++ {
					out[r] += dotInt8Generic(q[k:dim], d[r*dim+k:(r+1)*dim])
				}
			}
		}
	}
	for ; j < n; j++ {
		out[j] = dotInt8Generic(q[:dim], d[j*dim:(j+1)*dim])
	}
}

func dotInt8Generic(q []int16, d []int8) int32 {
	var s int32
	for i, x := range d {
		s += int32(q[i]) * int32(x)
	}
	return s
}
