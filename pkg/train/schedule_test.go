package train

import (
	"math"
	"testing"
)

func TestScheduleLR(t *testing.T) {
	// Hand-computed: peak 1e-5, warm-up 4, total 10.
	s := Schedule{Peak: 1e-5, Warmup: 4, Total: 10}
	cases := []struct {
		step int
		want float64
	}{
		{0, 0.25e-5}, {1, 0.5e-5}, {3, 1e-5}, // warm-up reaches the peak on its last step
		{4, 1e-5}, {7, 0.5e-5}, {9, 1e-5 / 6}, // decay (10-step)/(10-4)
		{10, 0}, {12, 0}, // never negative
	}
	for _, c := range cases {
		if got := s.LR(c.step); math.Abs(got-c.want) > 1e-18 {
			t.Errorf("LR(%d) = %g, want %g", c.step, got, c.want)
		}
	}
	if got := (Schedule{Peak: 2, Warmup: 0, Total: 0}).LR(5); got != 2 {
		t.Errorf("constant schedule LR = %g, want 2", got)
	}
}
