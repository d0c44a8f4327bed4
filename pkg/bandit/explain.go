package bandit

import (
	"math"
	"sort"
)

// This file serves the run-time router and the decision log: a policy's ranking of a step's
// candidates (the order it would try them in), each candidate's score broken into the seams,
// the probability with which the policy chose, and provider assignment for tools added while a
// policy runs.

// Parts is one candidate's score as the policy sees it. A part the policy does not have is NaN.
type Parts struct {
	// Score is the policy's ranking score: the fused score it maximises.
	Score float64
	// Relevance is the relevance model's estimate of P(relevant), exploration bonus included.
	Relevance float64
	// Reliability is the estimated probability that the tool executes now: r̂ of a reliability
	// layer, or S_bandit of RATED's discounted LinUCB (learned from execution outcomes).
	Reliability float64
	// Masked: a health check excludes the tool at this step.
	Masked bool
}

// Explainer is implemented by policies whose choice is a best score: Explain fills out (one
// entry per candidate) without changing the policy's state, and Choose returns the allowed,
// unmasked position with the highest Score, ties to the earlier position, else the allowed
// position with the highest Score.
type Explainer interface {
	Explain(s *Step, out []Parts)
}

// Stochastic is implemented by policies that draw their choice: Propensities fills out with
// π(position | s) of the most recent Choose on s.
type Stochastic interface {
	Propensities(s *Step, out []float64)
}

// Explain implements Explainer.
func (p *Factored) Explain(s *Step, out []Parts) {
	p.scores = growScores(p.scores, len(s.Candidates))
	masked := p.Scores(s, p.scores)
	for i, c := range s.Candidates {
		rhat := math.NaN()
		if p.health != nil {
			rhat, _ = p.health.Estimate(c.Tool, s.T)
		}
		out[i] = Parts{Score: p.scores[i], Relevance: p.rel[i], Reliability: rhat, Masked: masked[i]}
	}
}

// Explain implements Explainer: Reliability is S_bandit, the learned execution-success estimate
// with its exploration bonus.
func (p *DiscountedLinUCB) Explain(s *Step, out []Parts) {
	p.loadContext(s)
	w := p.cfg.Weights
	for i, c := range s.Candidates {
		b := p.banditScore(c.Tool, c.Prior)
		out[i] = Parts{Score: w.Semantic*c.Sem + w.Bandit*b + w.Prior*c.Prior, Relevance: math.NaN(), Reliability: b}
	}
}

// Explain implements Explainer.
func (p *PriorOnly) Explain(s *Step, out []Parts) {
	for i, c := range s.Candidates {
		out[i] = Parts{Score: p.weights.Semantic*c.Sem + p.weights.Prior*c.Prior, Relevance: math.NaN(), Reliability: math.NaN()}
	}
}

// Propensities implements Stochastic: the softmax of the last Choose.
func (p *BatchGRPO) Propensities(s *Step, out []float64) {
	for i := range out {
		out[i] = 0
		if i < len(p.probs) {
			out[i] = p.probs[i]
		}
	}
}

// Ranking is the order in which a policy would try a step's candidates absent feedback.
type Ranking struct {
	// Order lists the allowed positions, the policy's choice first; for an Explainer, the
	// unmasked ones by descending Score, then the masked ones; otherwise the successive choices
	// of Choose as each earlier one is excluded.
	Order []int
	// Parts per position (nil unless the policy is an Explainer).
	Parts []Parts
	// Propensity per position: the probability that the policy's first choice is that position.
	// A deterministic policy gives 1 to its choice and 0 elsewhere.
	Propensity []float64
	// Explores is true when the propensities come from a stochastic policy.
	Explores bool
}

// Rank ranks s's candidates with p. For an Explainer it leaves p's state unchanged; otherwise it
// calls Choose once per allowed position (a policy whose Choose has side effects, such as a
// breaker moving to half-open or a sampler drawing, has them). s.Excluded is restored on return.
func Rank(p Policy, s *Step) Ranking {
	n := len(s.Candidates)
	r := Ranking{Propensity: make([]float64, n)}
	if n == 0 {
		return r
	}
	if e, ok := p.(Explainer); ok {
		r.Parts = make([]Parts, n)
		e.Explain(s, r.Parts)
		r.Order = Order(s, r.Parts)
		if len(r.Order) == 0 {
			r.Order = []int{p.Choose(s)} // every position excluded: the policy's own fallback
		}
		r.Propensity[r.Order[0]] = 1
		return r
	}
	if sc, ok := p.(scorer); ok { // a stochastic policy that still has scores to log
		r.Parts = make([]Parts, n)
		sc.ScoreParts(s, r.Parts)
	}
	saved := s.Excluded
	excluded := make([]bool, n)
	if saved != nil {
		copy(excluded, saved)
	}
	s.Excluded = excluded
	defer func() { s.Excluded = saved }()
	allowed := 0
	for _, ex := range excluded {
		if !ex {
			allowed++
		}
	}
	for range allowed {
		pos := p.Choose(s)
		if len(r.Order) == 0 {
			if st, ok := p.(Stochastic); ok {
				st.Propensities(s, r.Propensity)
				r.Explores = true
			} else {
				r.Propensity[pos] = 1
			}
		}
		if excluded[pos] {
			break // the policy returned an excluded position: nothing else is allowed
		}
		r.Order = append(r.Order, pos)
		excluded[pos] = true
	}
	if len(r.Order) == 0 {
		pos := p.Choose(s)
		r.Order = []int{pos}
		r.Propensity[pos] = 1
	}
	return r
}

// Order is an explaining policy's ranking of s's allowed positions from their parts: the
// unmasked ones by descending Score, then the masked ones, ties to the earlier position.
func Order(s *Step, parts []Parts) []int {
	var order []int
	for i := range parts {
		if s.Allowed(i) {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		pa, pb := parts[order[a]], parts[order[b]]
		if pa.Masked != pb.Masked {
			return !pa.Masked
		}
		return pa.Score > pb.Score
	})
	return order
}

// Describe returns, for a choice p just made on s by Choose, each candidate's parts (nil unless
// p is an Explainer, whose Explain leaves its state unchanged) and the propensities of that
// choice; explores says they come from a stochastic policy.
func Describe(p Policy, s *Step, chosen int) (parts []Parts, propensity []float64, explores bool) {
	n := len(s.Candidates)
	propensity = make([]float64, n)
	if st, ok := p.(Stochastic); ok {
		st.Propensities(s, propensity)
		explores = true
	} else {
		propensity[chosen] = 1
	}
	if e, ok := p.(Explainer); ok {
		parts = make([]Parts, n)
		e.Explain(s, parts)
	} else if sc, ok := p.(scorer); ok {
		parts = make([]Parts, n)
		sc.ScoreParts(s, parts)
	}
	return parts, propensity, explores
}

// ProviderSetter is implemented by policies that pool evidence by provider.
type ProviderSetter interface {
	// SetProvider assigns tool to provider index (-1: none), for tools added after the policy
	// was built or whose endpoint changed.
	SetProvider(tool, provider int)
}

// SetProvider implements ProviderSetter; it may write into the Providers slice of the Env the
// layer was built with.
func (l *HealthLayer) SetProvider(tool, provider int) {
	for len(l.provider) <= tool {
		l.provider = append(l.provider, -1)
	}
	l.provider[tool] = provider
}

// SetProvider implements ProviderSetter for the policy's reliability layer.
func (p *Factored) SetProvider(tool, provider int) {
	if ps, ok := p.health.(ProviderSetter); ok {
		ps.SetProvider(tool, provider)
	}
}

// The run-time seams, checked at compile time.
var (
	_ Explainer      = (*Factored)(nil)
	_ Explainer      = (*DiscountedLinUCB)(nil)
	_ Explainer      = (*PriorOnly)(nil)
	_ Stochastic     = (*BatchGRPO)(nil)
	_ ProviderSetter = (*Factored)(nil)
)
