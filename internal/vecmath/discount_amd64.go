package vecmath

// discountUpdateAVX2 runs DiscountUpdate over the first n elements; n must be a positive
// multiple of 4; params holds γ, y and λ.
//
//go:noescape
func discountUpdateAVX2(d, b, invA, theta, x2, x *float64, params *[3]float64, n int)
