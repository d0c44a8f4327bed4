package bandit

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Calibrator maps a candidate's retrieval features to P(relevant | features) with a logistic
// regression fitted on a labelled split (dev, never test). The features of candidate i in a
// ranking are its semantic score, its gap to the top candidate's score and log(1 + rank), so
// the same cosine means more when it leads the list by a margin; and, when the fit keeps it, the
// tool's hubness (Hubness): how often the calibration split's queries retrieve it at all.
type Calibrator struct {
	// Weights of (intercept, S_sem, S_sem − S_sem(top), log(1 + rank)).
	Weights [CalibrationFeatures]float64 `json:"weights" yaml:"weights"`
	// Hub is the hubness feature and its weight; nil when the fit had none or dropped it.
	Hub *Hubness `json:"hub,omitempty" yaml:"hub,omitempty"`
	// HubDropped says why a hubness feature that was offered to the fit was left out ("": it
	// was kept, or none was offered).
	HubDropped string `json:"hub_dropped,omitempty" yaml:"hub_dropped,omitempty"`
	// Examples and Positives count the fitting data (for reports).
	Examples  int `json:"examples" yaml:"examples"`
	Positives int `json:"positives" yaml:"positives"`
}

// CalibrationFeatures is the number of base calibration features, intercept included.
const CalibrationFeatures = 4

// Hubness is the query-bank hubness feature (a "hub" is a tool that dense and lexical
// retrievers rank high for many unrelated queries: a generic description near the centre of
// the embedding space). Its value for a tool is log((c + a·s̄)/(n + a)): c the number of the
// bank's n queries (the calibration split) that have the tool among their top Depth candidates,
// s̄ = Depth / catalog size the share of an average tool and a = Strength pseudo-queries at it.
// A tool retrieved for many queries can serve only some of them, so the same score means less
// from it; the feature uses no relevance label and no feedback, only the bank's rankings.
type Hubness struct {
	// Weight is the feature's logistic weight (< 0: a fitted weight ≥ 0 drops the feature).
	Weight float64 `json:"weight" yaml:"weight"`
	// Depth is the number of top candidates of each bank query counted.
	Depth int `json:"depth" yaml:"depth"`
	// Queries is the bank's size n.
	Queries int `json:"queries" yaml:"queries"`
	// Strength a: pseudo-queries at the average share behind every tool's count.
	Strength float64 `json:"strength" yaml:"strength"`
	// MeanShare s̄ = Depth / catalog size.
	MeanShare float64 `json:"mean_share" yaml:"mean_share"`
	// LikelihoodRatio is 2·(ℓ with the feature − ℓ without), the test statistic of the fit.
	LikelihoodRatio float64 `json:"likelihood_ratio" yaml:"likelihood_ratio"`
	// Counts[id] is c for every tool of the catalog the bank was ranked over (zeros included).
	Counts map[string]int `json:"counts" yaml:"counts"`

	byTool  []float64 // the feature by tool index; non-nil once ForTools has bound the copy
	unknown float64   // Unknown(), computed by ForTools
}

// HubConfig offers the hubness feature to FitCalibrator.
type HubConfig struct {
	// Depth: the top candidates of each bank query that count (≥ 1, at most the lists' length).
	Depth int
	// Strength a > 0: pseudo-queries at the average share.
	Strength float64
	// Catalog lists every tool the bank queries were ranked over, so that a tool no query
	// retrieved has a count of 0 rather than none.
	Catalog []string
}

// The hubness feature's defaults, the same in configs/paper.yaml (dynamic.hubness) and for the
// calibration `rated serve` fits: every candidate of the list counts (K = 10), behind a hundred
// pseudo-queries at the average share (chosen on the dev splits by cross-validated log-loss,
// scripts/hubness-cv.py: docs/RESULTS.md, "Hubness").
const (
	DefaultHubnessDepth    = 10
	DefaultHubnessStrength = 100
)

// hubMinLikelihoodRatio is the 1% point of χ² with one degree of freedom: the hubness feature is
// kept only when it improves the fit's log-likelihood that much (likelihood-ratio test, p <
// 0.01) with a negative weight, so a benchmark whose dev split shows no hub effect, or too few
// queries to see one, is calibrated as without it.
const hubMinLikelihoodRatio = 6.634896601021214

// CalibrationList is one labelled ranking: semantic scores best first, relevance labels and,
// for the hubness feature, the tools' ids.
type CalibrationList struct {
	Sem      []float64
	Relevant []bool
	Tools    []string
}

// feature returns the hubness feature of a tool that c of the n bank queries retrieved.
func (h *Hubness) feature(c, n int) float64 {
	return math.Log((float64(c) + h.Strength*h.MeanShare) / (float64(n) + h.Strength))
}

// Unknown is the feature of a tool the bank did not cover (added to the catalog after the fit):
// the mean of the feature over the bank's catalog, so that its logit is, in expectation, that of
// a tool drawn from the catalog (the logit is linear in the feature).
func (h *Hubness) Unknown() float64 {
	if h.byTool != nil {
		return h.unknown
	}
	if len(h.Counts) == 0 {
		return math.Log(h.MeanShare)
	}
	sum := 0.0
	for _, id := range slices.Sorted(maps.Keys(h.Counts)) { // one order: the same sum on every run
		sum += h.feature(h.Counts[id], h.Queries)
	}
	return sum / float64(len(h.Counts))
}

// Feature returns the hubness feature of the tool with this id (Unknown for a tool the bank did
// not cover).
func (h *Hubness) Feature(id string) float64 {
	c, ok := h.Counts[id]
	if !ok {
		return h.Unknown()
	}
	return h.feature(c, h.Queries)
}

// ForTools returns a copy of c whose hubness feature is looked up by tool index, ids[i] being
// the id of tool i, as Candidate.Tool numbers them. c is not changed, so one fitted calibrator
// can serve catalogs that change (a tool beyond ids has an uncovered tool's feature, Unknown).
func (c *Calibrator) ForTools(ids []string) *Calibrator {
	if c.Hub == nil {
		return c
	}
	out, hub := *c, *c.Hub
	hub.unknown = c.Hub.Unknown()
	hub.byTool = make([]float64, len(ids))
	for i, id := range ids {
		hub.byTool[i] = hub.Feature(id)
	}
	out.Hub = &hub
	return &out
}

// hubAt returns the hubness feature of tool index i.
func (h *Hubness) hubAt(i int) float64 {
	if i >= 0 && i < len(h.byTool) {
		return h.byTool[i]
	}
	return h.Unknown()
}

// FitCalibrator fits the logistic regression by iteratively reweighted least squares (Newton's
// method) to maximum likelihood; ridge (> 0, e.g. 1e-6) on the non-intercept weights keeps the
// Newton system well-posed when a feature separates the data. With hub the hubness feature is
// offered: its counts come from the lists themselves (the calibration split is the query bank),
// each list's own query left out of the counts it is fitted with, and it is kept only when its
// weight is negative and the likelihood-ratio test against the fit without it gives p < 0.01
// (HubDropped says otherwise why not).
func FitCalibrator(lists []CalibrationList, ridge float64, hub *HubConfig) (*Calibrator, error) {
	var xs [][]float64
	var ys []float64
	c := &Calibrator{}
	for li, l := range lists {
		if len(l.Sem) != len(l.Relevant) {
			return nil, fmt.Errorf("calibration list %d: %d scores but %d labels", li, len(l.Sem), len(l.Relevant))
		}
		if hub != nil && len(l.Tools) != len(l.Sem) {
			return nil, fmt.Errorf("calibration list %d: %d scores but %d tool ids (the hubness feature needs them)", li, len(l.Sem), len(l.Tools))
		}
		for i := range l.Sem {
			var f [CalibrationFeatures]float64
			calibrationFeatures(l.Sem, i, &f)
			for _, v := range f {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("calibration list %d, position %d: score %v is not finite", li, i, l.Sem[i])
				}
			}
			xs = append(xs, f[:])
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
	w, ll, err := fitLogistic(xs, ys, ridge)
	if err != nil {
		return nil, err
	}
	copy(c.Weights[:], w)
	if hub == nil {
		return c, nil
	}
	h, hx, err := hubFeatures(lists, hub)
	if err != nil {
		return nil, err
	}
	xh := make([][]float64, len(xs))
	for n := range xs {
		xh[n] = append(append(make([]float64, 0, CalibrationFeatures+1), xs[n]...), hx[n])
	}
	wh, llh, err := fitLogistic(xh, ys, ridge)
	if err != nil {
		return nil, err
	}
	h.Weight, h.LikelihoodRatio = wh[CalibrationFeatures], 2*(llh-ll)
	switch {
	case h.Weight >= 0:
		c.HubDropped = fmt.Sprintf("hubness dropped: its fitted weight %.3g is not negative (likelihood ratio %.3g)", h.Weight, h.LikelihoodRatio)
	case h.LikelihoodRatio < hubMinLikelihoodRatio:
		c.HubDropped = fmt.Sprintf("hubness dropped: likelihood ratio %.3g < %.3g (p ≥ 0.01; weight %.3g)", h.LikelihoodRatio, hubMinLikelihoodRatio, h.Weight)
	default:
		copy(c.Weights[:], wh[:CalibrationFeatures])
		c.Hub = h
	}
	return c, nil
}

// hubFeatures counts, for every catalog tool, the lists that have it among their top Depth, and
// returns the feature of every example in list order, each list's own query left out.
func hubFeatures(lists []CalibrationList, cfg *HubConfig) (*Hubness, []float64, error) {
	switch {
	case cfg.Depth < 1:
		return nil, nil, fmt.Errorf("hubness depth %d: must be >= 1", cfg.Depth)
	case !(cfg.Strength > 0) || math.IsInf(cfg.Strength, 0):
		return nil, nil, fmt.Errorf("hubness strength %v: must be a finite number > 0", cfg.Strength)
	case len(cfg.Catalog) == 0:
		return nil, nil, errors.New("hubness needs the catalog the bank was ranked over")
	case len(lists) < 2:
		return nil, nil, fmt.Errorf("hubness needs at least 2 bank queries, got %d", len(lists))
	}
	h := &Hubness{Depth: cfg.Depth, Queries: len(lists), Strength: cfg.Strength,
		MeanShare: min(1, float64(cfg.Depth)/float64(len(cfg.Catalog))), Counts: make(map[string]int, len(cfg.Catalog))}
	for _, id := range cfg.Catalog {
		h.Counts[id] = 0
	}
	for li, l := range lists {
		for i, id := range l.Tools {
			if _, ok := h.Counts[id]; !ok {
				return nil, nil, fmt.Errorf("calibration list %d, position %d: tool %q is not in the catalog", li, i, id)
			}
		}
		for _, id := range l.Tools[:min(cfg.Depth, len(l.Tools))] {
			h.Counts[id]++
		}
	}
	var x []float64
	for _, l := range lists {
		for i, id := range l.Tools {
			own := 0
			if i < cfg.Depth {
				own = 1 // this list's own query counted it
			}
			x = append(x, h.feature(h.Counts[id]-own, h.Queries-1))
		}
	}
	return h, x, nil
}

// fitLogistic maximises Σ y·log μ + (1 − y)·log(1 − μ) − ridge/2·‖w₁…‖², μ = σ(w·x), with x[0] =
// 1 the unpenalised intercept, by Newton's method from the base rate; it returns the weights
// and the unpenalised log-likelihood.
func fitLogistic(xs [][]float64, ys []float64, ridge float64) ([]float64, float64, error) {
	p := len(xs[0])
	w := make([]float64, p)
	pos := 0.0
	for _, y := range ys {
		pos += y
	}
	base := pos / float64(len(ys))
	w[0] = math.Log(base / (1 - base))
	for iter := 0; iter < 100; iter++ {
		h := mat.NewSymDense(p, nil)
		g := mat.NewVecDense(p, nil)
		for n, x := range xs {
			mu := sigmoid(dot(w, x))
			wt := mu * (1 - mu)
			for a := 0; a < p; a++ {
				g.SetVec(a, g.AtVec(a)+(ys[n]-mu)*x[a])
				for b := a; b < p; b++ {
					h.SetSym(a, b, h.At(a, b)+wt*x[a]*x[b])
				}
			}
		}
		for a := 1; a < p; a++ {
			g.SetVec(a, g.AtVec(a)-ridge*w[a])
			h.SetSym(a, a, h.At(a, a)+ridge)
		}
		var step mat.VecDense
		if err := step.SolveVec(h, g); err != nil {
			return nil, 0, fmt.Errorf("calibration: Newton step: %w", err)
		}
		maxStep := 0.0
		for a := 0; a < p; a++ {
			w[a] += step.AtVec(a)
			maxStep = math.Max(maxStep, math.Abs(step.AtVec(a)))
		}
		if maxStep < 1e-10 {
			break
		}
	}
	ll := 0.0
	for n, x := range xs {
		z := dot(w, x)
		// log σ(z) = −log(1 + e^−z), written to stay finite for large |z|.
		if ys[n] == 1 {
			ll -= softplus(-z)
		} else {
			ll -= softplus(z)
		}
	}
	return w, ll, nil
}

// softplus is log(1 + e^z) without overflow.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

// Apply sets Relevance of every candidate of a ranking (best first) from its Sem scores and,
// with the hubness feature, its tool (the index ForTools was given). A calibrator with the
// feature is applied as ForTools returns it: unbound, it takes every tool for one the bank did
// not cover and averages the catalog's features for each candidate.
func (c *Calibrator) Apply(cands []Candidate) {
	if len(cands) == 0 {
		return
	}
	w := &c.Weights
	top := cands[0].Sem
	for i := range cands {
		sem := cands[i].Sem
		z := w[0] + w[1]*sem + w[2]*(sem-top) + w[3]*log1pRank(i)
		if c.Hub != nil {
			z += c.Hub.Weight * c.Hub.hubAt(cands[i].Tool)
		}
		cands[i].Relevance = sigmoid(z)
	}
}

// Describe names the features of the fit and, for the hubness feature, its weight and test or
// why it was dropped.
func (c *Calibrator) Describe() string {
	if c.Hub == nil {
		s := "logistic P(relevant | S_sem, gap to top, log(1+rank))"
		if c.HubDropped != "" {
			s += "; " + c.HubDropped
		}
		return s
	}
	return fmt.Sprintf("logistic P(relevant | S_sem, gap to top, log(1+rank), hubness: the share of the %d bank queries retrieving the tool in their top %d; weight %.3g, likelihood ratio %.3g)",
		c.Hub.Queries, c.Hub.Depth, c.Hub.Weight, c.Hub.LikelihoodRatio)
}

// Validate checks a calibrator read from a file: finite weights, and a hubness feature that the
// fit could have produced.
func (c *Calibrator) Validate() error {
	for i, w := range c.Weights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("weights[%d] = %v is not finite", i, w)
		}
	}
	h := c.Hub
	if h == nil {
		return nil
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"hub.weight", h.Weight}, {"hub.likelihood_ratio", h.LikelihoodRatio}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s = %v is not finite", f.name, f.v)
		}
	}
	switch {
	case !(h.Weight < 0):
		return fmt.Errorf("hub.weight = %v: must be negative (a fit keeps the feature only then)", h.Weight)
	case h.LikelihoodRatio < hubMinLikelihoodRatio:
		return fmt.Errorf("hub.likelihood_ratio = %v: a fit keeps the feature only at %.4g or more", h.LikelihoodRatio, hubMinLikelihoodRatio)
	case h.Depth < 1:
		return fmt.Errorf("hub.depth = %d: must be >= 1", h.Depth)
	case h.Queries < 2:
		return fmt.Errorf("hub.queries = %d: must be >= 2 (the bank's size)", h.Queries)
	case !(h.Strength > 0) || math.IsInf(h.Strength, 0):
		return fmt.Errorf("hub.strength = %v: must be a finite number > 0", h.Strength)
	case len(h.Counts) == 0:
		return errors.New("hub.counts: empty (every tool of the bank's catalog has a count, zeros included)")
	case math.Abs(h.MeanShare-min(1, float64(h.Depth)/float64(len(h.Counts)))) > 1e-9*h.MeanShare:
		return fmt.Errorf("hub.mean_share = %v: must be depth / catalog size = min(1, %d / %d)", h.MeanShare, h.Depth, len(h.Counts))
	}
	for _, id := range slices.Sorted(maps.Keys(h.Counts)) { // the first offending id, the same on every run
		if n := h.Counts[id]; n < 0 || n > h.Queries {
			return fmt.Errorf("hub.counts[%q] = %d: must be in [0, hub.queries = %d]", id, n, h.Queries)
		}
	}
	return nil
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

// calibrationFeatures writes the base features of position i of a ranking with scores sem.
func calibrationFeatures(sem []float64, i int, f *[CalibrationFeatures]float64) {
	f[0], f[1], f[2], f[3] = 1, sem[i], sem[i]-sem[0], log1pRank(i)
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}
