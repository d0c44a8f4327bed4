package vecmath

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/rated-dev/rated/internal/cputime"
)

// TestDotBlock compares every score with a float64 dot product computed here, for shapes that
// exercise the 4×6 AVX-512 kernel and its document remainder (n%6, finished by the AVX2
// kernels), the 4×3 and 4×1 AVX2 kernels, the m%4 query tail and dims with a remainder after
// the last multiple of 16 and of 8, with each dispatch path on and off: AVX-512 (where the CPU
// has it), AVX2 alone, plain Go.
func TestDotBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	eachPath(t, func(path string) {
		for _, dim := range []int{384, 768, 13, 8, 5, 1, 16, 17, 24, 31, 40} {
			for m := 1; m <= 9; m++ {
				for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 10, 12, 13, 17} {
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
								t.Fatalf("%s dim %d m %d n %d: c[%d,%d] = %v, want %v", path, dim, m, n, i, j, got, want)
							}
						}
					}
				}
			}
		}
	})
}

// eachPath runs f with each dispatch path of DotBlock switched on in turn: AVX-512 (where the
// CPU has it), AVX2 alone, plain Go.
func eachPath(t *testing.T, f func(path string)) {
	saved2, saved512 := useAVX2, useAVX512
	defer func() { useAVX2, useAVX512 = saved2, saved512 }()
	for _, path := range []struct {
		name         string
		avx2, avx512 bool
	}{{"avx512", saved2, saved512}, {"avx2", saved2, false}, {"generic", false, false}} {
		useAVX2, useAVX512 = path.avx2, path.avx512
		if path.name != "generic" && !useAVX2 || path.name == "avx512" && !useAVX512 {
			t.Logf("%s: not on this CPU", path.name)
			continue
		}
		f(path.name)
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
// per op): the AVX-512 and AVX2 kernels, the plain Go loop, and gonum's blas32.Gemm (NoTrans × Trans, the
// call the issue proposed) on the same block.
func BenchmarkDotBlock(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	const m, n, dim = 64, 512, 384
	a, d, c := randVec(rng, m*dim), randVec(rng, n*dim), make([]float32, m*n)
	var cpu0 time.Duration
	gflops := func(b *testing.B) {
		b.ReportMetric(2*m*n*dim*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		// Per second of this process's CPU time: steadier than wall time on a shared machine
		// (run with -cpu 1 so no other goroutine adds to it).
		b.ReportMetric(2*m*n*dim*float64(b.N)/(processCPU()-cpu0).Seconds()/1e9, "cpu-GFLOP/s")
	}
	b.Run("avx512", func(b *testing.B) {
		if !useAVX512 {
			b.Skip("no AVX-512")
		}
		cpu0 = processCPU()
		for b.Loop() {
			DotBlock(a, m, d, n, dim, c)
		}
		gflops(b)
	})
	b.Run("avx2", func(b *testing.B) {
		if !useAVX2 {
			b.Skip("no AVX2/FMA")
		}
		saved := useAVX512
		useAVX512 = false
		defer func() { useAVX512 = saved }()
		cpu0 = processCPU()
		for b.Loop() {
			DotBlock(a, m, d, n, dim, c)
		}
		gflops(b)
	})
	b.Run("generic", func(b *testing.B) {
		saved2, saved512 := useAVX2, useAVX512
		useAVX2, useAVX512 = false, false
		defer func() { useAVX2, useAVX512 = saved2, saved512 }()
		cpu0 = processCPU()
		for b.Loop() {
			DotBlock(a, m, d, n, dim, c)
		}
		gflops(b)
	})
	b.Run("gonum-sgemm", func(b *testing.B) {
		cpu0 = processCPU()
		for b.Loop() {
			blas32.Gemm(blas.NoTrans, blas.Trans, 1,
				blas32.General{Rows: m, Cols: dim, Stride: dim, Data: a},
				blas32.General{Rows: n, Cols: dim, Stride: dim, Data: d}, 0,
				blas32.General{Rows: m, Cols: n, Stride: n, Data: c})
		}
		gflops(b)
	})
}

// processCPU is the CPU time (user + system) this process has used.
func processCPU() time.Duration {
	d, _ := cputime.Process() // getrusage(RUSAGE_SELF) cannot fail on Linux
	return d
}

// TestDotBlockScoresCopiesAlike: a document repeated at every position of a block scores the
// same everywhere in a row, on every dispatch path: the last n%6 (AVX-512) or n%3 (AVX2)
// documents went through another kernel, which sums in another order, so copies scored an ulp
// apart and ties were not broken by corpus order.
func TestDotBlockScoresCopiesAlike(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	eachPath(t, func(path string) {
		for _, dim := range []int{384, 13, 20} {
			for _, n := range []int{7, 11, 512, 517} {
				doc := randVec(rng, dim)
				b := make([]float32, 0, n*dim)
				for range n {
					b = append(b, doc...)
				}
				const m = 8
				a := randVec(rng, m*dim)
				c := make([]float32, m*n)
				DotBlock(a, m, b, n, dim, c)
				if allocs := testing.AllocsPerRun(3, func() { DotBlock(a, m, b, n, dim, c) }); allocs != 0 {
					t.Fatalf("%s dim %d n %d: %v allocations per call, want 0", path, dim, n, allocs)
				}
				for i := range m {
					for j := range n {
						if c[i*n+j] != c[i*n] {
							t.Fatalf("%s dim %d n %d: query %d scores copy %d %v, copy 0 %v", path, dim, n, i, j, c[i*n+j], c[i*n])
						}
					}
				}
			}
		}
	})
}
