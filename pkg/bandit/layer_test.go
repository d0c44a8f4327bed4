package bandit

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
)

var issueLayer = HealthConfig{HalfLife: 1000, PriorStrength: 1, PoolRate: 0.05, PoolInit: 1, PoolEvidence: 1,
	ResetOnFailure: true, MaskBase: 100}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Fatalf("%s = %.12g, want %.12g", what, got, want)
	}
}

func TestHealthLayerByHand(t *testing.T) {
	l := NewHealthLayer(issueLayer, nil)
	if r, m := l.Estimate(5, 0); r != 1 || m {
		t.Fatalf("untried tool: r̂ %v masked %v, want p̄₀ = 1, unmasked", r, m)
	}
	l.Update(5, 10, true) // evidence 0 < 1: p̄ ← 1 + 0.05·(1 − 1) = 1; s = 1
	// At t = 1010 the success has halved (H = 1000): evidence 0.5 < 1 feeds p̄ with the failure:
	// p̄ = 1 + 0.05·(0 − 1) = 0.95; the failure resets s; f = 1; masked for D = 100 steps.
	l.Update(5, 1010, false)
	near(t, "p̄", l.Pool(), 0.95)
	r, m := l.Estimate(5, 1010)
	near(t, "r̂ after the failure", r, 0.95/2) // (0 + 1·0.95)/(0 + 1 + 1)
	if !m {
		t.Fatal("a tool that just failed must be masked")
	}
	if _, m := l.Estimate(5, 1110); !m {
		t.Fatal("masked for 100 steps after the failure")
	}
	r, m = l.Estimate(5, 1111)
	f := math.Exp2(-101.0 / 1000)
	near(t, "r̂ at the re-probe", r, 0.95/(f+1))
	if m {
		t.Fatal("the mask ends after D steps")
	}
	// Second consecutive failure at 1200: f = 2^(−190/1000) + 1, p̄ = 0.95·0.95, mask 2·D.
	l.Update(5, 1200, false)
	near(t, "p̄", l.Pool(), 0.9025)
	if _, m := l.Estimate(5, 1400); !m {
		t.Fatal("the second consecutive failure masks for 2·D = 200 steps")
	}
	if _, m := l.Estimate(5, 1401); m {
		t.Fatal("mask of 200 steps ended")
	}
	// A success ends the run of failures: the next failure masks for D again.
	l.Update(5, 1500, true)
	l.Update(5, 1600, false)
	if _, m := l.Estimate(5, 1701); m {
		t.Fatal("after a success the backoff starts again at D")
	}
}

func TestHealthLayerMaskCap(t *testing.T) {
	cfg := issueLayer
	cfg.MaskMax = 150
	l := NewHealthLayer(cfg, nil)
	for _, step := range []int{0, 101, 302} { // masks 100, 150 (not 200), 150 (not 400)
		l.Update(1, step, false)
	}
	if _, m := l.Estimate(1, 302+150); !m {
		t.Fatal("masked through the capped length")
	}
	if _, m := l.Estimate(1, 302+151); m {
		t.Fatal("a mask never exceeds mask_max")
	}
}

func TestHealthLayerProviders(t *testing.T) {
	cfg := issueLayer
	cfg.ProviderStrength, cfg.ProviderMaskAfter = 1, 2
	// Tools 1, 2, 3 share provider 0; tool 4 has provider 1.
	l := NewHealthLayer(cfg, []int{-1, 0, 0, 0, 1})
	l.Update(3, 0, true)
	l.Update(1, 1, false)
	// One tool failing alone says nothing about its siblings: an untried sibling has the pooled
	// rate p̄ = 0.95 (the failure came with no evidence of tool 1: p̄ = 1 + 0.05·(0 − 1)).
	if r, m := l.Estimate(2, 2); r != 0.95 || m {
		t.Fatalf("sibling after one failure: r̂ %v masked %v, want p̄ = 0.95, unmasked", r, m)
	}
	l.Update(2, 2, false) // second distinct tool, no provider success in between: correlated
	r, m := l.Estimate(3, 3)
	if !m {
		t.Fatal("two distinct failures must mask the provider, untried and healthy-looking siblings included")
	}
	// Provider at step 3: its success of step 0 decayed over 3 steps, its correlated failure of
	// step 2 over 1: r_p = min(p̄, (s + p̄)/(s + f + 1)) with p̄ = 0.9025 (the failures of 1 and 2
	// came with evidence 0 < 1: p̄ = 1 → 0.95 → 0.9025).
	p := 0.9025
	s, f := math.Exp2(-3.0/1000), math.Exp2(-1.0/1000)
	rp := math.Min(p, (s+p)/(s+f+1))
	// Tool 3 has its own success (decayed to step 3): r̂ = (s3 + rp)/(s3 + 1).
	s3 := math.Exp2(-3.0 / 1000)
	near(t, "sibling r̂", r, (s3+rp)/(s3+1))
	if _, m := l.Estimate(4, 3); m {
		t.Fatal("another provider's tool is not masked")
	}
	// After the provider mask (D = 100), the first failure of a sibling re-masks it for 2·D.
	l.Update(3, 150, false)
	if _, m := l.Estimate(4, 151); m {
		t.Fatal("provider 1 unaffected")
	}
	if _, m := l.Estimate(1, 350); !m {
		t.Fatal("a failed re-probe after a provider mask re-masks the provider (2·D)")
	}
}

func TestHealthConfigValidate(t *testing.T) {
	bad := []HealthConfig{
		{PriorStrength: 0},
		{PriorStrength: 1, PoolInit: 1.5},
		{PriorStrength: 1, PoolRate: 2},
		{PriorStrength: 1, HalfLife: math.Inf(1)},
		{PriorStrength: 1, MaskBase: -1},
		{PriorStrength: 1, CohortWindow: -1},
		{PriorStrength: 1, IncidentProbe: -1},
		{PriorStrength: 1, IncidentEarlyProbe: true},
		{PriorStrength: 1, RelapseAfterOne: true},
		{PriorStrength: 1, IncidentEvidenceWindow: true},
		{PriorStrength: 1, IncidentGateErrors: 1},
		{PriorStrength: 1, IncidentProbe: 10, IncidentGateErrors: -1},
		{PriorStrength: 1, IncidentProbe: 10, IncidentGateErrors: math.NaN()},
		{PriorStrength: 1, IncidentPrior: 1},
		{PriorStrength: 1, IncidentProbe: 10, IncidentPrior: 1.5},
		{PriorStrength: 1, IncidentProbe: 10, IncidentPrior: -0.5},
		{PriorStrength: 1, IncidentProbe: 10, IncidentPrior: math.NaN()},
		{PriorStrength: 1, IncidentHalfProbe: true},
		{PriorStrength: 1, ProviderMaskAfter: 1},
		{PriorStrength: 1, CohortWindow: 10, CohortStrength: math.NaN()},
		{PriorStrength: math.NaN()},
	}
	for _, c := range bad {
		if err := c.Validate("r"); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if err := issueLayer.Validate("r"); err != nil {
		t.Fatal(err)
	}
}

func TestFactoredExpectedFusionAndMasks(t *testing.T) {
	p := NewFactored("f", FrozenRelevance{}, NewHealthLayer(issueLayer, nil), FusionConfig{Kind: FusionExpected})
	s := &Step{T: 0, Candidates: []Candidate{{Tool: 0, Relevance: 0.6}, {Tool: 1, Relevance: 0.5}, {Tool: 2, Relevance: 0.1}}}
	if got := p.Choose(s); got != 0 {
		t.Fatalf("healthy tools: chose %d, want the most relevant", got)
	}
	p.Observe(s, 0, Feedback{Executed: false})
	s.T = 1
	if got := p.Choose(s); got != 1 {
		t.Fatalf("tool 0 masked: chose %d, want 1", got)
	}
	// After the mask, r̂₀ = (0 + 1·p̄)/(0 + f + 1) < 0.5/0.6 keeps tool 1 ahead:
	// p̄ = 0.95, f = 2^(−101/1000): 0.6·0.95/(f+1) ≈ 0.295 < 0.5.
	s.T = 102
	if got := p.Choose(s); got != 1 {
		t.Fatalf("after the mask: chose %d, want 1 (expected success 0.5 > 0.295)", got)
	}
	// Every candidate masked or tried: the best allowed score wins.
	s.Excluded = []bool{false, true, true}
	s.T = 1
	if got := p.Choose(s); got != 0 {
		t.Fatalf("only tool 0 allowed: chose %d", got)
	}
}

func TestFactoredRoutesFeedback(t *testing.T) {
	rel := &countingRelevance{}
	p := NewFactored("f", rel, nil, FusionConfig{Kind: FusionExpected})
	s := &Step{Candidates: []Candidate{{Tool: 0, Relevance: 0.5}}}
	p.Observe(s, 0, Feedback{Executed: false, TaskKnown: true})
	p.Observe(s, 0, Feedback{Executed: true})
	if rel.learned != 0 {
		t.Fatal("relevance must learn only from observed task outcomes of executed tools")
	}
	p.Observe(s, 0, Feedback{Executed: true, TaskKnown: true, Task: true})
	if rel.learned != 1 {
		t.Fatal("an executed tool's task outcome must reach the relevance model")
	}
}

type countingRelevance struct{ learned int }

func (c *countingRelevance) Scores(s *Step, out []float64) { FrozenRelevance{}.Scores(s, out) }
func (c *countingRelevance) Learn(*Step, int, bool)        { c.learned++ }

func TestKernelRelevanceByHand(t *testing.T) {
	m := NewKernelRelevance(KernelConfig{Strength: 1, Bandwidth: 0.05, Merge: 0.98, Alpha: 0})
	x := []float64{1, 0}
	y := []float64{0.6, 0.8} // cosine 0.6 with x
	s := &Step{Context: x, Candidates: []Candidate{{Tool: 0, Relevance: 0.3}}}
	out := make([]float64, 1)
	m.Scores(s, out)
	near(t, "prior only", out[0], 0.3)
	m.Learn(s, 0, true)
	m.Learn(s, 0, true)
	m.Scores(s, out)
	near(t, "two successes on the same query", out[0], (0.3+2)/(1+2))
	sy := &Step{Context: y, Candidates: s.Candidates}
	m.Scores(sy, out)
	w := math.Exp((0.6 - 1) / 0.05)
	near(t, "a dissimilar query", out[0], (0.3+2*w)/(1+2*w))
	m.Learn(sy, 0, false) // a new prototype (cosine 0.6 < merge 0.98)
	if len(m.tools[0]) != 2 {
		t.Fatalf("%d prototypes, want 2", len(m.tools[0]))
	}
	m.Scores(sy, out)
	near(t, "after a failure on y", out[0], (0.3+2*w+0)/(1+2*w+1))
}

// TestKernelRelevanceSketchByHand: on sign sketches the kernel reads a Hamming distance h over d
// coordinates as the cosine cos(π·h/d). First TestKernelRelevanceByHand's steps at d = 4; then
// contexts of d = 70 (a whole word and a partial one), where prototype k has its first k
// coordinates negative, so it lies at h = k from the query with none, and nine of them fill a
// block of eight and start a second.
func TestKernelRelevanceSketchByHand(t *testing.T) {
	const d, bw = 4, 0.5
	m := NewKernelRelevance(KernelConfig{Strength: 1, Bandwidth: bw, Merge: 0.98, Sketch: KernelSketchSign})
	x := []float64{0.5, 0.5, 0.5, 0.5}
	y := []float64{0.5, -0.5, 0.5, 0.5} // one sign apart: read as cos(π/4), though its cosine is 0.5
	s := &Step{Context: x, Candidates: []Candidate{{Tool: 0, Relevance: 0.3}, {Tool: 1, Relevance: 0.6}}}
	out := make([]float64, 2)
	m.Scores(s, out)
	near(t, "prior only", out[0], 0.3)
	m.Learn(s, 0, true)
	m.Learn(s, 0, true) // h = 0: merged
	m.Scores(s, out)
	near(t, "two successes on the same query", out[0], (0.3+2)/(1+2))
	near(t, "a tool without evidence", out[1], 0.6)
	sy := &Step{Context: y, Candidates: s.Candidates}
	m.Scores(sy, out)
	w := math.Exp((math.Cos(math.Pi/d) - 1) / bw)
	near(t, "a query one sign away", out[0], (0.3+2*w)/(1+2*w))
	m.Learn(sy, 0, false) // cos(π/4) < 0.98: a new prototype
	if len(m.tools[0]) != 2 {
		t.Fatalf("%d prototypes, want 2", len(m.tools[0]))
	}
	m.Scores(sy, out)
	near(t, "after a failure on y", out[0], (0.3+2*w)/(1+2*w+1))

	const d2 = 70
	m = NewKernelRelevance(KernelConfig{Strength: 1, Bandwidth: bw, Merge: 0.999, Sketch: KernelSketchSign})
	ctx := func(neg int) []float64 {
		c := make([]float64, d2)
		for i := range c {
			c[i] = 1 / math.Sqrt(d2)
			if i < neg {
				c[i] = -c[i]
			}
		}
		c[66] = -c[66] // a sign in the partial word, shared by every context
		return c
	}
	cands := []Candidate{{Tool: 3, Relevance: 0.2}}
	wantN, wantS := 0.0, 0.0
	for k := 1; k <= 9; k++ { // cos(π/70) = 0.99899 < 0.999: nine prototypes
		m.Learn(&Step{Context: ctx(k), Candidates: cands}, 0, k%3 == 0)
		wk := math.Exp((math.Cos(math.Pi*float64(k)/d2) - 1) / bw)
		wantN += wk
		if k%3 == 0 {
			wantS += wk
		}
	}
	if len(m.tools[3]) != 9 {
		t.Fatalf("%d prototypes, want 9", len(m.tools[3]))
	}
	out = out[:1]
	m.Scores(&Step{Context: ctx(0), Candidates: cands}, out)
	near(t, "nine prototypes over two blocks", out[0], (0.2+wantS)/(1+wantN))
}

// TestKernelBandwidthSelectionByHand: with candidate bandwidths the kernel scores each one's
// estimate before every learned outcome by its log-loss and uses the lowest total.
func TestKernelBandwidthSelectionByHand(t *testing.T) {
	m := NewKernelRelevance(KernelConfig{Strength: 1, Bandwidths: []float64{0.05, 0.5}, Merge: 0.98})
	x := []float64{1, 0}
	y := []float64{0.6, 0.8} // cosine 0.6 with x
	cands := []Candidate{{Tool: 0, Relevance: 0.3}}
	m.Learn(&Step{Context: x, Candidates: cands}, 0, true)
	// No evidence yet: both estimates are the prior 0.3, a tie, kept by the first candidate.
	near(t, "loss of h = 0.05", m.loss[0], -math.Log(0.3))
	near(t, "loss of h = 0.5", m.loss[1], -math.Log(0.3))
	if m.Bandwidth() != 0.05 {
		t.Fatalf("bandwidth %v after a tie, want the first candidate", m.Bandwidth())
	}
	m.Learn(&Step{Context: y, Candidates: cands}, 0, true)
	w0, w1 := math.Exp(-0.4/0.05), math.Exp(-0.4/0.5)
	near(t, "loss of h = 0.05", m.loss[0], -math.Log(0.3)-math.Log((0.3+w0)/(1+w0)))
	near(t, "loss of h = 0.5", m.loss[1], -math.Log(0.3)-math.Log((0.3+w1)/(1+w1)))
	if m.Bandwidth() != 0.5 {
		t.Fatalf("bandwidth %v, want 0.5: it predicted the second success better", m.Bandwidth())
	}
	out := make([]float64, 1)
	m.Scores(&Step{Context: x, Candidates: cands}, out)
	near(t, "score with the selected bandwidth", out[0], (0.3+1+w1)/(1+1+w1))

	// The same on sign sketches (the shipped path): contexts one sign apart in d = 4 are read
	// as cosine cos(π/4).
	m = NewKernelRelevance(KernelConfig{Strength: 1, Bandwidths: []float64{0.05, 0.5}, Merge: 0.98, Sketch: KernelSketchSign})
	xs, ys := []float64{0.5, 0.5, 0.5, 0.5}, []float64{0.5, -0.5, 0.5, 0.5}
	m.Learn(&Step{Context: xs, Candidates: cands}, 0, true)
	m.Learn(&Step{Context: ys, Candidates: cands}, 0, true)
	c := math.Cos(math.Pi / 4)
	w0, w1 = math.Exp((c-1)/0.05), math.Exp((c-1)/0.5)
	near(t, "sketched loss of h = 0.05", m.loss[0], -math.Log(0.3)-math.Log((0.3+w0)/(1+w0)))
	near(t, "sketched loss of h = 0.5", m.loss[1], -math.Log(0.3)-math.Log((0.3+w1)/(1+w1)))
	if m.Bandwidth() != 0.5 {
		t.Fatalf("sketched: bandwidth %v, want 0.5", m.Bandwidth())
	}
	m.Scores(&Step{Context: xs, Candidates: cands}, out)
	near(t, "sketched score with the selected bandwidth", out[0], (0.3+1+w1)/(1+1+w1))
}

func TestGrowKeepsState(t *testing.T) {
	s := []int{1, 2}
	s = grow(s, 5)
	if len(s) < 6 || s[0] != 1 || s[1] != 2 || s[5] != 0 {
		t.Fatalf("grow: %v", s)
	}
	p := NewDiscountedLinUCB("r", LinUCBConfig{Alpha: 0.1, Gamma: 0.95, Ridge: 1, Weights: paperWeights, ContextScale: 1}, 2, 2)
	st := &Step{Context: []float64{1, 0}, Candidates: []Candidate{{Tool: 40, Sem: 0.5, Prior: 0.5}}}
	p.Observe(st, 0, ran(true)) // a tool beyond the initial catalog: no panic, state kept
	if p.arms[40] == nil {
		t.Fatal("the added tool's arm was not created")
	}
}

func TestCalibratorMatchesScikitLearn(t *testing.T) {
	python := testassets.Python(t)
	rng := rand.New(rand.NewPCG(11, 12))
	var lists []CalibrationList
	for q := 0; q < 300; q++ {
		n := 10
		l := CalibrationList{Sem: make([]float64, n), Relevant: make([]bool, n)}
		top := 0.6 + 0.3*rng.Float64()
		for i := 0; i < n; i++ {
			l.Sem[i] = top - 0.02*float64(i) - 0.01*rng.Float64()
			p := 1 / (1 + math.Exp(-(-1 + 6*(l.Sem[i]-top) + 3*(l.Sem[i]-0.7) - 0.8*math.Log1p(float64(i)))))
			l.Relevant[i] = rng.Float64() < p
		}
		lists = append(lists, l)
	}
	c, err := FitCalibrator(lists, 1e-6, nil)
	if err != nil {
		t.Fatal(err)
	}
	var xs [][]float64
	var ys []int
	for _, l := range lists {
		for i := range l.Sem {
			xs = append(xs, []float64{l.Sem[i], l.Sem[i] - l.Sem[0], math.Log1p(float64(i))})
			y := 0
			if l.Relevant[i] {
				y = 1
			}
			ys = append(ys, y)
		}
	}
	// scikit-learn minimises ½‖w‖² + C·Σ log-loss, the intercept unpenalised: with C = 1/ridge
	// the same objective as FitCalibrator's, so an exact solver (Newton–Cholesky, tolerance
	// 1e-14) agrees to 1e-8 (with the default lbfgs this test needed a tolerance of 1e-3).
	script := `
import json, sys
from sklearn.linear_model import LogisticRegression
d = json.load(open(sys.argv[1]))
m = LogisticRegression(C=1e6, solver="newton-cholesky", tol=1e-14, max_iter=1000).fit(d["x"], d["y"])
print(json.dumps([m.intercept_[0]] + list(m.coef_[0])))
`
	var want []float64
	runReference(t, python, script, map[string]any{"x": xs, "y": ys}, &want)
	for i, w := range want {
		if math.Abs(c.Weights[i]-w) > 1e-8*(1+math.Abs(w)) {
			t.Errorf("weight %d: %v, scikit-learn %v", i, c.Weights[i], w)
		}
	}
	// Apply gives the logistic of the fitted features.
	cands := []Candidate{{Sem: 0.8}, {Sem: 0.75}}
	c.Apply(cands)
	z := c.Weights[0] + c.Weights[1]*0.75 + c.Weights[2]*(0.75-0.8) + c.Weights[3]*math.Log(2)
	near(t, "P(relevant) of the second candidate", cands[1].Relevance, 1/(1+math.Exp(-z)))
}

func TestRecommendedSpecBuilds(t *testing.T) {
	s, err := RecommendedSpec()
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != "factored" || s.Reliability == nil || s.Fusion == nil || s.Fusion.Kind != FusionExpected {
		t.Fatalf("recommended spec %+v", s)
	}
	if _, err := New(s, Env{NumTools: 3, Dim: 2}); err != nil {
		t.Fatal(err)
	}
}

func TestHealthLayerRecoveryModelByHand(t *testing.T) {
	cfg := HealthConfig{PriorStrength: 1, PoolInit: 1, ResetOnFailure: true, RecoveryPrior: 1000, RecoveryStrength: 1}
	l := NewHealthLayer(cfg, nil)
	l.Update(1, 0, false)
	// No outage seen to end yet: μ̂ = (0 + 1)/(0 + 1·1000); 100 steps after the failure the tool
	// is up with probability 1 − e^(−0.1), then as reliable as before the outage (no failures
	// before it: (0 + 1·1)/(0 + 0 + 1) = 1).
	r, _ := l.Estimate(1, 100)
	near(t, "r̂ 100 steps into an outage", r, -math.Expm1(-0.1))
	// It comes back at 300: one recovery over 300 steps of observed down-time.
	l.Update(1, 300, true)
	// Back to the counts: s = 1, and the outage's failure stays (no decay here): (1 + 1)/(1 + 1 + 1).
	r, _ = l.Estimate(1, 301)
	near(t, "a recovered tool", r, 2.0/3)
	l.Update(2, 400, false)
	r, _ = l.Estimate(2, 500)
	near(t, "r̂ with the learned rate", r, -math.Expm1(-2.0/1300*100))
	// A failed re-probe extends the observed down-time: 400 → 600 adds 200 steps.
	l.Update(2, 600, false)
	r, _ = l.Estimate(2, 700)
	near(t, "r̂ after a failed re-probe", r, -math.Expm1(-2.0/1500*100))
}

// BenchmarkRecommendedDecision times one step of the recommended policy (configs/recommended.yaml)
// at K = 10 and d = 384 and 768: the decision, the execution feedback to the reliability layer and
// the task feedback to the kernel relevance model, with 64 prototypes per tool (its cap) already
// learned. BenchmarkRATEDDecisionUpdate is the reference measured beside it.
func BenchmarkRecommendedDecision(b *testing.B) {
	spec, err := RecommendedSpec()
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range []int{384, 768} {
		b.Run("d="+itoa(d), func(b *testing.B) { benchmarkFactoredStep(b, spec, d, 64, true) })
	}
}

// BenchmarkRecommendedPrototypes times the same step at d = 768 with the exact kernel relevance
// model (one bandwidth) capped at P prototypes per tool, each filled, beside
// BenchmarkKernelEvidenceFloor: what the exact step costs as a function of P; then the shipped
// step, 64 prototypes on sign sketches with its candidate bandwidths.
// "execution" is the step under execution feedback only, where the kernel learns nothing and
// holds no prototype.
func BenchmarkRecommendedPrototypes(b *testing.B) {
	spec, err := RecommendedSpec()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("execution", func(b *testing.B) { benchmarkFactoredStep(b, spec, 768, 0, false) })
	// configs/paper.yaml's "RATED (Full) + reliability layer": RATED's bandit as the relevance
	// model on the same layer, under task feedback (the paper's bandit needs no prototypes).
	ratedLayer := Spec{Name: "RATED (Full) + reliability layer", Kind: "factored",
		Relevance:   &RelevanceSpec{Model: "rated", Alpha: 0.1, Gamma: 0.95},
		Reliability: spec.Reliability,
		Fusion:      &FusionConfig{Kind: "linear", Semantic: 0.70, Relevance: 0.15, Reliability: 0.15}}
	b.Run("rated-relevance", func(b *testing.B) { benchmarkFactoredStep(b, ratedLayer, 768, 0, true) })
	for _, p := range []int{1, 2, 4, 8, 16, 64} {
		s := spec
		rel := *spec.Relevance
		rel.MaxPrototypes, rel.Sketch, rel.Bandwidth, rel.Bandwidths = p, "", 0.1, nil // one bandwidth, exact
		s.Relevance = &rel
		b.Run("P="+itoa(p), func(b *testing.B) { benchmarkFactoredStep(b, s, 768, p, true) })
	}
	if spec.Relevance.Sketch != KernelSketchSign || spec.Relevance.MaxPrototypes != 64 {
		b.Fatalf("configs/recommended.yaml no longer ships 64 prototypes on sign sketches: %+v", *spec.Relevance)
	}
	b.Run("P=64-sign-sketch", func(b *testing.B) { benchmarkFactoredStep(b, spec, 768, 64, true) })
	// The same with one bandwidth: what the candidate bandwidths add to a step.
	one := spec
	rel := *spec.Relevance
	rel.Bandwidth, rel.Bandwidths = 0.1, nil
	one.Relevance = &rel
	b.Run("P=64-sign-sketch-one-bandwidth", func(b *testing.B) { benchmarkFactoredStep(b, one, 768, 64, true) })
}

// BenchmarkKernelEvidenceFloor times the least an exact evaluation of the kernel over K = 10
// candidates with P prototypes each at d = 768 must do: K·P dot products of length d and as many
// exponentials, on the same layout (one slice per prototype) and nothing else.
func BenchmarkKernelEvidenceFloor(b *testing.B) {
	const d, k = 768, 10
	for _, p := range []int{1, 2, 4, 8, 16, 64} {
		b.Run("P="+itoa(p), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(5, 6))
			vec := func() []float64 {
				x := make([]float64, d)
				for i := range x {
					x[i] = rng.NormFloat64()
				}
				return unit(x)
			}
			protos := make([][]float64, k*p)
			for i := range protos {
				protos[i] = vec()
			}
			x := vec()
			var sink float64
			b.ResetTimer()
			cpu := cpuNow(b)
			for i := 0; i < b.N; i++ {
				for _, c := range protos {
					sink += math.Exp((dot(x, c) - 1) / 0.1)
				}
			}
			reportCPU(b, cpu)
			if sink < 0 {
				b.Fatal(sink)
			}
		})
	}
}

// benchmarkFactoredStep times decide + feedback for spec at dimension d, every candidate's kernel
// prototypes filled up to protos; the feedback carries task outcomes when task is set.
func benchmarkFactoredStep(b *testing.B, spec Spec, d, protos int, task bool) {
	rng := rand.New(rand.NewPCG(5, 6))
	p, err := New(spec, Env{NumTools: 1000, Dim: d})
	if err != nil {
		b.Fatal(err)
	}
	vec := func() []float64 {
		x := make([]float64, d)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return unit(x)
	}
	cands := make([]Candidate, 10)
	for i := range cands {
		cands[i] = Candidate{Tool: rng.IntN(1000), Sem: rng.Float64(), Prior: rng.Float64(), Relevance: rng.Float64()}
	}
	s := &Step{Context: vec(), Candidates: cands}
	for j := 0; j < protos; j++ { // fill every candidate's prototypes
		s.Context = vec()
		for i := range cands {
			p.Observe(s, i, Feedback{Executed: true, TaskKnown: true, Task: j%2 == 0})
		}
	}
	s.Context = vec()
	b.ResetTimer()
	cpu := cpuNow(b)
	for i := 0; i < b.N; i++ {
		s.T = i
		pos := p.Choose(s)
		p.Observe(s, pos, Feedback{Executed: i%5 != 0, TaskKnown: task, Task: task && i%3 == 0})
	}
	reportCPU(b, cpu)
}

func TestHealthLayerSiblingCorrelationByHand(t *testing.T) {
	cfg := HealthConfig{PriorStrength: 1, PoolInit: 1, SiblingStrength: 0.5}
	// Tools 0, 1, 2 share provider 0; tools 3 and 4 share provider 1.
	l := NewHealthLayer(cfg, []int{0, 0, 0, 1, 1})
	rhat := func(tool, t int) float64 { r, _ := l.Estimate(tool, t); return r }
	l.Update(0, 0, true)
	l.Update(0, 1, false) // provider 0 under suspicion from step 1
	// No sibling seen yet: ρ̂ = 0/(0 + 0.5), so an untried sibling keeps p̄ = 1.
	near(t, "sibling before any evidence of correlation", rhat(1, 2), 1)
	l.Update(1, 3, false) // a sibling called while 0 is down fails: ρ̂ = 1/(1 + 0.5) = 2/3
	near(t, "untried sibling", rhat(2, 4), 1-2.0/3)
	near(t, "another provider's tool", rhat(3, 4), 1)
	// The failed tool itself keeps its own estimate, (s + m)/(s + f + m) = (1 + 1)/(1 + 1 + 1).
	near(t, "the failed tool", rhat(0, 4), 2.0/3)
	l.Update(2, 5, true) // a sibling succeeds: suspicion cleared; ρ̂ = 1/(2 + 0.5) = 0.4
	near(t, "suspicion cleared", rhat(2, 6), 1)
	l.Update(0, 6, false) // tool 0 again (a re-probe): suspicion anew, not a sibling call
	near(t, "ρ̂ = 0.4 ≤ 1/2 discounts nothing", rhat(2, 7), 1)
	l.Update(1, 8, false) // tool 1 was down already: not a sibling call
	l.Update(3, 9, false)
	l.Update(4, 10, false) // a sibling of 3 fails with it: ρ̂ = 2/(3 + 0.5) = 4/7
	near(t, "sibling with ρ̂ = 4/7", rhat(2, 11), 1-4.0/7)

	// With the recovery model the suspicion fades as the provider may have come back:
	// 1 − ρ̂·e^(−μ̂·(t − t_f)), μ̂ = (0 + 1)/(50 + 1·1000) with no outage seen to end.
	cfg.RecoveryPrior, cfg.RecoveryStrength = 1000, 1
	l = NewHealthLayer(cfg, []int{0, 0, 0, 1})
	l.Update(0, 0, false)
	l.Update(1, 10, false) // ρ̂ = 2/3; suspicion dates from step 10, tool 1's first failure
	l.Update(0, 50, false) // tool 0's re-probe does not renew it (observed down-time 0 → 50)
	mu := 1.0 / (50 + 1000)
	near(t, "fading suspicion", rhat(2, 110), 1-2.0/3*math.Exp(-mu*100))
}

// TestHealthLayerCohortsByHand: outages begun in neighbouring windows of cohort_window steps
// are one incident; once a member recovers, the others are up with the learned ρ̂_c and their
// own masks lifted, while ρ̂_c > 1/2 (prior: one call at 1/2).
func TestHealthLayerCohortsByHand(t *testing.T) {
	cfg := HealthConfig{PriorStrength: 1, PoolInit: 1, MaskBase: 500, CohortWindow: 100}
	l := NewHealthLayer(cfg, nil)
	est := func(tool, t int) (float64, bool) { return l.Estimate(tool, t) }
	for tool := range 3 {
		l.Update(tool, tool, true)
	}
	l.Update(0, 200, false) // one incident: outages begun at 200, 210, 250 (window 2)
	l.Update(1, 210, false)
	l.Update(2, 250, false)
	l.Update(3, 420, false) // window 4: not a neighbour of window 2, another incident
	// Before any recovery a down tool keeps its counts: (s + m)/(s + f + m) = 2/3, masked.
	r, masked := est(1, 300)
	near(t, "tool 1 before any recovery", r, 2.0/3)
	if !masked {
		t.Fatal("tool 1 not masked within its mask (until 711)")
	}
	l.Update(0, 400, true) // tool 0 recovers; ρ̂_c = (0 + 1/2)/(0 + 1) = 1/2 does not act yet
	r, masked = est(1, 401)
	near(t, "tool 1 with ρ̂_c = 1/2", r, 2.0/3)
	if !masked {
		t.Fatal("tool 1's mask lifted at ρ̂_c = 1/2")
	}
	l.Update(1, 402, true) // a member called after the recovery executes: ρ̂_c = 1.5/2 = 3/4
	// Tool 2, down since 250 (before the recoveries at 400 and 402): up with probability 3/4,
	// then as its counts without the outage's failure say, (1 + 1)/(1 + 0 + 1) = 1.
	r, masked = est(2, 403)
	near(t, "tool 2 after its cohort recovered", r, 0.75)
	if masked {
		t.Fatal("tool 2's own mask kept after its cohort recovered")
	}
	// Tool 3's incident saw no recovery: counts (0 + 1)/(0 + 1 + 1), masked.
	r, masked = est(3, 403)
	near(t, "tool 3, another incident", r, 0.5)
	if !masked {
		t.Fatal("tool 3 unmasked by another incident's recovery")
	}
	l.Update(2, 404, false) // the member was still down: ρ̂_c = 1.5/3 = 1/2, and tool 2's
	// last failure is now after every recovery of its cohort
	near(t, "ρ̂_c", l.cohortCorrelation(), 0.5)
	r, _ = est(2, 405)
	near(t, "tool 2 failed after its cohort's recovery", r, 2.0/(1+2+1))
	// Tool 3 recovers at 430 (window 4); tool 1's second outage begins at 440, after that
	// recovery, so its own recovery at 460 is no evidence about a cohort's.
	l.Update(3, 430, true)
	l.Update(1, 440, false)
	l.Update(1, 460, true)
	near(t, "ρ̂_c after a recovery that was not a cohort call", l.cohortCorrelation(), 0.5)
}

// TestHealthLayerIncidentsByHand follows one fleet incident through its probe schedule, its
// resolution, the evidence ρ̂_i, a relapse and the next resolution, every estimate computed by
// hand from the rules of incident_probe (no half-life, no reset, masks of 500 steps, m = 1).
func TestHealthLayerIncidentsByHand(t *testing.T) {
	cfg := HealthConfig{PriorStrength: 1, PoolInit: 1, MaskBase: 500, IncidentProbe: 10}
	l := NewHealthLayer(cfg, nil)
	expect := func(what string, tool, step int, want float64, wantMasked bool) {
		t.Helper()
		r, masked := l.Estimate(tool, step)
		near(t, what, r, want)
		if masked != wantMasked {
			t.Fatalf("%s: masked = %v, want %v", what, masked, wantMasked)
		}
	}
	for tool := range 5 {
		l.Update(tool, tool, true)
	}
	l.Update(0, 100, false) // the incident opens: first probe due at 100 + D = 110
	l.Update(1, 105, false)
	l.Update(3, 120, false)
	// Before the probe a down tool keeps its own estimate: (s + m)/(s + f + m) = 2/3, masked.
	expect("tool 0 before the probe", 0, 105, 2.0/3, true)
	// At the probe every down tool is estimated as before its outage, (1 + 1)/(1 + 0 + 1), unmasked.
	expect("tool 0 at the probe", 0, 110, 1, false)
	l.Update(0, 110, false) // the probe fails: next one 2D later, at 130
	expect("tool 1 between probes", 1, 120, 2.0/3, true)
	expect("tool 1 at the second probe", 1, 130, 1, false)
	l.Update(1, 130, true) // it executes: the incident resolves at 130
	// Tools 0 and 3, down since before 130, are up with ρ̂_i = (0 + 1/2)/(0 + 1) times their
	// estimate before the outage, 1; tool 1's outage failure is forgiven: (2 + 1)/(2 + 0 + 1).
	expect("tool 0 lifted by the resolution", 0, 131, 0.5, false)
	expect("tool 3 lifted by the resolution", 3, 131, 0.5, false)
	// (A mask runs its course: tool 1's, from 105, holds until 606.)
	expect("tool 1 after its recovery", 1, 131, 1, true)
	l.Update(0, 132, true) // lifted tools that execute: ρ̂_i = (2 + 1/2)/(2 + 1) = 5/6
	l.Update(4, 133, false)
	l.Update(4, 134, true) // tool 4 was down (not lifted): its recovery resolves again, at 134
	l.Update(3, 135, true) // tool 3 was lifted at 134: ρ̂_i = (2 + 1/2)/(2 + 1) still (tool 0's call counted)
	near(t, "ρ̂_i after two lifted calls", l.incidentCorrelation(136), 2.5/3)
	l.Update(2, 140, false)                                                      // tool 2 never came back from an outage: not a relapse; a new incident opens (probe at 150)
	l.Update(0, 141, false)                                                      // a member fails: one
	expect("tool 3, a member up since 135, before the relapse", 3, 141, 1, true) // its mask from 120 runs until 621
	l.Update(1, 142, false)                                                      // a second member in a row: relapse at 142
	// Tool 3 executed at 135 and was not called since: down with the relapse, 0 and masked
	// until a probe; tool 0, down itself since 141, keeps its own estimate:
	// s = 2, f = 1 (the outage's), (2 + 1)/(2 + 1 + 1), masked until 642.
	expect("tool 3 after the relapse", 3, 145, 0, true)
	expect("tool 0 after the relapse", 0, 145, 0.75, true)
	expect("tool 3 at the next probe", 3, 150, 1, false)
	l.Update(3, 150, true) // the probe executes: the incident resolves at 150
	// Tool 0 (down since 141) is lifted: ρ̂_i = 2.5/3 times (2 + 1)/(2 + 0 + 1).
	expect("tool 0 lifted by the second resolution", 0, 151, 2.5/3, false)
	// Tool 2 is lifted too (down since 140): ρ̂_i·(1 + 1)/(1 + 0 + 1).
	expect("tool 2 lifted by the second resolution", 2, 151, 2.5/3, false)
	l.Update(2, 152, false) // lifted calls that fail lower ρ̂_i: 2.5/4 = 0.625, then 2.5/5 = 0.5,
	l.Update(0, 153, false) // and two member failures in a row are a relapse (at 153)
	near(t, "ρ̂_i after two failed lifted calls", l.incidentCorrelation(154), 0.5)
	l.Update(1, 154, false) // tool 1, down since 142: the relapse undid the resolution at 150
	l.Update(1, 155, true)  // tool 1 recovers (not lifted): a resolution, and ρ̂_i = 1/2 still lifts
	l.Update(2, 156, false) // a lifted call fails: ρ̂_i = 2.5/6 < 1/2, the incidents no longer decide
	// Tool 0 keeps its own estimate: s = 2, f = 1 + 1 (its failures at 141 and 153), masked.
	expect("tool 0 once ρ̂_i < 1/2", 0, 157, (2+1)/(2+2+1.0), true)
	// A tool down since before the resolution still counts when it runs on its own estimate:
	// ρ̂_i = (2 + 1 + 1/2)/(5 + 1 + 1) = 1/2, and the gate opens again.
	l.Update(0, 158, true)
	near(t, "ρ̂_i after a call the gate did not lift", l.incidentCorrelation(159), 0.5)
}

// estimateIs checks l's estimate of tool at step and whether it is masked.
func estimateIs(t *testing.T, l *HealthLayer, what string, tool, step int, want float64, wantMasked bool) {
	t.Helper()
	r, masked := l.Estimate(tool, step)
	near(t, what, r, want)
	if masked != wantMasked {
		t.Fatalf("%s: masked = %v, want %v", what, masked, wantMasked)
	}
}

// TestHealthLayerIncidentHalfProbeByHand: with incident_half_probe an incident whose first
// probe fails is probed again D/2 steps later, and the plain schedule's second probe (2D after
// the first) and everything after keep their steps (D = 10, m = 1, no half-life, masks of 500
// steps so that only the incident's probes unmask). Tools 0–2 ran once and went down at
// 100–102: the incident opens at 100, its first probe due at 110.
func TestHealthLayerIncidentHalfProbeByHand(t *testing.T) {
	for _, half := range []bool{false, true} {
		l := NewHealthLayer(HealthConfig{PriorStrength: 1, PoolInit: 1, MaskBase: 500, IncidentProbe: 10, IncidentHalfProbe: half}, nil)
		expect := func(what string, tool, step int, want float64, wantMasked bool) {
			t.Helper()
			estimateIs(t, l, fmt.Sprintf("%s (half probe %v)", what, half), tool, step, want, wantMasked)
		}
		for tool := range 3 {
			l.Update(tool, tool, true)
		}
		for tool := range 3 {
			l.Update(tool, 100+tool, false)
		}
		// Between probes a down tool keeps its own estimate, (1 + 1)/(1 + 1 + 1), masked; at a
		// probe it is estimated as before its outage, (1 + 1)/(1 + 0 + 1) = 1, unmasked.
		expect("tool 1 before the first probe", 1, 109, 2.0/3, true)
		expect("tool 0 at the first probe", 0, 110, 1, false)
		l.Update(0, 110, false) // the first probe fails
		expect("tool 1 just before the half step", 1, 114, 2.0/3, true)
		if half {
			expect("tool 1 at the half step (110 + 5)", 1, 115, 1, false)
			l.Update(1, 115, false) // it fails too: the next probe is due 2D − D/2 = 15 later, at 130
		} else {
			expect("tool 1 at 115, no half step", 1, 115, 2.0/3, true)
		}
		expect("tool 2 before the second probe", 2, 129, 2.0/3, true)
		expect("tool 2 at the second probe (110 + 2D)", 2, 130, 1, false)
		l.Update(2, 130, false) // fails: the next probe is due 4D later, at 170, with or without the half step
		expect("tool 2 before the third probe", 2, 169, 2.0/4, true)
		expect("tool 2 at the third probe (130 + 4D)", 2, 170, 1, false)
	}
}

// TestHealthLayerEarlyProbeByHand: with incident_early_probe a tool held down by its fleet's
// relapse is offered before the incident's first probe, at q(t) times its estimate before the
// outage, q(t) = (t − a − D)/(o − a) clipped to [0, 1], a the fleet's last execution before the
// incident opened and o the failure that opened it (D = 10, m = 1, no half-life, no masks).
func TestHealthLayerEarlyProbeByHand(t *testing.T) {
	for _, early := range []bool{false, true} {
		l := NewHealthLayer(HealthConfig{PriorStrength: 1, PoolInit: 1, IncidentProbe: 10, IncidentEarlyProbe: early}, nil)
		expect := func(what string, tool, step int, want float64, wantMasked bool) {
			t.Helper()
			estimateIs(t, l, fmt.Sprintf("%s (early probe %v)", what, early), tool, step, want, wantMasked)
		}
		for tool := range 3 {
			l.Update(tool, tool, true)
		}
		l.Update(0, 10, false) // the fleet goes down: an incident opens, its probe due at 20
		l.Update(1, 11, false)
		l.Update(2, 12, false)
		l.Update(0, 20, true) // the probe executes: tools 1 and 2 are lifted
		l.Update(1, 22, true) // lifted calls: members of the fleet, its last execution at 24
		l.Update(2, 24, true)
		l.Update(0, 30, false) // a member fails: a new incident opens at 30, its probe due at 40
		l.Update(1, 31, false) // a second in a row: the relapse
		// Tool 2 (s = 2, its outage's failure forgiven when it came back: f = 0) is held down by
		// the relapse. Before the outage it was (2 + 1)/(2 + 0 + 1) = 1. The outage began after
		// 24 and by 30: with the option, q(t) = (t − 34)/6.
		expect("held tool, q < 0", 2, 33, 0, true)
		if early {
			expect("held tool, q = 1/2", 2, 37, 0.5, false)
			expect("held tool, q = 5/6", 2, 39, 5.0/6, false)
		} else {
			expect("held tool before the probe", 2, 37, 0, true)
		}
		expect("held tool at the probe", 2, 40, 1, false)
		l.Update(0, 40, false) // the probe fails (tool 0 is down itself): next one at 60
		// Once the incident has probed, its schedule decides: no early offers.
		expect("held tool after a failed probe", 2, 45, 0, true)
	}
}

// TestHealthLayerEvidenceWindowAndGateErrorsByHand: incident_evidence_window keeps out of ρ̂_i
// a lifted call made more than D steps after the resolution once a failure has reopened the
// incident, and incident_gate_errors z keeps the incidents acting while
// ρ̂_i + z·√(ρ̂_i(1 − ρ̂_i)/n) reaches 1/2 (D = 10, m = 1, no half-life, no masks, no reset on
// failure).
func TestHealthLayerEvidenceWindowAndGateErrorsByHand(t *testing.T) {
	// history plays the fleet: tools 0, 1 and 2 ran (tool 2 three times), went down at 1–4 (an
	// incident opens at 1, its probe due at 11), the probe of tool 0 at 11 resolves it and
	// lifts tools 1 and 2; with reopen, tool 3 (never down before, no member) fails at 30 and
	// the incident opens again; then tool 1, lifted, is called at step late and fails: one
	// failure of the fleet, no relapse (two are needed).
	history := func(cfg HealthConfig, reopen bool, late int) *HealthLayer {
		l := NewHealthLayer(cfg, nil)
		l.Update(2, 0, true)
		l.Update(2, 0, true)
		l.Update(2, 0, true)
		l.Update(0, 1, false)
		l.Update(1, 2, false)
		l.Update(2, 4, false)
		l.Update(0, 11, true)
		if reopen {
			l.Update(3, 30, false)
		}
		l.Update(1, late, false)
		return l
	}
	base := HealthConfig{PriorStrength: 1, PoolInit: 1, IncidentProbe: 10}
	// Tool 2 before its outage: (3 + 1)/(3 + 0 + 1) = 1; on its own evidence, s = 3, f = 1:
	// (3 + 1)/(3 + 1 + 1) = 0.8. Lifted, it is ρ̂_i · 1.
	cases := []struct {
		name      string
		window    bool
		z         float64
		reopen    bool
		late      int
		rho, want float64
	}{
		// Counted, the failed call makes ρ̂_i = (0 + 1/2)/(1 + 1) = 1/4: the gate closes.
		{"no window, reopened, 30 steps after", false, 0, true, 41, 0.25, 0.8},
		// 41 − 11 > 10 and the incident reopened at 30: not evidence; ρ̂_i = 1/2, tool 2 lifted.
		{"window, reopened, 30 steps after", true, 0, true, 41, 0.5, 0.5},
		// Nothing failed since the resolution: the call counts, late as it is.
		{"window, not reopened, 30 steps after", true, 0, false, 41, 0.25, 0.8},
		// Within the window (21 − 11 ≤ 10) it counts.
		{"window, 10 steps after", true, 0, false, 21, 0.25, 0.8},
		// z = 1: 1/4 + √(3/16 / 2) = 0.556 ≥ 1/2, the incidents still act: 1/4 · 1.
		{"z = 1", false, 1, true, 41, 0.25, 0.25},
		// z = 1/4: 1/4 + 0.077 < 1/2, closed.
		{"z = 1/4", false, 0.25, true, 41, 0.25, 0.8},
	}
	for _, c := range cases {
		cfg := base
		cfg.IncidentEvidenceWindow, cfg.IncidentGateErrors = c.window, c.z
		l := history(cfg, c.reopen, c.late)
		near(t, c.name+": ρ̂_i", l.incidentCorrelation(c.late+1), c.rho)
		r, masked := l.Estimate(2, c.late+1)
		near(t, c.name+": tool 2", r, c.want)
		if masked {
			t.Fatalf("%s: tool 2 masked (no masks configured)", c.name)
		}
	}
}

// TestHealthLayerIncidentPriorByHand: ρ̂_i's prior call at 1/2 (the default) and at 1
// (incident_prior), with the gate at z = 1/4 (D = 10, m = 1, no half-life, no masks). Tools
// 0–3 ran (tool 2 three times) and went down at 1–4; the probe of tool 0 at 11 resolves the
// incident and lifts tools 1–3; then lifted tools fail one after the other at 15, 16, ….
func TestHealthLayerIncidentPriorByHand(t *testing.T) {
	history := func(prior float64, failures int) *HealthLayer {
		l := NewHealthLayer(HealthConfig{PriorStrength: 1, PoolInit: 1, IncidentProbe: 10,
			IncidentGateErrors: 0.25, IncidentPrior: prior}, nil)
		for _, tool := range []int{0, 1, 2, 2, 2, 3} {
			l.Update(tool, 0, true)
		}
		for tool := range 4 {
			l.Update(tool, 1+tool, false)
		}
		l.Update(0, 11, true)
		for i, tool := range []int{1, 3}[:failures] {
			l.Update(tool, 15+i, false)
		}
		return l
	}
	// Tool 2 before its outage: (3 + 1)/(3 + 0 + 1) = 1, so lifted it is ρ̂_i; on its own
	// evidence (the gate closed), s = 3, f = 1: (3 + 1)/(3 + 1 + 1) = 0.8.
	cases := []struct {
		name      string
		prior     float64
		failures  int
		rho, want float64
	}{
		// No lifted call yet: ρ̂_i is the prior's mean.
		{"1/2, no call", 0, 0, 0.5, 0.5},
		{"1, no call", 1, 0, 1, 1},
		// One lifted failure: (0 + 1/2)/(1 + 1) = 1/4, and 1/4 + 1/4·√(3/16 / 2) = 0.327 < 1/2:
		// the gate closes on one call.
		{"1/2, one failure", 0, 1, 0.25, 0.8},
		// (0 + 1)/(1 + 1) = 1/2: the gate stays open, tool 2 lifted at 1/2.
		{"1, one failure", 1, 1, 0.5, 0.5},
		// Two: (0 + 1)/(2 + 1) = 1/3, and 1/3 + 1/4·√(2/9 / 3) = 0.401 < 1/2: closed.
		{"1, two failures", 1, 2, 1.0 / 3, 0.8},
	}
	for _, c := range cases {
		l := history(c.prior, c.failures)
		near(t, c.name+": ρ̂_i", l.incidentCorrelation(20), c.rho)
		r, masked := l.Estimate(2, 20)
		near(t, c.name+": tool 2", r, c.want)
		if masked {
			t.Fatalf("%s: tool 2 masked (no masks configured)", c.name)
		}
	}
}

// TestHealthLayerRelapseAfterOneByHand: with relapse_after_one, once the fleet has relapsed,
// one failure of a tool it brought back is the next relapse; without it, two in a row are
// (D = 10, m = 1, no half-life, no masks).
func TestHealthLayerRelapseAfterOneByHand(t *testing.T) {
	for _, one := range []bool{false, true} {
		l := NewHealthLayer(HealthConfig{PriorStrength: 1, PoolInit: 1, IncidentProbe: 10, RelapseAfterOne: one}, nil)
		for tool := range 3 {
			l.Update(tool, tool, true)
		}
		l.Update(0, 10, false) // the fleet goes down; the probe at 20 brings it back
		l.Update(1, 11, false)
		l.Update(0, 20, true)
		l.Update(1, 21, true)
		l.Update(0, 30, false) // one failure: no relapse yet, under either rule (the first)
		if _, masked := l.Estimate(1, 30); masked {
			t.Fatalf("relapse after one %v: one failure before any relapse must not hold the fleet", one)
		}
		l.Update(1, 31, false) // two in a row: the fleet's first relapse
		l.Update(1, 40, true)  // the incident's probe brings it back
		l.Update(0, 41, true)
		l.Update(0, 50, false) // one failure of a member
		// Tool 1, back since 40 and not called since, is held down only if that one failure
		// was a relapse: (0, masked); otherwise it keeps its estimate, (2 + 1)/(2 + 0 + 1) = 1.
		r, masked := l.Estimate(1, 51)
		if one && (r != 0 || !masked) {
			t.Fatalf("relapse after one: tool 1 r̂ %v masked %v after the fleet's second relapse, want 0, masked", r, masked)
		}
		if !one {
			near(t, "tool 1 after one failure of a member (two needed)", r, 1)
			if masked {
				t.Fatal("two failures needed: tool 1 must not be masked after one")
			}
		}
	}
}

// TestHealthLayerProviderSuccessUnmasksByHand: with provider_success_unmasks, a tool of a masked
// provider that executes ends the provider's mask; its siblings' own masks still hold
// (mask D = 100, a provider mask after 2 distinct failures).
func TestHealthLayerProviderSuccessUnmasksByHand(t *testing.T) {
	for _, unmask := range []bool{false, true} {
		cfg := HealthConfig{PriorStrength: 1, PoolInit: 1, MaskBase: 100, ProviderStrength: 1, ProviderMaskAfter: 2, ProviderSuccessUnmasks: unmask}
		l := NewHealthLayer(cfg, []int{0, 0, 0, 0})
		l.Update(1, 1, false)
		l.Update(2, 2, false) // two distinct tools: provider 0 masked until 2 + 1 + 100 = 103
		if _, masked := l.Estimate(3, 10); !masked {
			t.Fatalf("unmask %v: the provider must be masked after two distinct failures", unmask)
		}
		l.Update(0, 10, true) // a tool of it runs (a call the mask did not stop)
		if _, masked := l.Estimate(3, 11); masked != !unmask {
			t.Fatalf("unmask %v: untried sibling masked = %v after a provider success, want %v", unmask, masked, !unmask)
		}
		if _, masked := l.Estimate(1, 11); !masked {
			t.Fatalf("unmask %v: tool 1's own mask (until 102) must hold", unmask)
		}
	}
}

// TestHealthLayerIncidentGateByHand: ρ̂_i learns from every call of a tool down since before a
// resolution, lifted or not, so a gate closed by a failed lifted call opens again when such a
// tool executes on its own estimate (D = 10, m = 1, no half-life).
func TestHealthLayerIncidentGateByHand(t *testing.T) {
	l := NewHealthLayer(HealthConfig{PriorStrength: 1, PoolInit: 1, IncidentProbe: 10}, nil)
	for tool := range 3 {
		l.Update(tool, tool, true)
	}
	l.Update(0, 10, false)
	l.Update(1, 11, false)
	l.Update(2, 12, false)
	l.Update(0, 13, true)  // tool 0 executes before any probe: a resolution at 13, ρ̂_i = 1/2
	l.Update(1, 14, false) // lifted, fails: ρ̂_i = (0 + 1/2)/(1 + 1); no relapse yet (one failure)
	near(t, "ρ̂_i after a failed lifted call", l.incidentCorrelation(15), 0.25)
	r, _ := l.Estimate(2, 15) // gate closed: tool 2 keeps its own estimate, (1 + 1)/(1 + 1 + 1)
	near(t, "tool 2 with the gate closed", r, 2.0/3)
	l.Update(2, 15, true) // not lifted, but down since before the resolution: (1 + 1/2)/(2 + 1)
	near(t, "ρ̂_i after a call on its own estimate", l.incidentCorrelation(16), 0.5)
}

// TestHealthLayerIncidentCallsStayOutOfRecoveryRate: the recovery model's μ̂ = (recoveries +
// 1)/(down-time + M) learns from the calls a tool gets on its own estimate, not from the
// incident's probes and lifted calls (M = 100 steps, D = 5).
func TestHealthLayerIncidentCallsStayOutOfRecoveryRate(t *testing.T) {
	l := NewHealthLayer(HealthConfig{PriorStrength: 1, PoolInit: 1, RecoveryPrior: 100, IncidentProbe: 5}, nil)
	l.Update(0, 0, true)
	l.Update(1, 1, true)
	l.Update(0, 10, false) // the incident opens: probe due at 15
	l.Update(0, 15, true)  // the probe finds tool 0 up: no recovery, no down-time for μ̂
	near(t, "μ̂ after a probe", l.recoveryRate(), 1.0/100)
	l.Update(1, 20, false) // a new incident: probe due at 25
	l.Update(1, 22, false) // tool 1 called on its own estimate: 2 steps of down-time
	near(t, "μ̂ after an own call", l.recoveryRate(), 1.0/102)
	l.Update(1, 30, true) // the probe (due since 25) finds it up: not counted either
	near(t, "μ̂ after a second probe", l.recoveryRate(), 1.0/102)
}

// TestFactoredTaskReliabilityByHand: the layer keeps its execution-feedback settings (reset on
// failure, masks) until the first task outcome, then continues with task_reliability's (no
// reset, no masks), its evidence kept and the masks it can no longer set lifted.
func TestFactoredTaskReliabilityByHand(t *testing.T) {
	exec := HealthConfig{PriorStrength: 1, PoolInit: 1, ResetOnFailure: true, MaskBase: 100}
	task := HealthConfig{PriorStrength: 1, PoolInit: 1}
	p, err := New(Spec{Name: "r", Kind: "factored", Relevance: &RelevanceSpec{Model: "calibrated"},
		Reliability: &exec, TaskReliability: &task, Fusion: &FusionConfig{Kind: FusionExpected}}, Env{NumTools: 3})
	if err != nil {
		t.Fatal(err)
	}
	f := p.(*Factored)
	s := &Step{Candidates: []Candidate{{Tool: 0, Relevance: 0.9}, {Tool: 1, Relevance: 0.5}, {Tool: 2, Relevance: 0.5}}}
	rhat := func(tool, step int) (float64, bool) { return f.health.Estimate(tool, step) }
	observe := func(pos, step int, fb Feedback) { s.T = step; p.Observe(s, pos, fb) }
	for step := 0; step < 3; step++ {
		observe(0, step, Feedback{Executed: true})
	}
	observe(0, 3, Feedback{Executed: false})
	// Execution mode: the failure wipes the three successes, (0 + 1·1)/(0 + 1 + 1), and masks
	// the tool for D·2⁰ = 100 steps after it.
	r, masked := rhat(0, 4)
	near(t, "after a failure, execution mode", r, 0.5)
	if !masked || f.TaskMode() {
		t.Fatalf("execution mode: masked %v (want true), task mode %v (want false)", masked, f.TaskMode())
	}
	if _, masked := rhat(0, 104); masked {
		t.Fatal("the mask outlived 3 + 1 + 100 steps")
	}
	// The first task outcome switches: tool 0's mask is lifted at once, evidence kept.
	observe(1, 5, Feedback{Executed: true, TaskKnown: true, Task: false})
	if !f.TaskMode() {
		t.Fatal("no task mode after a task outcome")
	}
	if r, masked := rhat(0, 6); masked || math.Abs(r-0.5) > 1e-12 {
		t.Fatalf("tool 0 after the switch: r̂ %v masked %v, want 0.5 and unmasked", r, masked)
	}
	// Task mode: tool 2 succeeds three times and fails once, and keeps its successes:
	// (3 + 1)/(3 + 1 + 1), with no mask.
	for step := 6; step < 9; step++ {
		observe(2, step, Feedback{Executed: true, TaskKnown: true, Task: true})
	}
	observe(2, 9, Feedback{Executed: false, TaskKnown: true})
	r, masked = rhat(2, 10)
	near(t, "after a failure, task mode", r, 0.8)
	if masked {
		t.Fatal("task mode masked a tool")
	}
	// Without task_reliability a task outcome changes nothing.
	q, err := New(Spec{Name: "q", Kind: "factored", Relevance: &RelevanceSpec{Model: "calibrated"},
		Reliability: &exec, Fusion: &FusionConfig{Kind: FusionExpected}}, Env{NumTools: 3})
	if err != nil {
		t.Fatal(err)
	}
	q.Observe(s, 0, Feedback{Executed: true, TaskKnown: true, Task: true})
	if q.(*Factored).TaskMode() {
		t.Fatal("task mode without task_reliability")
	}
}

// TestRestoreVersion1Snapshot restores a snapshot written by the format before the sibling
// correlation (testdata/snapshot-v1-recommended.bin: the recommended policy of that build after
// 300 steps of newStepSource(11, 40, 8)) and checks that, with the correlation off, the restored
// policy makes the decisions that build made next (testdata/snapshot-v1-recommended.next.json).
func TestRestoreVersion1Snapshot(t *testing.T) {
	snap, err := os.ReadFile("testdata/snapshot-v1-recommended.bin")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/snapshot-v1-recommended.next.json")
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	spec, err := RecommendedSpec()
	if err != nil {
		t.Fatal(err)
	}
	layer := *spec.Reliability
	layer.SiblingStrength = 0
	layer.IncidentProbe = 0 // nor fleet incidents (nor their refinements)
	layer.IncidentEarlyProbe, layer.RelapseAfterOne, layer.ProviderSuccessUnmasks = false, false, false
	layer.IncidentGateErrors, layer.IncidentEvidenceWindow, layer.IncidentPrior, layer.IncidentHalfProbe = 0, false, 0, false
	layer.IncidentPhase = 0
	spec.Reliability = &layer
	spec.TaskReliability = nil // that build had no task-feedback settings either
	rel := *spec.Relevance
	rel.Sketch, rel.Bandwidth, rel.Bandwidths = "", 0.1, nil // and one bandwidth, evaluated exactly
	spec.Relevance = &rel
	p, err := New(spec, testEnv(3))
	if err != nil {
		t.Fatal(err)
	}
	if err := Restore(p, snap); err != nil {
		t.Fatal(err)
	}
	got := play(p, newStepSource(99, 40, 8), 300, 500)
	if len(got) != len(want) {
		t.Fatalf("%d decisions, the version-1 build made %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("decision %d: %d, the version-1 build chose %d", i, got[i], want[i])
		}
	}
}

// TestRestoreTaskModeNeedsTaskReliability: a snapshot taken after the switch to task-feedback
// settings cannot be restored into a policy that has none (it would decide otherwise), and says so.
func TestRestoreTaskModeNeedsTaskReliability(t *testing.T) {
	spec, err := RecommendedSpec()
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(spec, testEnv(3))
	if err != nil {
		t.Fatal(err)
	}
	play(p, newStepSource(11, 40, 8), 0, 50) // half the outcomes carry a task signal
	if !p.(*Factored).TaskMode() {
		t.Fatal("no task mode after task outcomes")
	}
	snap, err := Snapshot(p)
	if err != nil {
		t.Fatal(err)
	}
	spec.TaskReliability = nil
	q, err := New(spec, testEnv(3))
	if err != nil {
		t.Fatal(err)
	}
	if err := Restore(q, snap); err == nil || !strings.Contains(err.Error(), "task-feedback mode") {
		t.Fatalf("restore into a policy without task_reliability: %v", err)
	}
}

// TestHealthLayerProviderLearnedByHand: with provider_learned the provider level waits until
// siblings of failed tools are seen to fail more often than not (ρ̂ > 1/2, one prior pair at 0).
func TestHealthLayerProviderLearnedByHand(t *testing.T) {
	cfg := issueLayer
	cfg.ProviderStrength, cfg.ProviderMaskAfter, cfg.SiblingStrength, cfg.ProviderLearned = 1, 2, 1, true
	// Tools 0, 1, 2 share provider 0; tools 3, 4 share provider 1.
	l := NewHealthLayer(cfg, []int{0, 0, 0, 1, 1})
	l.Update(0, 0, false) // provider 0 under suspicion
	l.Update(1, 1, false) // a sibling call that failed: ρ̂ = 1/(1 + 1) = 1/2, not above
	r, m := l.Estimate(2, 2)
	if m {
		t.Fatal("two failures before the correlation is learned must not mask the provider")
	}
	// No provider rate, no sibling discount: r̂ = p̄ = 1 → 0.95 → 0.9025.
	near(t, "untried sibling before ρ̂ > 1/2", r, 0.9025)
	l.Update(2, 3, false) // ρ̂ = 2/(2 + 1) = 2/3: the provider level acts, and masks
	if _, m := l.Estimate(2, 4); !m {
		t.Fatal("a third failed sibling with ρ̂ = 2/3 must mask the provider")
	}
	l.Update(3, 5, false) // first failure of provider 1: suspicion, no mask
	r, m = l.Estimate(4, 6)
	if m {
		t.Fatal("one failure does not mask provider 1")
	}
	// Sibling of a suspect provider: r̂ = p̄·(1 − ρ̂), p̄ = 0.9025·0.95² = 0.81450625, ρ̂ = 2/3
	// (provider 1 has no correlated failure, so its rate is p̄).
	near(t, "sibling of a failed tool once ρ̂ = 2/3", r, 0.81450625/3)
	if err := (HealthConfig{PriorStrength: 1, ProviderLearned: true}).Validate("r"); err == nil {
		t.Fatal("provider_learned without sibling_strength must be refused")
	}
}

// TestHealthLayerBoundariesByHand pins the layer's boundaries where an off-by-one would pass the
// other tests: pool_evidence (a tool feeds p̄ while its evidence is below it, not at it), the
// half-life of incident membership (less than H steps), the incidents' evidence window (within
// D steps of the resolution, D included, or any time while no incident is open) and the decay
// table's edge (the same 2^(−g/H) on both sides of it).
func TestHealthLayerBoundariesByHand(t *testing.T) {
	l := NewHealthLayer(HealthConfig{PriorStrength: 1, PoolInit: 1, PoolRate: 0.5, PoolEvidence: 2}, nil)
	l.Update(1, 0, true)  // evidence 0 < 2: p̄ ← 1 + 0.5·(1 − 1) = 1
	l.Update(1, 1, false) // evidence 1 < 2: p̄ ← 1 + 0.5·(0 − 1) = 0.5
	l.Update(1, 2, false) // evidence 2, not below 2: p̄ stays 0.5
	near(t, "p̄ after a tool reached pool_evidence", l.Pool(), 0.5)
	l.Update(2, 3, false) // a fresh tool: p̄ ← 0.5 + 0.5·(0 − 0.5) = 0.25
	near(t, "p̄ fed by a fresh tool", l.Pool(), 0.25)

	h := NewHealthLayer(HealthConfig{HalfLife: 100, PriorStrength: 1, PoolInit: 1, IncidentProbe: 10, IncidentEvidenceWindow: true}, nil)
	if !h.withinHalfLife(0, 99) || h.withinHalfLife(0, 100) {
		t.Fatal("within a half-life: 99 steps yes, 100 steps no")
	}
	h.inc.resolved, h.inc.open = 100, true
	if !h.inEvidenceWindow(110) || h.inEvidenceWindow(111) {
		t.Fatal("evidence window: D = 10 steps after the resolution yes, 11 no")
	}
	h.inc.open = false
	if !h.inEvidenceWindow(5000) {
		t.Fatal("evidence window: any time while no incident is open")
	}
	for _, g := range []int{decayTableLen - 1, decayTableLen, decayTableLen + 1} {
		near(t, "decay at the table's edge", h.decay(0, g), math.Exp2(-float64(g)/100))
	}
}

// TestFactoredLookAheadByHand: three candidates, calibrated relevance 0.9, 0.6 and 0.5, tool 0
// with r̂ = 0.5 (one failure, m = 1 at p̄ = 1: (0 + 1)/(0 + 1 + 1)), the others 1; expected
// fusion, so r̂·P is 0.45, 0.6 and 0.5. With a fallback to follow (Remaining 2) each is worth
// r̂ᵢPᵢ + (1 − r̂ᵢ)(Vᵢ − λ), Vᵢ the best of the others: at λ = 0.1 tool 0 is worth
// 0.45 + 0.5·(0.6 − 0.1) = 0.70 and goes first (tools 1 and 2 never fail: 0.6 and 0.5); at
// λ = 0.45, 0.45 + 0.5·0.15 = 0.525, under tool 1's 0.6. With no attempt left (Remaining 1) the
// look-ahead is off: 0.45, 0.6, 0.5, tool 1.
func TestFactoredLookAheadByHand(t *testing.T) {
	for _, c := range []struct {
		lambda    float64
		remaining int
		want      []float64
		choose    int
	}{
		{0.1, 2, []float64{0.70, 0.6, 0.5}, 0},
		{0.45, 2, []float64{0.525, 0.6, 0.5}, 1},
		{0.1, 1, []float64{0.45, 0.6, 0.5}, 1},
	} {
		layer := HealthConfig{PriorStrength: 1, PoolInit: 1}
		p, err := New(Spec{Name: "f", Kind: "factored", Attempts: 2, Relevance: &RelevanceSpec{Model: "calibrated"},
			Reliability: &layer, Fusion: &FusionConfig{Kind: FusionExpected, AttemptCost: c.lambda}}, Env{NumTools: 3})
		if err != nil {
			t.Fatal(err)
		}
		s := &Step{Candidates: []Candidate{{Tool: 0, Relevance: 0.9}, {Tool: 1, Relevance: 0.6}, {Tool: 2, Relevance: 0.5}}}
		p.Observe(s, 0, Feedback{Executed: false})
		s.T, s.Remaining = 1, c.remaining
		out := make([]float64, 3)
		p.(*Factored).Scores(s, out)
		for i, w := range c.want {
			near(t, "look-ahead score", out[i], w)
		}
		if got := p.Choose(s); got != c.choose {
			t.Fatalf("λ %v, remaining %d: chose %d, want %d", c.lambda, c.remaining, got, c.choose)
		}
	}
}
