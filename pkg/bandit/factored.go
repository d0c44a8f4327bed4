package bandit

import (
	"fmt"
	"math"
)

// Fusion kinds of a Factored policy.
const (
	// FusionLinear scores w_sem·S_sem + w_rel·relevance + w_r·r̂ + w_prior·r_static.
	FusionLinear = "linear"
	// FusionExpected scores the expected task success P(relevant)·r̂: the probability that the
	// tool both serves the query and executes, with the relevance model's calibrated estimate.
	FusionExpected = "expected"
)

// FusionConfig is how a Factored policy combines its relevance model and reliability layer.
type FusionConfig struct {
	Kind string `yaml:"kind" json:"kind"`
	// AttemptCost λ, for the expected fusion when more attempts remain in the step: a candidate
	// is worth r̂·P + (1 − r̂)·(V − λ), where V is the best expected success among the others
	// (the fallback if it fails) and λ the price of the extra attempt. A tool likely to fail
	// but likely relevant is then worth trying first. 0: no look-ahead (masks apply).
	AttemptCost float64 `yaml:"attempt_cost,omitempty" json:"attempt_cost,omitempty"`
	Semantic    float64 `yaml:"semantic,omitempty" json:"semantic,omitempty"`
	Relevance   float64 `yaml:"relevance,omitempty" json:"relevance,omitempty"`
	Reliability float64 `yaml:"reliability,omitempty" json:"reliability,omitempty"`
	Prior       float64 `yaml:"prior,omitempty" json:"prior,omitempty"`
}

// Validate checks the fusion; key locates it in error messages.
func (f FusionConfig) Validate(key string) error {
	switch f.Kind {
	case FusionLinear:
		return validateWeights(key, map[string]float64{"semantic": f.Semantic, "relevance": f.Relevance,
			"reliability": f.Reliability, "prior": f.Prior}, "(semantic, relevance, reliability, prior)")
	case FusionExpected:
		if f.Semantic != 0 || f.Relevance != 0 || f.Reliability != 0 || f.Prior != 0 {
			return fmt.Errorf("%s: the expected fusion takes no weights", key)
		}
		if f.AttemptCost < 0 || f.AttemptCost > 1 || math.IsNaN(f.AttemptCost) {
			return fmt.Errorf("%s.attempt_cost = %v: must be in [0, 1]", key, f.AttemptCost)
		}
		return nil
	}
	return fmt.Errorf("%s.kind = %q: must be %q or %q", key, f.Kind, FusionLinear, FusionExpected)
}

// Factored is a policy built from its three seams: a relevance model, a reliability layer and
// a fusion. A masked tool is skipped unless every remaining candidate is masked. Execution
// outcomes reach only the reliability layer; observed task outcomes of executed tools reach
// only the relevance model.
type Factored struct {
	label     string
	relevance RelevanceModel
	health    Reliability // nil: every tool r̂ = 1, never masked
	fusion    FusionConfig
	// taskHealth reconfigures health at the first observed task outcome (nil: never);
	// taskMode records that it has.
	taskHealth *HealthConfig
	taskMode   bool
	rel        []float64
	rhat       []float64
	scores     []float64
	masked     []bool
}

// NewFactored returns the policy; health may be nil.
func NewFactored(name string, relevance RelevanceModel, health Reliability, fusion FusionConfig) *Factored {
	return &Factored{label: name, relevance: relevance, health: health, fusion: fusion}
}

// Name implements Policy.
func (p *Factored) Name() string { return p.label }

// Scores fills out with the fused score of every candidate and returns, per candidate, whether
// it is masked (the slice is reused by the next call).
func (p *Factored) Scores(s *Step, out []float64) []bool {
	n := len(s.Candidates)
	p.rel, p.rhat = growScores(p.rel, n), growScores(p.rhat, n)
	if cap(p.masked) < n {
		p.masked = make([]bool, n)
	}
	p.masked = p.masked[:n]
	p.relevance.Scores(s, p.rel)
	f := p.fusion
	for i, c := range s.Candidates {
		rhat, masked := 1.0, false
		if p.health != nil {
			rhat, masked = p.health.Estimate(c.Tool, s.T)
		}
		p.masked[i], p.rhat[i] = masked, rhat
		if f.Kind == FusionExpected {
			out[i] = clamp01(p.rel[i]) * rhat
			continue
		}
		out[i] = f.Semantic*c.Sem + f.Relevance*p.rel[i] + f.Reliability*rhat + f.Prior*c.Prior
	}
	if f.Kind == FusionExpected && f.AttemptCost > 0 && s.Remaining >= 2 {
		p.lookAhead(s, out)
	}
	return p.masked
}

// lookAhead rescores out (expected success r̂·P) for an attempt that a fallback can follow:
// r̂ᵢ·Pᵢ + (1 − r̂ᵢ)·(Vᵢ − λ), Vᵢ the best expected success among the other allowed candidates.
// Masks no longer exclude: a failure costs an attempt, not the step.
func (p *Factored) lookAhead(s *Step, out []float64) {
	best, second := -1, -1
	for i, v := range out {
		if !s.Allowed(i) {
			continue
		}
		switch {
		case best < 0 || v > out[best]:
			best, second = i, best
		case second < 0 || v > out[second]:
			second = i
		}
	}
	lambda := p.fusion.AttemptCost
	vBest, vSecond := 0.0, 0.0
	if best >= 0 {
		vBest = out[best]
	}
	if second >= 0 {
		vSecond = out[second]
	}
	for i := range out {
		v := vBest
		if i == best {
			v = vSecond
		}
		out[i] = out[i] + (1-p.rhat[i])*(v-lambda)
		p.masked[i] = false
	}
}

// Choose implements Policy: the best fused score among the candidates allowed in this step
// and not masked, else among those allowed.
func (p *Factored) Choose(s *Step) int {
	p.scores = growScores(p.scores, len(s.Candidates))
	masked := p.Scores(s, p.scores)
	best := -1
	for i, v := range p.scores {
		if s.Allowed(i) && !masked[i] && (best < 0 || v > p.scores[best]) {
			best = i
		}
	}
	if best >= 0 {
		return best
	}
	return argmaxAllowed(s, p.scores)
}

// SetTaskReliability makes the reliability layer (a *HealthLayer) continue with cfg from the
// first observed task outcome on; it panics on an invalid cfg or another kind of layer.
func (p *Factored) SetTaskReliability(cfg HealthConfig) {
	if _, ok := p.health.(*HealthLayer); !ok {
		panic(fmt.Sprintf("policy %s: task_reliability needs a HealthLayer, not %T", p.label, p.health))
	}
	if err := cfg.Validate("task_reliability"); err != nil {
		panic(err)
	}
	p.taskHealth = &cfg
}

// TaskMode reports whether the policy has switched to its task-feedback reliability settings.
func (p *Factored) TaskMode() bool { return p.taskMode }

func (p *Factored) enterTaskMode() {
	if p.taskMode || p.taskHealth == nil {
		return
	}
	p.health.(*HealthLayer).Reconfigure(*p.taskHealth)
	p.taskMode = true
}

// Observe implements Policy.
func (p *Factored) Observe(s *Step, pos int, fb Feedback) {
	if fb.TaskKnown {
		p.enterTaskMode()
	}
	if p.health != nil {
		p.health.Update(s.Candidates[pos].Tool, s.T, fb.Executed)
	}
	if fb.Executed && fb.TaskKnown {
		p.relevance.Learn(s, pos, fb.Task)
	}
}

// PaperRelevance is RATED's own discounted LinUCB used as the relevance model of a Factored
// policy: S_bandit with the paper's cold-start prior (r_static on the intercept), learning only
// from observed relevance.
type PaperRelevance struct{ lin *DiscountedLinUCB }

// NewPaperRelevance wraps a DiscountedLinUCB configured as in the paper.
func NewPaperRelevance(cfg LinUCBConfig, numTools, d int) *PaperRelevance {
	cfg.Weights = FusionWeights{Bandit: 1}
	return &PaperRelevance{lin: NewDiscountedLinUCB("relevance", cfg, numTools, d)}
}

// Scores implements RelevanceModel.
func (m *PaperRelevance) Scores(s *Step, out []float64) {
	m.lin.loadContext(s)
	for i, c := range s.Candidates {
		out[i] = m.lin.banditScore(c.Tool, c.Prior)
	}
}

// Learn implements RelevanceModel.
func (m *PaperRelevance) Learn(s *Step, pos int, relevant bool) {
	y := 0.0
	if relevant {
		y = 1
	}
	m.lin.update(s, s.Candidates[pos], y)
}

// The seams, checked at compile time.
var (
	_ Policy         = (*Factored)(nil)
	_ RelevanceModel = (*PaperRelevance)(nil)
	_ RelevanceModel = (*ResidualLinUCB)(nil)
	_ RelevanceModel = FrozenRelevance{}
	_ Reliability    = (*HealthLayer)(nil)
)
