package metrics

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// PairedTest is the outcome of a paired significance test of H0: the per-query scores of two
// systems have the same mean (two-sided).
type PairedTest struct {
	// N is the number of pairs.
	N int
	// MeanDiff is mean(a - b).
	MeanDiff float64
	// Statistic is t for the t-test and MeanDiff for the randomisation test.
	Statistic float64
	// P is the two-sided p-value; NaN when the test is undefined (fewer than two pairs, or every
	// difference zero for the t-test).
	P float64
}

func pairedDiffs(a, b []float64) ([]float64, error) {
	if len(a) != len(b) {
		return nil, fmt.Errorf("paired test: %d scores against %d", len(a), len(b))
	}
	if len(a) == 0 {
		return nil, errors.New("paired test: no pairs")
	}
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return d, nil
}

// PairedTTest is Student's paired t-test (scipy.stats.ttest_rel): t = mean(d) / (sd(d)/√n) with
// d = a - b, sd with n-1 degrees of freedom, and p = 2·P(T > |t|) for T ~ Student's t with n-1
// degrees of freedom. When every difference is equal t is ±Inf (p = 0), or NaN (p = NaN) when
// they are all zero, as in scipy.
func PairedTTest(a, b []float64) (PairedTest, error) {
	d, err := pairedDiffs(a, b)
	if err != nil {
		return PairedTest{}, err
	}
	n := float64(len(d))
	mean := 0.0
	for _, x := range d {
		mean += x
	}
	mean /= n
	res := PairedTest{N: len(d), MeanDiff: mean, Statistic: math.NaN(), P: math.NaN()}
	if len(d) < 2 {
		return res, nil
	}
	ss := 0.0
	for _, x := range d {
		ss += (x - mean) * (x - mean)
	}
	se := math.Sqrt(ss/(n-1)) / math.Sqrt(n)
	res.Statistic = mean / se
	if math.IsNaN(res.Statistic) {
		return res, nil
	}
	if math.IsInf(res.Statistic, 0) {
		res.P = 0
		return res, nil
	}
	res.P = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Survival(math.Abs(res.Statistic))
	return res, nil
}

// PairedRandomization is the paired randomisation (sign-flip permutation) test: under H0 each
// difference d = a - b is equally likely to have either sign, so the p-value is the share of
// random sign assignments whose |mean| is at least the observed |mean(d)|, estimated with
// rounds assignments drawn from rng as (count + 1) / (rounds + 1) (never 0). A small tolerance
// (1e-12 relative) counts floating-point equal means as "at least". P is NaN for rounds < 1.
func PairedRandomization(a, b []float64, rounds int, rng *rand.Rand) (PairedTest, error) {
	d, err := pairedDiffs(a, b)
	if err != nil {
		return PairedTest{}, err
	}
	sum := 0.0
	for _, x := range d {
		sum += x
	}
	n := float64(len(d))
	res := PairedTest{N: len(d), MeanDiff: sum / n, Statistic: sum / n, P: math.NaN()}
	if rounds < 1 {
		return res, nil
	}
	observed := math.Abs(sum)
	tol := 1e-12 * math.Max(observed, 1e-300)
	count := 0
	for range rounds {
		s := 0.0
		// One random bit per difference, 64 at a time.
		var bits uint64
		for i, x := range d {
			if i%64 == 0 {
				bits = rng.Uint64()
			}
			if bits&1 == 1 {
				s += x
			} else {
				s -= x
			}
			bits >>= 1
		}
		if math.Abs(s) >= observed-tol {
			count++
		}
	}
	res.P = float64(count+1) / float64(rounds+1)
	return res, nil
}
