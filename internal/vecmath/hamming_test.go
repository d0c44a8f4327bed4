package vecmath

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestHammingBlocks compares every distance with one counted bit by bit here, for sketch lengths
// of one word to past 768 bits, one to three blocks, all-equal and all-different sketches, with
// and without the AVX-512 kernel.
func TestHammingBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, path := range []struct{ avx512, avx2 bool }{{true, true}, {false, true}, {false, false}} {
		saved512, saved2 := usePopcnt512, useAVX2
		usePopcnt512, useAVX2 = usePopcnt512 && path.avx512, useAVX2 && path.avx2
		for _, words := range []int{1, 2, 6, 12, 13, 40} {
			for _, nblocks := range []int{1, 2, 3} {
				q := make([]uint64, words)
				for j := range q {
					q[j] = rng.Uint64()
				}
				blocks := make([]uint64, nblocks*words*8)
				for i := range blocks {
					blocks[i] = rng.Uint64()
				}
				// Sketch 0 of block 0 equals q; sketch 1 is its complement.
				for j := range words {
					blocks[j*8], blocks[j*8+1] = q[j], ^q[j]
				}
				out := make([]uint64, nblocks*8)
				HammingBlocks(q, blocks, nblocks, out)
				for b := range nblocks {
					for i := range 8 {
						want := uint64(0)
						for j := range words {
							x := blocks[(b*words+j)*8+i]
							for bit := range 64 {
								if (q[j]>>bit)&1 != (x>>bit)&1 {
									want++
								}
							}
						}
						if got := out[b*8+i]; got != want {
							t.Fatalf("AVX-512 %v, AVX2 %v, %d words, block %d, sketch %d: %d, want %d", usePopcnt512, useAVX2, words, b, i, got, want)
						}
					}
				}
				if out[0] != 0 || out[1] != uint64(64*words) {
					t.Fatalf("equal and complementary sketches: %d and %d", out[0], out[1])
				}
			}
		}
		usePopcnt512, useAVX2 = saved512, saved2
	}
}

// BenchmarkHammingBlocks: 640 sketches of 768 bits (K = 10 tools × 64 prototypes), as eighty
// blocks, on each path: AVX-512, AVX2, plain Go.
func BenchmarkHammingBlocks(b *testing.B) {
	const words, nblocks = 12, 80
	rng := rand.New(rand.NewPCG(1, 2))
	q := make([]uint64, words)
	blocks := make([]uint64, nblocks*words*8)
	for i := range blocks {
		blocks[i] = rng.Uint64()
	}
	out := make([]uint64, nblocks*8)
	for _, path := range []struct{ avx512, avx2 bool }{{true, true}, {false, true}, {false, false}} {
		b.Run(fmt.Sprintf("avx512=%v/avx2=%v", path.avx512 && usePopcnt512, path.avx2 && useAVX2), func(b *testing.B) {
			saved512, saved2 := usePopcnt512, useAVX2
			usePopcnt512, useAVX2 = usePopcnt512 && path.avx512, useAVX2 && path.avx2
			defer func() { usePopcnt512, useAVX2 = saved512, saved2 }()
			for b.Loop() {
				HammingBlocks(q, blocks, nblocks, out)
			}
		})
	}
}

// TestSignBits checks every bit against math.Signbit for lengths below, at and past whole words,
// negative zero and infinities included, with and without the AVX2 kernel.
func TestSignBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, fast := range []bool{true, false} {
		saved := useAVX2
		useAVX2 = useAVX2 && fast
		for _, n := range []int{1, 5, 63, 64, 65, 127, 384, 768, 770} {
			x := make([]float64, n)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			x[0] = math.Copysign(0, -1)
			if n > 2 {
				x[1], x[2] = math.Inf(1), math.Inf(-1)
			}
			dst := make([]uint64, (n+63)/64+1)
			dst[len(dst)-1] = 12345 // past the sketch: left alone
			SignBits(x, dst)
			for i, v := range x {
				if got := dst[i/64]>>(i%64)&1 == 1; got != math.Signbit(v) {
					t.Fatalf("AVX2 %v, n %d, coordinate %d (%v): bit %v", useAVX2, n, i, v, got)
				}
			}
			if n%64 != 0 && dst[n/64]>>(n%64) != 0 {
				t.Fatalf("AVX2 %v, n %d: bits set past the last coordinate", useAVX2, n)
			}
			if dst[len(dst)-1] != 12345 {
				t.Fatalf("AVX2 %v, n %d: wrote past the sketch", useAVX2, n)
			}
		}
		useAVX2 = saved
	}
}
