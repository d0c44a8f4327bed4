package metrics

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Summary is a mean with the half-width of its 95% confidence interval over n samples.
type Summary struct {
	Mean float64 `json:"mean"`
	CI95 float64 `json:"ci95"`
	N    int     `json:"n"`
}

// MeanCI95 returns the sample mean and the half-width of the two-sided 95% Student-t confidence
// interval, t(0.975, n−1)·s/√n. With fewer than two samples the half-width is 0.
func MeanCI95(xs []float64) Summary {
	n := len(xs)
	if n == 0 {
		return Summary{Mean: math.NaN()}
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n < 2 {
		return Summary{Mean: mean, N: n}
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
	return Summary{Mean: mean, CI95: t * sd / math.Sqrt(float64(n)), N: n}
}

// Percentile returns the p-th percentile (0..100) of xs by linear interpolation between closest
// ranks (numpy's default), or NaN for no data. xs is not modified.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sortFloats(s)
	pos := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}
