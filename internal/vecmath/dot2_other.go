//go:build !amd64

package vecmath

func dot2AVX2(a, x, b, y *float64, n int) (float64, float64) {
	panic("vecmath: AVX2 kernel called on a non-amd64 build")
}
