package bandit

import (
	"math"
	"math/rand/v2"
)

// GRPOConfig configures BatchGRPO.
type GRPOConfig struct {
	// Batch is how many steps of trajectories are collected between parameter updates.
	Batch int
	// LearningRate scales the policy-gradient step.
	LearningRate float64
	// Temperature divides S_sem in the logits (lower = greedier on semantics).
	Temperature float64
	// ClipLogit bounds each tool's learned bias to [−ClipLogit, ClipLogit], a crude trust region
	// in place of GRPO's ratio clipping (the policy is only updated from on-policy batches).
	ClipLogit float64
}

// BatchGRPO is the ToolRL-like baseline: a stochastic softmax policy over the candidates with
// logits S_sem/τ + β_tool, whose per-tool parameters β are updated only every Batch steps from
// the collected trajectories with group-relative advantages A = (r − mean)/std, the group being
// the batch (the stream rarely repeats a query inside one batch, so per-query groups would be
// singletons). Between updates it does not react to failures, which is the point of the baseline:
// the planner is trained in batches, not reranked online.
type BatchGRPO struct {
	label string
	cfg   GRPOConfig
	beta  []float64
	rng   *rand.Rand
	src   *rand.PCG // rng's source when built by New, so Snapshot can save it
	batch []grpoSample
	probs []float64
}

type grpoSample struct {
	tools  []int
	probs  []float64
	chosen int
	reward float64
}

// NewBatchGRPO returns the policy; rng drives its action sampling.
func NewBatchGRPO(name string, cfg GRPOConfig, numTools int, rng *rand.Rand) *BatchGRPO {
	return &BatchGRPO{label: name, cfg: cfg, beta: make([]float64, numTools), rng: rng}
}

// Name implements Policy.
func (p *BatchGRPO) Name() string { return p.label }

// policy fills p.probs with π(·|s).
func (p *BatchGRPO) policy(s *Step) {
	p.probs = growScores(p.probs, len(s.Candidates))
	maxLogit := math.Inf(-1)
	for i, c := range s.Candidates {
		p.beta = grow(p.beta, c.Tool)
		logit := c.Sem/p.cfg.Temperature + p.beta[c.Tool]
		if !s.Allowed(i) {
			logit = math.Inf(-1) // already tried in this step
		}
		p.probs[i] = logit
		maxLogit = math.Max(maxLogit, p.probs[i])
	}
	if math.IsInf(maxLogit, -1) {
		maxLogit = 0 // every position excluded: exp(−∞) = 0 everywhere, handled by Choose
	}
	z := 0.0
	for i := range p.probs {
		p.probs[i] = math.Exp(p.probs[i] - maxLogit)
		z += p.probs[i]
	}
	for i := range p.probs {
		if z > 0 {
			p.probs[i] /= z
		}
	}
}

// Choose implements Policy: sample from π.
func (p *BatchGRPO) Choose(s *Step) int {
	p.policy(s)
	u := p.rng.Float64()
	last := 0
	for i, pr := range p.probs {
		if pr > 0 {
			last = i
		}
		u -= pr
		if u < 0 && pr > 0 {
			return i
		}
	}
	return last
}

// Observe implements Policy: records the sample (with the protocol's reward) and updates every
// Batch samples.
func (p *BatchGRPO) Observe(s *Step, pos int, fb Feedback) {
	p.policy(s)
	tools := make([]int, len(s.Candidates))
	for i, c := range s.Candidates {
		tools[i] = c.Tool
	}
	p.batch = append(p.batch, grpoSample{tools: tools, probs: append([]float64(nil), p.probs...), chosen: pos, reward: fb.Reward()})
	if len(p.batch) >= p.cfg.Batch {
		p.update()
	}
}

func (p *BatchGRPO) update() {
	n := float64(len(p.batch))
	mean, sq := 0.0, 0.0
	for _, smp := range p.batch {
		mean += smp.reward
	}
	mean /= n
	for _, smp := range p.batch {
		sq += (smp.reward - mean) * (smp.reward - mean)
	}
	std := math.Sqrt(sq / n)
	if std > 0 {
		for _, smp := range p.batch {
			adv := (smp.reward - mean) / std
			for i, tool := range smp.tools {
				g := -smp.probs[i]
				if i == smp.chosen {
					g += 1
				}
				p.beta[tool] += p.cfg.LearningRate * adv * g / n
			}
		}
		if c := p.cfg.ClipLogit; c > 0 {
			for i, b := range p.beta {
				p.beta[i] = math.Max(-c, math.Min(c, b))
			}
		}
	}
	p.batch = p.batch[:0]
}
