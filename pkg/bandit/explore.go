package bandit

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Most policies are deterministic: the decision log gives their choice propensity 1, and
// inverse-propensity estimators of another policy have no support wherever that policy would
// choose otherwise. An exploring wrapper makes any policy a logging policy for off-policy
// evaluation: it draws its choice, and its propensities (the draw's probabilities) are what
// `rated serve` and `rated eval dynamic` write to the decision log.

// Exploration kinds of ExploreConfig.Kind.
const (
	ExploreEpsilonGreedy = "epsilon_greedy"
	ExploreSoftmax       = "softmax"
)

// ExploreConfig wraps a policy so that it explores (Spec.Explore).
type ExploreConfig struct {
	// Kind: epsilon_greedy takes the policy's choice with probability 1 − ε and a uniform draw
	// over the allowed candidates otherwise (every allowed candidate gets at least ε/n);
	// softmax draws with probability ∝ exp(score / τ) over the allowed candidates (those a
	// health check masks left out while another is unmasked, as the inner policy does), from the
	// policy's own scores (kinds factored, rated, linucb, prior_only).
	Kind        string  `yaml:"kind" json:"kind"`
	Epsilon     float64 `yaml:"epsilon,omitempty" json:"epsilon,omitempty"`
	Temperature float64 `yaml:"temperature,omitempty" json:"temperature,omitempty"`
}

// scoredKinds are the policy kinds whose policies have scores (Explainer).
var scoredKinds = map[string]bool{"factored": true, "rated": true, "linucb": true, "prior_only": true}

// Validate checks the configuration of a policy of kind policyKind; key locates it.
func (c ExploreConfig) Validate(key, policyKind string) error {
	switch {
	case policyKind == "batch_grpo" || IsOracle(policyKind):
		return fmt.Errorf("%s: a %s policy cannot be wrapped for exploration", key, policyKind)
	case c.Kind == ExploreEpsilonGreedy:
		if !(c.Epsilon > 0 && c.Epsilon <= 1) {
			return fmt.Errorf("%s.epsilon = %v: must be in (0, 1]", key, c.Epsilon)
		}
		if c.Temperature != 0 {
			return fmt.Errorf("%s.temperature: applies to kind %s only", key, ExploreSoftmax)
		}
	case c.Kind == ExploreSoftmax:
		if !(c.Temperature > 0) || math.IsInf(c.Temperature, 0) {
			return fmt.Errorf("%s.temperature = %v: must be a finite number > 0", key, c.Temperature)
		}
		if c.Epsilon != 0 {
			return fmt.Errorf("%s.epsilon: applies to kind %s only", key, ExploreEpsilonGreedy)
		}
		if !scoredKinds[policyKind] {
			return fmt.Errorf("%s: softmax exploration needs a policy with scores (factored, rated, linucb, prior_only), not %s", key, policyKind)
		}
	default:
		return fmt.Errorf("%s.kind = %q: must be %s or %s", key, c.Kind, ExploreEpsilonGreedy, ExploreSoftmax)
	}
	return nil
}

// Exploring is a policy that draws its choice around an inner policy's (ExploreConfig). It
// learns exactly as the inner policy: every outcome goes to it.
type Exploring struct {
	inner Policy
	cfg   ExploreConfig
	rng   *rand.Rand
	src   *rand.PCG
	probs []float64
	parts []Parts
}

// NewExploring wraps inner; seed drives the draws.
func NewExploring(inner Policy, cfg ExploreConfig, seed uint64) *Exploring {
	src := rand.NewPCG(seed, 0x5851f42d4c957f2d)
	return &Exploring{inner: inner, cfg: cfg, src: src, rng: rand.New(src)}
}

// Name implements Policy.
func (p *Exploring) Name() string { return p.inner.Name() }

// Inner returns the wrapped policy.
func (p *Exploring) Inner() Policy { return p.inner }

// Distribution fills out with the probabilities with which the next Choose on s picks each
// position (0 for excluded ones), without drawing.
func (p *Exploring) Distribution(s *Step, out []float64) {
	n := 0
	for i := range out {
		out[i] = 0
		if s.Allowed(i) {
			n++
		}
	}
	if n == 0 {
		out[p.inner.Choose(s)] = 1 // every position excluded: the inner policy's own fallback
		return
	}
	switch p.cfg.Kind {
	case ExploreEpsilonGreedy:
		for i := range out {
			if s.Allowed(i) {
				out[i] = p.cfg.Epsilon / float64(n)
			}
		}
		out[p.inner.Choose(s)] += 1 - p.cfg.Epsilon
	case ExploreSoftmax:
		if cap(p.parts) < len(out) {
			p.parts = make([]Parts, len(out))
		}
		p.parts = p.parts[:len(out)]
		p.inner.(Explainer).Explain(s, p.parts)
		// Over the candidates the inner policy would choose among: the unmasked allowed ones,
		// or every allowed one when a health check masks them all (Choose's rule). A softmax
		// over the masked too put most of its mass on a tool just marked down whenever the
		// fusion still scored it high.
		unmasked := false
		for i, pt := range p.parts {
			unmasked = unmasked || s.Allowed(i) && !pt.Masked
		}
		eligible := func(i int) bool { return s.Allowed(i) && !(unmasked && p.parts[i].Masked) }
		top := math.Inf(-1)
		for i, pt := range p.parts {
			if eligible(i) {
				top = math.Max(top, pt.Score)
			}
		}
		sum := 0.0
		for i, pt := range p.parts {
			if eligible(i) {
				out[i] = math.Exp((pt.Score - top) / p.cfg.Temperature)
				sum += out[i]
			}
		}
		for i := range out {
			out[i] /= sum
		}
	}
}

// Choose implements Policy: a draw from Distribution.
func (p *Exploring) Choose(s *Step) int {
	p.probs = growScores(p.probs, len(s.Candidates))
	p.Distribution(s, p.probs)
	u := p.rng.Float64()
	last := 0
	for i, q := range p.probs {
		if q <= 0 {
			continue
		}
		last = i
		if u < q {
			return i
		}
		u -= q
	}
	return last // rounding left u just above the total
}

// Observe implements Policy.
func (p *Exploring) Observe(s *Step, pos int, fb Feedback) { p.inner.Observe(s, pos, fb) }

// Propensities implements Stochastic: the distribution of the last Choose.
func (p *Exploring) Propensities(s *Step, out []float64) {
	for i := range out {
		out[i] = 0
		if i < len(p.probs) {
			out[i] = p.probs[i]
		}
	}
}

// ScoreParts fills out with the inner policy's parts (NaN without scores), for the decision log.
func (p *Exploring) ScoreParts(s *Step, out []Parts) {
	if e, ok := p.inner.(Explainer); ok {
		e.Explain(s, out)
		return
	}
	for i := range out {
		out[i] = Parts{Score: math.NaN(), Relevance: math.NaN(), Reliability: math.NaN()}
	}
}

// SetProvider implements ProviderSetter for the inner policy.
func (p *Exploring) SetProvider(tool, provider int) {
	if ps, ok := p.inner.(ProviderSetter); ok {
		ps.SetProvider(tool, provider)
	}
}

// scorer is a stochastic policy that still has per-candidate parts to log (Exploring).
type scorer interface {
	ScoreParts(s *Step, out []Parts)
}

var (
	_ Stochastic     = (*Exploring)(nil)
	_ scorer         = (*Exploring)(nil)
	_ ProviderSetter = (*Exploring)(nil)
)
