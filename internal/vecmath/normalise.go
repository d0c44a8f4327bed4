package vecmath

import "math"

// NormaliseRows scales every non-zero row of m (rows of dim values, row-major) to unit length,
// summing squares in float64.
func NormaliseRows(m []float32, dim int) {
	for lo := 0; lo+dim <= len(m); lo += dim {
		r := m[lo : lo+dim]
		s := 0.0
		for _, v := range r {
			s += float64(v) * float64(v)
		}
		if s == 0 {
			continue
		}
		inv := float32(1 / math.Sqrt(s))
		for j := range r {
			r[j] *= inv
		}
	}
}
