package sim

import (
	"math/rand/v2"
)

// Schedule answers, for every tool and step, whether the tool exists and whether a call
// succeeds. It is fixed before the run starts, like the paper's failed set.
type Schedule struct {
	rules   [][]rule // per tool
	addedAt []int    // first step at which the tool exists
	seed    uint64
	// Affected lists, per event, the tools it selected (for reports).
	Affected [][]int
}

type rule struct {
	kind               string
	start, end, period int
	p                  float64
}

// NewSchedule fixes a scenario's tool selections for one stream. frequencyOrder is the
// FrequencyOrder of the stream; seed drives random selections and flaky outcomes.
func NewSchedule(sc Scenario, numTools int, frequencyOrder []int, seed uint64) *Schedule {
	s := &Schedule{rules: make([][]rule, numTools), addedAt: make([]int, numTools), seed: seed}
	rng := rand.New(rand.NewPCG(seed, 0x5ce9a210))
	for _, e := range sc.Events {
		order := frequencyOrder
		if e.Select.By == "random" {
			order = rng.Perm(numTools)
		}
		tools := selectTools(e.Select, order)
		s.Affected = append(s.Affected, tools)
		for _, tool := range tools {
			if e.Kind == EventNewTools {
				s.addedAt[tool] = max(s.addedAt[tool], e.Start)
				continue
			}
			s.rules[tool] = append(s.rules[tool], rule{kind: e.Kind, start: e.Start, end: e.End, period: e.Period, p: e.SuccessProb})
		}
	}
	return s
}

// Exists reports whether tool is in the catalog at step t.
func (s *Schedule) Exists(tool, t int) bool { return t >= s.addedAt[tool] }

// Executes reports whether calling tool at step t succeeds. Flaky outcomes are a pure function
// of (seed, tool, t), so every policy sees the same luck for the same call.
func (s *Schedule) Executes(tool, t int) bool {
	for _, r := range s.rules[tool] {
		if t < r.start {
			continue
		}
		switch r.kind {
		case EventPersistent:
			return false
		case EventTransient:
			if t < r.end {
				return false
			}
		case EventFlapping:
			if ((t-r.start)/r.period)%2 == 0 {
				return false
			}
		case EventFlaky:
			if uniform(s.seed, uint64(tool), uint64(t)) >= r.p {
				return false
			}
		}
	}
	return true
}

// uniform maps (seed, a, b) to [0, 1) with the SplitMix64 finaliser.
func uniform(seed, a, b uint64) float64 {
	z := seed ^ (a * 0x9e3779b97f4a7c15) ^ (b * 0xbf58476d1ce4e5b9)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}
