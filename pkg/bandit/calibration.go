package bandit

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Calibrator maps a candidate's retrieval features to P(relevant | features) with a logistic
// regression fitted on a labelled split (dev, never test). The features of candidate i in a
// ranking are its semantic score, its gap to the top candidate's score and log(1 + rank), so
// the same cosine means more when it leads the list by a margin.
type Calibrator struct {
	// Weights of (intercept, S_sem, S_sem − S_sem(top), log(1 + rank)).
	Weights [CalibrationFeatures]float64 `json:"weights" yaml:"weights"`
	// Examples and Positives count the fitting data (for reports).
	Examples  int `json:"examples" yaml:"examples"`
	Positives int `json:"positives" yaml:"positives"`
}

// CalibrationFeatures is the number of calibration features, intercept included.
const CalibrationFeatures = 4

// CalibrationList is one labelled ranking: semantic scores best first and relevance labels.
type CalibrationList struct {
	Sem      []float64
	Relevant []bool
}

// calibrationFeatures writes the features of position i of a ranking with scores sem.
func calibrationFeatures(sem []float64, i int, f *[CalibrationFeatures]float64) {
	f[0], f[1], f[2], f[3] = 1, sem[i], sem[i]-sem[0], log1pRank(i)
}

// FitCalibrator fits the logistic regression by iteratively reweighted least squares (Newton's
// method) to maximum likelihood; ridge (> 0, e.g. 1e-6) on the non-intercept weights keeps the
// Newton system well-posed when a feature separates the data.
func FitCalibrator(lists []CalibrationList, ridge float64) (*Calibrator, error) {
	var xs [][CalibrationFeatures]float64
	var ys []float64
	c := &Calibrator{}
	for li, l := range lists {
		if len(l.Sem) != len(l.Relevant) {
			return nil, fmt.Errorf("calibration list %d: %d scores but %d labels", li, len(l.Sem), len(l.Relevant))
		}
		for i := range l.Sem {
			var f [CalibrationFeatures]float64
			calibrationFeatures(l.Sem, i, &f)
			for _, v := range f {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("calibration list %d, position %d: score %v is not finite", li, i, l.Sem[i])
				}
			}
			xs = append(xs, f)
			y := 0.0
			if l.Relevant[i] {
				y = 1
				c.Positives++
			}
			ys = append(ys, y)
		}
	}
	c.Examples = len(ys)
	if c.Positives == 0 || c.Positives == c.Examples {
		return nil, errors.New("calibration needs both relevant and irrelevant candidates")
	}
	const p = CalibrationFeatures
	// Start at the base rate.
	base := float64(c.Positives) / float64(c.Examples)
	c.Weights[0] = math.Log(base / (1 - base))
	for iter := 0; iter < 100; iter++ {
		h := mat.NewSymDense(p, nil)
		g := mat.NewVecDense(p, nil)
		for n, x := range xs {
			mu := sigmoid(dot4(&c.Weights, &x))
			w := mu * (1 - mu)
			for a := 0; a < p; a++ {
				g.SetVec(a, g.AtVec(a)+(ys[n]-mu)*x[a])
				for b := a; b < p; b++ {
					h.SetSym(a, b, h.At(a, b)+w*x[a]*x[b])
				}
			}
		}
		for a := 1; a < p; a++ {
			g.SetVec(a, g.AtVec(a)-ridge*c.Weights[a])
			h.SetSym(a, a, h.At(a, a)+ridge)
		}
		var step mat.VecDense
		if err := step.SolveVec(h, g); err != nil {
			return nil, fmt.Errorf("calibration: Newton step: %w", err)
		}
		maxStep := 0.0
		for a := 0; a < p; a++ {
			c.Weights[a] += step.AtVec(a)
			maxStep = math.Max(maxStep, math.Abs(step.AtVec(a)))
		}
		if maxStep < 1e-10 {
			return c, nil
		}
	}
	return c, nil
}

// Apply sets Relevance of every candidate of a ranking (best first) from its Sem scores.
func (c *Calibrator) Apply(cands []Candidate) {
	if len(cands) == 0 {
		return
	}
	w := &c.Weights
	top := cands[0].Sem
	for i := range cands {
		sem := cands[i].Sem
		cands[i].Relevance = sigmoid(w[0] + w[1]*sem + w[2]*(sem-top) + w[3]*log1pRank(i))
	}
}

// log1pRank is log(1 + i), from a table for the ranks a policy sees.
func log1pRank(i int) float64 {
	if i < len(log1pTable) {
		return log1pTable[i]
	}
	return math.Log1p(float64(i))
}

var log1pTable = func() [64]float64 {
	var t [64]float64
	for i := range t {
		t[i] = math.Log1p(float64(i))
	}
	return t
}()

// Probability returns P(relevant) of position i of a ranking with semantic scores sem.
func (c *Calibrator) Probability(sem []float64, i int) float64 {
	var f [CalibrationFeatures]float64
	calibrationFeatures(sem, i, &f)
	return sigmoid(dot4(&c.Weights, &f))
}

func dot4(w, x *[CalibrationFeatures]float64) float64 {
	s := 0.0
	for i := range w {
		s += w[i] * x[i]
	}
	return s
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}
