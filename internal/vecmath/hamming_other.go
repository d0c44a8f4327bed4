//go:build !amd64

package vecmath

func hammingBlocksAVX512(q *uint64, words int, blocks *uint64, nblocks int, out *uint64) {
	panic("vecmath: AVX-512 kernel called on a non-amd64 build")
}

func hammingBlocksAVX2(q *uint64, words int, blocks *uint64, nblocks int, out *uint64) {
	panic("vecmath: AVX2 kernel called on a non-amd64 build")
}

func signBitsAVX2(x *float64, words int, dst *uint64) {
	panic("vecmath: AVX2 kernel called on a non-amd64 build")
}
