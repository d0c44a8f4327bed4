package vecmath

// hammingBlocksAVX512 is HammingBlocks for words ≥ 1 and nblocks ≥ 1 (AVX-512 VPOPCNTDQ).
//
//go:noescape
func hammingBlocksAVX512(q *uint64, words int, blocks *uint64, nblocks int, out *uint64)

// signBitsAVX2 is SignBits for the first 64·words coordinates, words ≥ 1 (AVX).
//
//go:noescape
func signBitsAVX2(x *float64, words int, dst *uint64)

// hammingBlocksAVX2 is HammingBlocks for words ≥ 1 and nblocks ≥ 1 (AVX2).
//
//go:noescape
func hammingBlocksAVX2(q *uint64, words int, blocks *uint64, nblocks int, out *uint64)
