package vecmath

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// TestDotBlock compares every score with a float64 dot product computed here, for shapes that
// exercise the 4×3 kernel, the 4×1 document tail, the m%4 query tail and dims with a remainder
// after the last multiple of 8, with and without the AVX2 kernel.
func TestDotBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, avx := range []bool{true, false} {
		saved := useAVX2
		useAVX2 = useAVX2 && avx
		for _, dim := range []int{384, 768, 13, 8, 5, 1} {
			for m := 1; m <= 9; m++ {
				for _, n := range []int{1, 2, 3, 4, 7, 10} {
					a, b := randVec(rng, m*dim), randVec(rng, n*dim)
					c := make([]float32, m*n)
					DotBlock(a, m, b, n, dim, c)
					for i := range m {
						for j := range n {
							want, scale := 0.0, 0.0
							for k := range dim {
								p := float64(a[i*dim+k]) * float64(b[j*dim+k])
								want += p
								scale += math.Abs(p)
							}
							if got := float64(c[i*n+j]); math.Abs(got-want) > 1e-5*scale+1e-7 {
								t.Fatalf("avx %v dim %d m %d n %d: c[%d,%d] = %v, want %v", useAVX2, dim, m, n, i, j, got, want)
							}
						}
					}
				}
			}
		}
		useAVX2 = saved
	}
}

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// BenchmarkDotBlock times one 64-query × 512-document score block at d=384 (GFLOP/s: 2·m·n·d
// per op): the AVX2 kernel, the plain Go loop, and gonum's blas32.Gemm (NoTrans × Trans, the
// call the issue proposed) on the same block.
func BenchmarkDotBlock(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	const m, n, dim = 64, 512, 384
	a, d, c := randVec(rng, m*dim), randVec(rng, n*dim), make([]float32, m*n)
	gflops := func(b *testing.B) {
		b.ReportMetric(2*m*n*dim*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	}
	b.Run("avx2", func(b *testing.B) {
		if !useAVX2 {
			b.Skip("no AVX2/FMA")
		}
		for b.Loop() {
			DotBlock(a, m, d, n, dim, c)
		}
		gflops(b)
	})
	b.Run("generic", func(b *testing.B) {
		saved := useAVX2
		useAVX2 = false
		defer func() { useAVX2 = saved }()
		for b.Loop() {
			DotBlock(a, m, d, n, dim, c)
		}
		gflops(b)
	})
	b.Run("gonum-sgemm", func(b *testing.B) {
		for b.Loop() {
			blas32.Gemm(blas.NoTrans, blas.Trans, 1,
				blas32.General{Rows: m, Cols: dim, Stride: dim, Data: a},
				blas32.General{Rows: n, Cols: dim, Stride: dim, Data: d}, 0,
				blas32.General{Rows: m, Cols: n, Stride: n, Data: c})
		}
		gflops(b)
	})
}
