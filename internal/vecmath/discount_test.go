package vecmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestDiscountUpdateHandComputed(t *testing.T) {
	// γ = 0.5, y = 1, λ = 1: d = 0.5·2 + 1 = 2, b = 0.5·4 + 3 = 5, invA = 1/3, θ = 5/3.
	for _, n := range []int{1, 4, 5, 9} {
		d, b, ia, th, x2, x := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		for i := 0; i < n; i++ {
			d[i], b[i], x2[i], x[i] = 2, 4, 1, 3
		}
		DiscountUpdate(d, b, ia, th, x2, x, 0.5, 1, 1)
		for i := 0; i < n; i++ {
			if d[i] != 2 || b[i] != 5 || math.Abs(ia[i]-1.0/3) > 1e-16 || math.Abs(th[i]-5.0/3) > 1e-15 {
				t.Fatalf("n=%d i=%d: d %v b %v invA %v θ %v", n, i, d[i], b[i], ia[i], th[i])
			}
		}
	}
}

func TestDiscountUpdateMatchesScalarLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{3, 4, 7, 385, 769} {
		v := func() []float64 {
			s := make([]float64, n)
			for i := range s {
				s[i] = rng.Float64()
			}
			return s
		}
		d, b, x2, x := v(), v(), v(), v()
		rd, rb := append([]float64(nil), d...), append([]float64(nil), b...)
		ia, th := make([]float64, n), make([]float64, n)
		DiscountUpdate(d, b, ia, th, x2, x, 0.95, 1, 0.7)
		for i := 0; i < n; i++ {
			wd := 0.95*rd[i] + x2[i]
			wb := 0.95*rb[i] + x[i]
			if math.Abs(d[i]-wd) > 1e-15 || math.Abs(b[i]-wb) > 1e-15 || math.Abs(ia[i]-1/(0.7+wd)) > 1e-15 || math.Abs(th[i]-wb/(0.7+wd)) > 1e-14 {
				t.Fatalf("n=%d i=%d mismatch", n, i)
			}
		}
	}
}
