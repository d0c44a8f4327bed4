package vecmath

import (
	"math"
	"testing"
)

// TestNormaliseRows: (3, 4) becomes (0.6, 0.8), a zero row stays zero, (0, -2) becomes (0, -1).
func TestNormaliseRows(t *testing.T) {
	m := []float32{3, 4, 0, 0, 0, -2}
	NormaliseRows(m, 2)
	want := []float32{0.6, 0.8, 0, 0, 0, -1}
	for i := range m {
		if math.Abs(float64(m[i]-want[i])) > 1e-7 {
			t.Fatalf("got %v, want %v", m, want)
		}
	}
}
