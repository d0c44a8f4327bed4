//go:build !amd64

package vecmath

func dot4x3AVX2(q *float32, ldq int, d *float32, ldd int, k int, out *float32) {
	panic("vecmath: AVX2 kernel called on a non-amd64 build")
}

func dot4x1AVX2(q *float32, ldq int, d *float32, k int, out *float32) {
	panic("vecmath: AVX2 kernel called on a non-amd64 build")
}

func dotInt8x4AVX2(q *int16, d *int8, ldd int, k int, out *int32) {
	panic("vecmath: AVX2 kernel called on a non-amd64 build")
}

func dot4x6AVX512(q *float32, ldq int, d *float32, ldd int, k int, out *float32) {
	panic("vecmath: AVX-512 kernel called on a non-amd64 build")
}
