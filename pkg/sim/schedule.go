package sim

import (
	"math"
	"math/rand/v2"
	"sort"
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

// NewSchedule fixes a scenario's tool selections for one stream of world w. freq is the
// StreamFrequency of the stream; seed drives random selections and flaky outcomes.
func NewSchedule(sc Scenario, w *World, freq Frequency, seed uint64) *Schedule {
	numTools := w.NumTools
	s := &Schedule{rules: make([][]rule, numTools), addedAt: make([]int, numTools), seed: seed}
	rng := rand.New(rand.NewPCG(seed, 0x5ce9a210))
	for _, e := range sc.Events {
		var tools []int
		if e.Select.Unit == UnitProvider {
			tools = selectProviders(e.Select, w, freq, rng)
		} else {
			order := freq.Order
			switch {
			case e.Select.Among == AmongRelevant:
				order = append([]int(nil), order[:freq.Relevant()]...)
				if e.Select.By == "random" {
					rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				}
			case e.Select.By == "random":
				order = rng.Perm(numTools)
			}
			tools = selectTools(e.Select, order)
		}
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
			if _, down := r.flapDownSince(t); down {
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

// Chance returns the probability that calling tool at step t succeeds (1 up, 0 down, p for a
// flaky tool) and, when the tool is down for good reason at t (persistent, transient, flapping),
// the step its current outage began (-1 otherwise). Oracles read it; policies never do.
func (s *Schedule) Chance(tool, t int) (p float64, outageSince int) {
	p, outageSince = 1, -1
	for _, r := range s.rules[tool] {
		if t < r.start {
			continue
		}
		switch r.kind {
		case EventPersistent:
			return 0, r.start
		case EventTransient:
			if t < r.end {
				return 0, r.start
			}
		case EventFlapping:
			if since, down := r.flapDownSince(t); down {
				return 0, since
			}
		case EventFlaky:
			p = min(p, r.p) // Executes compares one coin with every rate
		}
	}
	return p, outageSince
}

// flapDownSince reports whether a flapping rule has its tool down at t (t at or after its start):
// in a down-phase before its end (0: none), and the step that phase began.
func (r rule) flapDownSince(t int) (since int, down bool) {
	phase := (t - r.start) / r.period
	if phase%2 != 0 || (r.end != 0 && t >= r.end) {
		return 0, false
	}
	return r.start + phase*r.period, true
}

// uniform maps (seed, a, b) to [0, 1) with the SplitMix64 finaliser.
func uniform(seed, a, b uint64) float64 {
	z := seed ^ (a * 0x9e3779b97f4a7c15) ^ (b * 0xbf58476d1ce4e5b9)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// selectProviders applies a provider selector: providers are ordered by how often their tools
// are relevant in the stream (summed over the provider's tools, ties by the provider's best
// tool in the frequency order) or at random; whole providers are skipped until SkipTop·N tools
// are passed, then taken until at least Fraction·N tools are selected. Every tool of a taken
// provider fails.
func selectProviders(sel Selector, w *World, freq Frequency, rng *rand.Rand) []int {
	np := w.numProviders()
	members := make([][]int, np)
	weight := make([]int, np)
	var order []int // providers in order of their most frequent tool
	for _, tool := range freq.Order {
		p := w.providerOf(tool)
		if members[p] == nil {
			order = append(order, p)
		}
		members[p] = append(members[p], tool)
		weight[p] += freq.Count[tool]
	}
	if sel.By == "random" {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	} else {
		sort.SliceStable(order, func(a, b int) bool { return weight[order[a]] > weight[order[b]] })
	}
	n := w.NumTools
	skip := int(math.Round(sel.SkipTop * float64(n)))
	take := int(math.Round(sel.Fraction * float64(n)))
	var out []int
	passed := 0
	for _, p := range order {
		if len(out) >= take {
			break
		}
		if passed < skip {
			passed += len(members[p])
			continue
		}
		out = append(out, members[p]...)
	}
	return out
}
