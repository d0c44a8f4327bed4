package vecmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestDot2MatchesGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 385, 769, 1024} {
		v := func() []float64 {
			s := make([]float64, n)
			for i := range s {
				s[i] = rng.NormFloat64()
			}
			return s
		}
		a, x, b, y := v(), v(), v(), v()
		s1, s2 := Dot2(a, x, b, y)
		// Reference: plain sums in float64, computed independently here.
		var r1, r2 float64
		for i := 0; i < n; i++ {
			r1 += a[i] * x[i]
			r2 += b[i] * y[i]
		}
		if math.Abs(s1-r1) > 1e-12*(1+math.Abs(r1))*float64(n+1) || math.Abs(s2-r2) > 1e-12*(1+math.Abs(r2))*float64(n+1) {
			t.Errorf("n=%d: got (%v, %v), want (%v, %v)", n, s1, s2, r1, r2)
		}
	}
}

func TestDot2HandComputed(t *testing.T) {
	a := make([]float64, 20)
	x := make([]float64, 20)
	for i := range a {
		a[i], x[i] = float64(i), 2
	}
	// Σ 2i for i < 20 = 380; b·y with b = a, y = a: Σ i² = 2470.
	s1, s2 := Dot2(a, x, a, a)
	if s1 != 380 || s2 != 2470 {
		t.Fatalf("got (%v, %v), want (380, 2470)", s1, s2)
	}
}

func BenchmarkDot2(b *testing.B) {
	s := make([]float64, 769)
	for i := range s {
		s[i] = float64(i % 7)
	}
	b.Run("avx2", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Dot2(s, s, s, s)
		}
	})
	b.Run("generic", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			dot2Generic(s, s, s, s)
		}
	})
}
