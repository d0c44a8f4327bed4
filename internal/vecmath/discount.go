package vecmath

// DiscountUpdate performs the discounted ridge update of one diagonal linear model in one pass:
//
//	d ← γ·d + x2,  b ← γ·b + y·x,  invA = 1/(λ + d),  θ = b·invA
//
// elementwise over slices of equal length. The AVX2 kernel handles four elements per
// instruction, division included, which is most of RATED's update cost. Panics if the lengths
// differ.
func DiscountUpdate(d, b, invA, theta, x2, x []float64, gamma, y, lambda float64) {
	n := len(d)
	if len(b) != n || len(invA) != n || len(theta) != n || len(x2) != n || len(x) != n {
		panic("vecmath.DiscountUpdate: length mismatch")
	}
	m := 0
	if useAVX2 && n >= 4 {
		m = n &^ 3
		params := [3]float64{gamma, y, lambda}
		discountUpdateAVX2(&d[0], &b[0], &invA[0], &theta[0], &x2[0], &x[0], &params, m)
	}
	discountUpdateGeneric(d[m:], b[m:], invA[m:], theta[m:], x2[m:], x[m:], gamma, y, lambda)
}

func discountUpdateGeneric(d, b, invA, theta, x2, x []float64, gamma, y, lambda float64) {
	for i := range d {
		d[i] = gamma*d[i] + x2[i]
		b[i] = gamma*b[i] + y*x[i]
		invA[i] = 1 / (lambda + d[i])
		theta[i] = b[i] * invA[i]
	}
}
