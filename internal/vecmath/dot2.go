// Package vecmath holds the few vector kernels on hot paths: the bandit's fused dot products and
// the score blocks of batched exact search.
package vecmath

import "golang.org/x/sys/cpu"

// Kernel dispatch, decided once from the CPU (and the OS's saving of the ZMM registers, which
// golang.org/x/sys/cpu checks); tests switch paths off to check each against plain Go.
var (
	useAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	useAVX512 = useAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL
	// HammingBlocks' kernel also needs the population count of AVX-512 VPOPCNTDQ.
	usePopcnt512 = useAVX512 && cpu.X86.HasAVX512VPOPCNTDQ
)

// Dot2 returns (a·x, b·y) for four slices of equal length n, in one pass over memory. RATED's
// score needs θᵀx̃ and (A⁻¹)ᵀx̃² for every candidate: fusing them halves the loop overhead, and
// the AVX2/FMA kernel processes 16 elements per iteration. Panics if the lengths differ.
func Dot2(a, x, b, y []float64) (float64, float64) {
	n := len(a)
	if len(x) != n || len(b) != n || len(y) != n {
		panic("vecmath.Dot2: length mismatch")
	}
	if n == 0 {
		return 0, 0
	}
	if useAVX2 && n >= 16 {
		m := n &^ 15
		s1, s2 := dot2AVX2(&a[0], &x[0], &b[0], &y[0], m)
		t1, t2 := dot2Generic(a[m:], x[m:], b[m:], y[m:])
		return s1 + t1, s2 + t2
	}
	return dot2Generic(a, x, b, y)
}

func dot2Generic(a, x, b, y []float64) (float64, float64) {
	var s1, s2 float64
	for i := range a {
		s1 += a[i] * x[i]
		s2 += b[i] * y[i]
	}
	return s1, s2
}
