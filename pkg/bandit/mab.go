package bandit

import "math"

// GlobalUCB is the "w/ Global MAB" variant: per-tool UCB1 statistics (Auer et al., 2002) that
// ignore the query, fused like RATED. Each tool starts with one pseudo-observation equal to its
// prior, so an unseen tool's mean is its prior and the bonus stays finite.
type GlobalUCB struct {
	label   string
	alpha   float64
	weights FusionWeights
	sum     []float64
	count   []float64
	t       int
	scores  []float64
}

// NewGlobalUCB returns the global-MAB policy.
func NewGlobalUCB(name string, alpha float64, w FusionWeights, numTools int) *GlobalUCB {
	return &GlobalUCB{label: name, alpha: alpha, weights: w, sum: make([]float64, numTools), count: make([]float64, numTools)}
}

// Name implements Policy.
func (p *GlobalUCB) Name() string { return p.label }

// Choose implements Policy.
func (p *GlobalUCB) Choose(s *Step) int {
	p.scores = growScores(p.scores, len(s.Candidates))
	logT := math.Log(float64(p.t + 2))
	for i, c := range s.Candidates {
		p.sum, p.count = grow(p.sum, c.Tool), grow(p.count, c.Tool)
		n := p.count[c.Tool] + 1
		mean := (p.sum[c.Tool] + c.Prior) / n
		ucb := mean + p.alpha*math.Sqrt(2*logT/n)
		p.scores[i] = p.weights.Semantic*c.Sem + p.weights.Bandit*ucb + p.weights.Prior*c.Prior
	}
	return argmaxAllowed(s, p.scores)
}

// Observe implements Policy, with the protocol's reward.
func (p *GlobalUCB) Observe(s *Step, pos int, fb Feedback) {
	tool := s.Candidates[pos].Tool
	p.sum, p.count = grow(p.sum, tool), grow(p.count, tool)
	p.count[tool]++
	p.sum[tool] += fb.Reward()
	p.t++
}

// SlidingWindowUCB is SW-UCB (Garivier and Moulines, 2011): per-tool means and counts over the
// last Window steps only, with bonus α·√(ξ·ln(min(t, Window)) / N), fused like RATED. Production
// systems use this kind of windowed health score; it forgets a failure after Window steps.
type SlidingWindowUCB struct {
	label   string
	alpha   float64
	xi      float64
	window  int
	weights FusionWeights
	events  [][]swEvent // per tool, oldest first
	t       int
	scores  []float64
}

type swEvent struct {
	t int
	y float64
}

// NewSlidingWindowUCB returns the SW-UCB policy.
func NewSlidingWindowUCB(name string, alpha float64, window int, w FusionWeights, numTools int) *SlidingWindowUCB {
	return &SlidingWindowUCB{label: name, alpha: alpha, xi: 0.5, window: window, weights: w, events: make([][]swEvent, numTools)}
}

// Name implements Policy.
func (p *SlidingWindowUCB) Name() string { return p.label }

func (p *SlidingWindowUCB) prune(tool int) []swEvent {
	p.events = grow(p.events, tool)
	ev := p.events[tool]
	i := 0
	for i < len(ev) && ev[i].t < p.t-p.window { // keep steps T−W … T−1
		i++
	}
	if i > 0 {
		ev = append(ev[:0], ev[i:]...)
		p.events[tool] = ev
	}
	return ev
}

// Choose implements Policy.
func (p *SlidingWindowUCB) Choose(s *Step) int {
	p.t = max(p.t, s.T)
	p.scores = growScores(p.scores, len(s.Candidates))
	logT := math.Log(float64(min(p.t+2, p.window)))
	for i, c := range s.Candidates {
		ev := p.prune(c.Tool)
		sum := c.Prior // one pseudo-observation at the prior
		for _, e := range ev {
			sum += e.y
		}
		n := float64(len(ev) + 1)
		ucb := sum/n + p.alpha*math.Sqrt(p.xi*logT/n)
		p.scores[i] = p.weights.Semantic*c.Sem + p.weights.Bandit*ucb + p.weights.Prior*c.Prior
	}
	return argmaxAllowed(s, p.scores)
}

// Observe implements Policy, with the protocol's reward.
func (p *SlidingWindowUCB) Observe(s *Step, pos int, fb Feedback) {
	tool := s.Candidates[pos].Tool
	p.events = grow(p.events, tool)
	p.events[tool] = append(p.events[tool], swEvent{t: s.T, y: fb.Reward()})
	if s.T > p.t {
		p.t = s.T
	}
}
