package vecmath

import "math/bits"

// HammingBlockSize is the number of sketches a block of HammingBlocks holds.
const HammingBlockSize = 8

// HammingBlocks sets out[8b+i] to the Hamming distance between the sketch q (words uint64s) and
// sketch i of block b, for the nblocks blocks of eight sketches in blocks. A block stores its
// sketches word-interleaved: word j of sketch i of block b is blocks[(b·words + j)·8 + i], so
// one 512-bit load holds word j of all eight and the AVX-512 kernel (VPOPCNTQ) counts a block in
// words instructions of each kind; without AVX-512 VPOPCNTDQ an AVX2 kernel counts each byte's
// bits by nibble lookup (VPSHUFB), and without AVX2 plain Go counts word by word.
// Panics if a slice is too short.
func HammingBlocks(q []uint64, blocks []uint64, nblocks int, out []uint64) {
	words := len(q)
	if len(blocks) < nblocks*words*HammingBlockSize || len(out) < nblocks*HammingBlockSize {
		panic("vecmath.HammingBlocks: slice too short")
	}
	if nblocks == 0 {
		return
	}
	if words == 0 {
		clear(out[:nblocks*HammingBlockSize])
		return
	}
	switch {
	case usePopcnt512:
		hammingBlocksAVX512(&q[0], words, &blocks[0], nblocks, &out[0])
		return
	case useAVX2:
		hammingBlocksAVX2(&q[0], words, &blocks[0], nblocks, &out[0])
		return
	}
	hammingBlocksGeneric(q, blocks, nblocks, out)
}

func hammingBlocksGeneric(q []uint64, blocks []uint64, nblocks int, out []uint64) {
	words := len(q)
	for b := range nblocks {
		var acc [HammingBlockSize]uint64
		blk := blocks[b*words*HammingBlockSize : (b+1)*words*HammingBlockSize]
		for j, qj := range q {
			lane := blk[j*HammingBlockSize : (j+1)*HammingBlockSize]
			for i := range acc {
				acc[i] += uint64(bits.OnesCount64(qj ^ lane[i]))
			}
		}
		copy(out[b*HammingBlockSize:], acc[:])
	}
}
