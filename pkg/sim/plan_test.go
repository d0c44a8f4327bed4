package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/metrics"
)

// planValue is a plan's expected successes less λ per attempt, written out from its definition:
// attempt j is made only when every earlier one failed, and then succeeds with chance·relevance.
func planValue(seq []int, relevance, chance []float64, lambda float64) float64 {
	v := 0.0
	for j, i := range seq {
		reached := 1.0
		for _, e := range seq[:j] {
			reached *= 1 - chance[e]
		}
		v += reached * (chance[i]*relevance[i] - lambda)
	}
	return v
}

// TestPlanAttemptsByHand: three candidates in ranking order, chances 0.5, 0.8, 0.25,
// relevances 0.6, 0.5, 0.9 (a plan's worth: Σⱼ Πᵢ<ⱼ(1 − pᵢ)(pⱼ·rⱼ − λ)).
//   - λ = 0, expected worth: the index r − λ/p is the relevance, order 2, 0, 1: with k = 3 all
//     three, 0.225 + 0.75·0.3 + 0.75·0.5·0.4 = 0.6; with k = 2 the best pair is {2, 1}, 0.225 +
//     0.75·0.4 = 0.525 (against {0, 1} 0.5, {2, 0} 0.45); with k = 1 tool 1 alone, 0.4.
//   - λ = 0.1: indices 0.4, 0.375, 0.5, order 2, 0, 1, all three worth it: 0.125 + 0.75·0.2 +
//     0.375·0.3 = 0.3875.
//   - λ = 0.25: indices 0.1, 0.1875, −0.1, order 1, 0, 2: {1} 0.15, {1, 0} 0.15 + 0.2·0.05 =
//     0.16, {1, 0, 2} 0.16 + 0.1·(−0.025) = 0.1575: tools 1 then 0.
//   - keep order, λ = 0.1: prefixes {0} 0.2, {0, 1} 0.35, {0, 1, 2} 0.35 + 0.1·0.125 = 0.3625:
//     all three. λ = 0.25: {0} 0.05, {0, 1} 0.125, {0, 1, 2} 0.1225: two; with tool 1
//     excluded, {0} 0.05 against {0, 2} 0.05 + 0.5·(−0.025) = 0.0375: tool 0 alone.
//   - keep order, every chance 0: nothing can run; the first allowed tool alone.
func TestPlanAttemptsByHand(t *testing.T) {
	step := &bandit.Step{Candidates: make([]bandit.Candidate, 3)}
	relevance, chance := []float64{0.6, 0.5, 0.9}, []float64{0.5, 0.8, 0.25}
	excluded := &bandit.Step{Candidates: make([]bandit.Candidate, 3), Excluded: []bool{false, true, false}}
	for _, c := range []struct {
		name      string
		step      *bandit.Step
		chance    []float64
		lambda    float64
		k         int
		keepOrder bool
		want      []int
		worth     float64
	}{
		{"λ 0", step, chance, 0, 3, false, []int{2, 0, 1}, 0.6},
		{"λ 0, k 2", step, chance, 0, 2, false, []int{2, 1}, 0.525},
		{"λ 0, k 1", step, chance, 0, 1, false, []int{1}, 0.4},
		{"λ 0.1", step, chance, 0.1, 3, false, []int{2, 0, 1}, 0.3875},
		{"λ 0.25", step, chance, 0.25, 3, false, []int{1, 0}, 0.16},
		{"keep order λ 0.1", step, chance, 0.1, 3, true, []int{0, 1, 2}, 0.3625},
		{"keep order λ 0.25", step, chance, 0.25, 3, true, []int{0, 1}, 0.125},
		{"keep order λ 0.25, tool 1 excluded", excluded, chance, 0.25, 3, true, []int{0}, 0.05},
		{"keep order, nothing runs", step, []float64{0, 0, 0}, 0.2, 3, true, []int{0}, -0.2},
	} {
		got := planAttempts(c.step, relevance, c.chance, c.lambda, c.k, c.keepOrder, nil)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: plan %v, want %v", c.name, got, c.want)
		}
		if v := planValue(c.want, relevance, c.chance, c.lambda); math.Abs(v-c.worth) > 1e-12 {
			t.Errorf("%s: the plan's worth %v, by hand %v", c.name, v, c.worth)
		}
	}
}

// TestPlanAttemptsIsTheBestPlan checks, on random instances, that the expected-worth plan is
// worth as much as the best of every ordered sequence of at most k distinct allowed candidates
// (found by exhaustive search, not by the index order planAttempts relies on), and the
// order-keeping plan as much as the best prefix of the ranking's executable candidates.
func TestPlanAttemptsIsTheBestPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 2000; trial++ {
		n := 1 + rng.IntN(6)
		k := 1 + rng.IntN(4)
		relevance, chance := make([]float64, n), make([]float64, n)
		step := &bandit.Step{Candidates: make([]bandit.Candidate, n), Excluded: make([]bool, n)}
		var allowed []int
		for i := range n {
			relevance[i] = rng.Float64()
			switch rng.IntN(5) {
			case 0:
				chance[i] = 0
			case 1:
				chance[i] = 1
			default:
				chance[i] = rng.Float64()
			}
			step.Excluded[i] = i > 0 && rng.IntN(4) == 0
			if !step.Excluded[i] {
				allowed = append(allowed, i)
			}
		}
		lambda := []float64{0, 0.01, 0.1, 0.3, rng.Float64() * 0.5}[rng.IntN(5)]

		best := math.Inf(-1)
		var search func(seq []int, used []bool)
		search = func(seq []int, used []bool) {
			if len(seq) > 0 {
				best = max(best, planValue(seq, relevance, chance, lambda))
			}
			if len(seq) == k {
				return
			}
			for _, i := range allowed {
				if !used[i] {
					used[i] = true
					search(append(seq, i), used)
					used[i] = false
				}
			}
		}
		search(nil, make([]bool, n))
		plan := planAttempts(step, relevance, chance, lambda, k, false, nil)
		checkPlan(t, trial, "expected worth", plan, step, k)
		if got := planValue(plan, relevance, chance, lambda); math.Abs(got-best) > 1e-9 {
			t.Fatalf("trial %d (λ %v, k %d, r %v, p %v, excluded %v): plan %v worth %v, the best sequence %v",
				trial, lambda, k, relevance, chance, step.Excluded, plan, got, best)
		}

		var up []int
		for _, i := range allowed {
			if chance[i] > 0 {
				up = append(up, i)
			}
		}
		plan = planAttempts(step, relevance, chance, lambda, k, true, nil)
		checkPlan(t, trial, "keep order", plan, step, k)
		if len(up) == 0 {
			if len(plan) != 1 || plan[0] != allowed[0] {
				t.Fatalf("trial %d: nothing can run, plan %v, want the first allowed %d alone", trial, plan, allowed[0])
			}
			continue
		}
		bestPrefix := math.Inf(-1)
		for m := 1; m <= min(k, len(up)); m++ {
			bestPrefix = max(bestPrefix, planValue(up[:m], relevance, chance, lambda))
		}
		for j, i := range plan {
			if i != up[j] {
				t.Fatalf("trial %d: keep-order plan %v is not a prefix of the executable ranking %v", trial, plan, up)
			}
		}
		if got := planValue(plan, relevance, chance, lambda); math.Abs(got-bestPrefix) > 1e-9 {
			t.Fatalf("trial %d: keep-order plan %v worth %v, the best prefix %v", trial, plan, got, bestPrefix)
		}
	}
}

// checkPlan: a plan is non-empty, at most k long, of distinct allowed candidates.
func checkPlan(t *testing.T, trial int, kind string, plan []int, step *bandit.Step, k int) {
	t.Helper()
	seen := map[int]bool{}
	if len(plan) == 0 || len(plan) > k {
		t.Fatalf("trial %d, %s: plan %v for budget %d", trial, kind, plan, k)
	}
	for _, i := range plan {
		if seen[i] || !step.Allowed(i) {
			t.Fatalf("trial %d, %s: plan %v repeats or includes an excluded candidate (%v)", trial, kind, plan, step.Excluded)
		}
		seen[i] = true
	}
}

// TestSummarizeByHand: two seeds of one (scenario, policy) and three of another, their means,
// their 95% intervals by Student's t (t₀.₉₇₅ with 1 degree of freedom 12.7062, with 2 4.3027),
// the adaptation steps over the recovered runs only, and the seed-averaged curve point by point
// (the t quantiles and intervals as scipy.stats.t.ppf gives them).
func TestSummarizeByHand(t *testing.T) {
	g := GridSpec{Scenarios: []Scenario{{Name: "s", FailureRate: 0.2}}, Seeds: []uint64{1, 2}}
	rec := func(steps int) metrics.Adaptation { return metrics.Adaptation{Steps: steps, Recovered: true} }
	results := []RunResult{
		{Protocol: "execution", Scenario: "s", Policy: "a", Seed: 1, PostFailSR: 0.40, FSR: 0.02, PreFailSR: 0.5, AttemptsPerStep: 1, SRPerAttempt: 0.40, AS: rec(100), Curve: []float64{0.5, 0.3, 0.4}},
		{Protocol: "execution", Scenario: "s", Policy: "a", Seed: 2, PostFailSR: 0.44, FSR: 0.04, PreFailSR: 0.5, AttemptsPerStep: 1.1, SRPerAttempt: 0.40, AS: metrics.Adaptation{}, Curve: []float64{0.3, 0.1, 0.2}},
		{Protocol: "execution", Scenario: "s", Policy: "b", Seed: 1, PostFailSR: 0.30, FSR: 0.10, AS: rec(50), Curve: []float64{1, 1}},
		{Protocol: "execution", Scenario: "s", Policy: "b", Seed: 2, PostFailSR: 0.36, FSR: 0.10, AS: rec(150), Curve: []float64{0, 0.5}},
	}
	rows := Summarize(g, results)
	if len(rows) != 2 || rows[0].Method != "a" || rows[1].Method != "b" || rows[0].Seeds != 2 || rows[0].FailureRate != 0.2 {
		t.Fatalf("rows %+v", rows)
	}
	a, b := rows[0], rows[1]
	// a: SR mean 0.42, sd 0.0282843 (√((0.02² + 0.02²)/1)), CI 12.7062·0.0282843/√2 = 0.254124.
	near(t, "a SR mean", a.PostFailSR.Mean, 0.42)
	near(t, "a SR CI", a.PostFailSR.CI95, 12.706204736432095*0.02)
	near(t, "a FSR mean", a.FSR.Mean, 0.03)
	near(t, "a attempts mean", a.AttemptsPerStep.Mean, 1.05)
	// One run recovered (100 steps), one never did.
	if a.AS.FailedRuns != 1 || a.AS.Mean != 100 || a.AS.CI95 != 0 {
		t.Fatalf("a AS %+v, want mean 100 over the one recovered run, 1 failed", a.AS)
	}
	for i, want := range []float64{0.4, 0.2, 0.3} {
		near(t, "a curve", a.Curve[i], want)
	}
	// b: AS over both runs, mean 100, sd 70.7107, CI 12.7062·70.7107/√2 = 635.31.
	if b.AS.FailedRuns != 0 {
		t.Fatalf("b AS %+v", b.AS)
	}
	near(t, "b AS mean", b.AS.Mean, 100)
	near(t, "b AS CI", b.AS.CI95, 635.3102368216047)
	near(t, "b SR CI", b.PostFailSR.CI95, 12.706204736432095*0.03)
	for i, want := range []float64{0.5, 0.75} {
		near(t, "b curve", b.Curve[i], want)
	}
	// Three seeds: t with 2 degrees of freedom.
	g.Seeds = []uint64{1, 2, 3}
	three := Summarize(g, []RunResult{{Scenario: "s", Policy: "c", PostFailSR: 0.1}, {Scenario: "s", Policy: "c", PostFailSR: 0.2}, {Scenario: "s", Policy: "c", PostFailSR: 0.6}})
	// mean 0.3, sd √((0.04 + 0.01 + 0.09)/2) = 0.264575, CI 4.30265·0.264575/√3 = 0.657241.
	near(t, "three-seed SR mean", three[0].PostFailSR.Mean, 0.3)
	near(t, "three-seed SR CI", three[0].PostFailSR.CI95, 0.6572410607646979)
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Fatalf("%s = %.12g, want %.12g", what, got, want)
	}
}
