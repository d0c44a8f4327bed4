package vecmath

// DotBlock sets c[i*n+j] = a_i · b_j for the m rows a_i of a and the n rows b_j of b, all of
// length dim and stored row-major without gaps (a is m×dim, b is n×dim, c is m×n): the score
// block of a batched exact search, queries against a block of documents. Kernels, chosen at run
// time: AVX-512 computes 4 queries × 6 documents at a time (24 ZMM accumulators), AVX2/FMA 4 × 3
// (and the documents left over by the AVX-512 kernel), so each loaded document vector serves four
// queries and the work is bound by arithmetic rather than memory; the last m%4 queries, and
// every pair without either kernel, run in plain Go. gonum's float32 Gemm does one SSE dot
// product per pair. Panics if a slice is too short.
func DotBlock(a []float32, m int, b []float32, n int, dim int, c []float32) {
	if len(a) < m*dim || len(b) < n*dim || len(c) < m*n {
		panic("vecmath.DotBlock: slice too short")
	}
	if m == 0 || n == 0 {
		return
	}
	m4 := m &^ 3
	j0 := 0 // documents before j0 are done for the first m4 queries
	if useAVX512 && dim >= 16 && m4 > 0 {
		j0 = n - n%6
		dotBlockAVX512(a, m4, b, j0, n, dim, c)
		if j0 < n {
			// The last n%6 documents through the same 4×6 kernel, padded with zero rows: in
			// another kernel their sums ran in another order, so a copy of a document scored an
			// ulp apart from the original and ties were not broken by corpus order.
			dotBlockPadded(a, m4, b, j0, n, dim, c, 6)
			j0 = n
		}
	}
	if useAVX2 && dim >= 8 && m4 > 0 && j0 < n {
		if r := (n - j0) % 3; r != 0 {
			// Likewise the last (n−j0)%3 through the 4×3 kernel rather than the 4×1 one.
			dotBlockAVX2(a, m4, b, j0, n-r, n, dim, c)
			dotBlockPadded(a, m4, b, n-r, n, dim, c, 3)
		} else {
			dotBlockAVX2(a, m4, b, j0, n, n, dim, c)
		}
	} else if j0 < n {
		for i := 0; i < m4; i++ {
			for j := j0; j < n; j++ {
				c[i*n+j] = dotGeneric(a[i*dim:(i+1)*dim], b[j*dim:(j+1)*dim])
			}
		}
	}
	dotBlockGeneric(a, m, b, n, dim, c, m4) // the last m%4 queries
}

// dotBlockAVX512 fills c for queries [0, m4) (a multiple of 4) and documents [0, n6) (a multiple
// of 6) of an m×n block: the 4×6 kernel over the first dim&^15 elements, plain Go for the rest.
func dotBlockAVX512(a []float32, m4 int, b []float32, n6, n, dim int, c []float32) {
	k := dim &^ 15
	var out [24]float32
	for i := 0; i < m4; i += 4 {
		qa := &a[i*dim]
		for j := 0; j < n6; j += 6 {
			dot4x6AVX512(qa, dim, &b[j*dim], dim, k, &out[0])
			for r := range 4 {
				copy(c[(i+r)*n+j:(i+r)*n+j+6], out[6*r:6*r+6])
			}
		}
	}
	addTails(a, m4, b, 0, n6, n, dim, k, c)
}

// dotBlockAVX2 fills c for queries [0, m4) (a multiple of 4) and documents [j0, j1) of an ·×n
// block: the 4×3 and 4×1 kernels over the first dim&^7 elements, plain Go for the rest.
func dotBlockAVX2(a []float32, m4 int, b []float32, j0, j1, n, dim int, c []float32) {
	k := dim &^ 7
	var out [12]float32
	n3 := j0 + (j1-j0)/3*3
	for i := 0; i < m4; i += 4 {
		qa := &a[i*dim]
		for j := j0; j < n3; j += 3 {
			dot4x3AVX2(qa, dim, &b[j*dim], dim, k, &out[0])
			for r := range 4 {
				row := c[(i+r)*n+j:]
				row[0], row[1], row[2] = out[3*r], out[3*r+1], out[3*r+2]
			}
		}
		for j := n3; j < j1; j++ {
			dot4x1AVX2(qa, dim, &b[j*dim], k, &out[0])
			for r := range 4 {
				c[(i+r)*n+j] = out[r]
			}
		}
	}
	addTails(a, m4, b, j0, j1, n, dim, k, c)
}

// dotBlockPadded fills c for queries [0, m4) and the documents [j0, n) (fewer than width) of an
// m×n block through the width-document kernel (6: AVX-512, 3: AVX2), the missing documents
// zero rows of a scratch block, so that every document of a row is summed in one order. The
// scratch lives on the stack up to d = padMaxDim: every full block of a batched search has such
// a remainder, and DotBlock allocates nothing.
func dotBlockPadded(a []float32, m4 int, b []float32, j0, n, dim int, c []float32, width int) {
	var padArr [6 * padMaxDim]float32
	pad := padArr[:]
	if width*dim > len(pad) {
		pad = make([]float32, width*dim)
	}
	pad = pad[:width*dim]
	copy(pad, b[j0*dim:n*dim]) // the rest stays zero
	var out [4 * 6]float32     // one group of 4 queries at a time
	for i := 0; i < m4; i += 4 {
		if width == 6 {
			dotBlockAVX512(a[i*dim:], 4, pad, width, width, dim, out[:])
		} else {
			dotBlockAVX2(a[i*dim:], 4, pad, 0, width, width, dim, out[:])
		}
		for r := range 4 {
			copy(c[(i+r)*n+j0:(i+r)*n+n], out[r*width:r*width+n-j0])
		}
	}
}

// padMaxDim is the largest vector size dotBlockPadded pads on the stack.
const padMaxDim = 1024

// addTails adds the products of elements [k, dim) to c for queries [0, m) and documents [j0, j1)
// of an ·×n block: what a kernel over the first k elements left out.
func addTails(a []float32, m int, b []float32, j0, j1, n, dim, k int, c []float32) {
	if k == dim {
		return
	}
	for i := range m {
		for j := j0; j < j1; j++ {
			c[i*n+j] += dotGeneric(a[i*dim+k:(i+1)*dim], b[j*dim+k:(j+1)*dim])
		}
	}
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
