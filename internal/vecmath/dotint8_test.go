package vecmath

import (
	"math/rand/v2"
	"testing"
)

// TestDotInt8Rows compares every score with an int64 sum computed here, for dims with and
// without a remainder after the last multiple of 16, extreme values, row counts around the
// kernel's 4, with and without AVX2.
func TestDotInt8Rows(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, avx := range []bool{true, false} {
		saved := useAVX2
		useAVX2 = useAVX2 && avx
		for _, dim := range []int{384, 768, 16, 17, 40, 5} {
			for _, n := range []int{1, 3, 4, 5, 9, 16} {
				q := make([]int16, dim)
				d := make([]int8, n*dim)
				for i := range q {
					q[i] = int16(rng.IntN(255) - 127)
				}
				for i := range d {
					d[i] = int8(rng.IntN(255) - 127)
				}
				if n > 2 { // extremes
					for i := range dim {
						q[i], d[i], d[dim+i] = 127, 127, -127
					}
				}
				out := make([]int32, n)
				DotInt8Rows(q, d, n, dim, out)
				for j := range n {
					var want int64
					for i := range dim {
						want += int64(q[i]) * int64(d[j*dim+i])
					}
					if int64(out[j]) != want {
						t.Fatalf("avx %v dim %d n %d row %d: %d, want %d", useAVX2, dim, n, j, out[j], want)
					}
				}
			}
		}
		useAVX2 = saved
	}
}
