//go:build !amd64

package vecmath

func dot2AVX2(a, x, b, y *float64, n int) (float64, float64) {
	panic("vecmath: AVX2 kernel called on a non-amd64 build")
}

func discountUpdateAVX2(d, b, invA, theta, x2, x *float64, params *[3]float64, n int) {
	panic("vecmath: AVX2 kernel called on a non-amd64 build")
}
