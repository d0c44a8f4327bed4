package vecmath

// DotBlock sets c[i*n+j] = a_i · b_j for the m rows a_i of a and the n rows b_j of b, all of
// length dim and stored row-major without gaps (a is m×dim, b is n×dim, c is m×n): the score
// block of a batched exact search, queries against a block of documents. The AVX2/FMA kernel
// computes 4 queries × 3 documents at a time, so each loaded document vector serves four
// queries and the work is bound by arithmetic rather than memory; gonum's float32 Gemm does one
// SSE dot product per pair. Panics if a slice is too short.
func DotBlock(a []float32, m int, b []float32, n int, dim int, c []float32) {
	if len(a) < m*dim || len(b) < n*dim || len(c) < m*n {
		panic("vecmath.DotBlock: slice too short")
	}
	if m == 0 || n == 0 {
		return
	}
	if !useAVX2 || dim < 8 {
		dotBlockGeneric(a, m, b, n, dim, c, 0)
		return
	}
	k := dim &^ 7
	var out [12]float32
	m4, n3 := m&^3, n-n%3
	for i := 0; i < m4; i += 4 {
		qa := &a[i*dim]
		for j := 0; j < n3; j += 3 {
			dot4x3AVX2(qa, dim, &b[j*dim], dim, k, &out[0])
			for r := range 4 {
				row := c[(i+r)*n+j:]
				row[0], row[1], row[2] = out[3*r], out[3*r+1], out[3*r+2]
			}
		}
		for j := n3; j < n; j++ {
			dot4x1AVX2(qa, dim, &b[j*dim], k, &out[0])
			for r := range 4 {
				c[(i+r)*n+j] = out[r]
			}
		}
	}
	if k < dim { // the last dim%8 elements of every pair of the kernel part
		for i := 0; i < m4; i++ {
			for j := 0; j < n; j++ {
				c[i*n+j] += dotGeneric(a[i*dim+k:(i+1)*dim], b[j*dim+k:(j+1)*dim])
			}
		}
	}
	dotBlockGeneric(a, m, b, n, dim, c, m4) // the last m%4 queries
}

// dotBlockGeneric fills rows i0.. of c in plain Go.
func dotBlockGeneric(a []float32, m int, b []float32, n int, dim int, c []float32, i0 int) {
	for i := i0; i < m; i++ {
		qa := a[i*dim : (i+1)*dim]
		for j := 0; j < n; j++ {
			c[i*n+j] = dotGeneric(qa, b[j*dim:(j+1)*dim])
		}
	}
}

func dotGeneric(x, y []float32) float32 {
	var s float32
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}
