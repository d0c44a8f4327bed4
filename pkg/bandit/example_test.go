package bandit_test

import (
	"fmt"

	"github.com/rated-dev/rated/pkg/bandit"
)

// The recommended policy (configs/recommended.yaml) scores each candidate by its expected task
// success P(relevant)·r̂. Before any feedback r̂ = 1 (pool_init 1) and the kernel relevance
// model adds its exploration bonus α/√κ = 0.1/√0.5 ≈ 0.141 to each calibrated relevance, so
// tool 7 (0.8 + 0.141 = 0.941) beats tool 3 (0.6 + 0.141 = 0.741). Its failure masks it for
// mask_base = 100 steps, and the recovery model puts its chance of being up one step later at
// 1 − exp(−1/recovery_prior) = 1 − exp(−1/2000) ≈ 0.0005, so the policy falls back to tool 3.
// The failure also opened a fleet incident (incident_probe = 100): at step 99 tool 7 is still
// masked (1 − exp(−99/2000) ≈ 0.048); at step 100 a probe is due, and every down tool is
// estimated as before its outage, unmasked: tool 7 has no evidence but its failure, which belongs
// to the outage, so r̂ = (0 + 0.5·1)/(0 + 0 + 0.5) = 1 and it runs again (0.941 against 0.741). It
// executes: the incident resolves, and tool 7, its outage's failure forgiven, is back at
// r̂ = (1 + 0.5)/(1 + 0 + 0.5) = 1.
func ExampleNew() {
	spec, err := bandit.RecommendedSpec()
	if err != nil {
		panic(err)
	}
	p, err := bandit.New(spec, bandit.Env{NumTools: 10, Dim: 2})
	if err != nil {
		panic(err)
	}
	step := func(t int) *bandit.Step {
		return &bandit.Step{T: t, Context: []float64{1, 0}, Candidates: []bandit.Candidate{
			{Tool: 7, Sem: 0.82, Relevance: 0.8}, // Relevance: the calibrated P(relevant)
			{Tool: 3, Sem: 0.80, Relevance: 0.6},
		}}
	}
	s := step(0)
	pos := p.Choose(s)
	fmt.Println("step 0 runs tool", s.Candidates[pos].Tool)
	p.Observe(s, pos, bandit.Feedback{Executed: false}) // the call errored or timed out

	s = step(1)
	r := bandit.Rank(p, s)
	for _, i := range r.Order {
		pt := r.Parts[i]
		fmt.Printf("step 1: tool %d score %.3f relevance %.3f reliability %.3f masked %v\n",
			s.Candidates[i].Tool, pt.Score, pt.Relevance, pt.Reliability, pt.Masked)
	}
	for _, t := range []int{99, 100} {
		s = step(t)
		pos := p.Choose(s)
		r := bandit.Rank(p, s)
		fmt.Printf("step %d runs tool %d (tool 7: reliability %.3f, masked %v)\n",
			t, s.Candidates[pos].Tool, r.Parts[0].Reliability, r.Parts[0].Masked)
		p.Observe(s, pos, bandit.Feedback{Executed: true})
	}
	r = bandit.Rank(p, step(101))
	fmt.Printf("step 101: tool 7 reliability %.3f, masked %v\n", r.Parts[0].Reliability, r.Parts[0].Masked)
	// Output:
	// step 0 runs tool 7
	// step 1: tool 3 score 0.741 relevance 0.741 reliability 1.000 masked false
	// step 1: tool 7 score 0.000 relevance 0.941 reliability 0.000 masked true
	// step 99 runs tool 3 (tool 7: reliability 0.048, masked true)
	// step 100 runs tool 7 (tool 7: reliability 1.000, masked false)
	// step 101: tool 7 reliability 1.000, masked false
}

// When the runtime reports task outcomes, the recommended policy's reliability layer switches to
// its task_reliability settings (no reset on failure, no masks): the same failure as in
// ExampleNew leaves tool 7 unmasked. Its r̂ is still the recovery model's 1 − exp(−1/2000) ≈
// 0.0005 one step after the failure, so tool 3 runs next; but as steps pass without a mask, a
// tool the relevance model rates highly is tried again as soon as r̂·P(relevant) allows.
func ExampleNew_taskFeedback() {
	spec, err := bandit.RecommendedSpec()
	if err != nil {
		panic(err)
	}
	p, err := bandit.New(spec, bandit.Env{NumTools: 10, Dim: 2})
	if err != nil {
		panic(err)
	}
	s := &bandit.Step{T: 0, Context: []float64{1, 0}, Candidates: []bandit.Candidate{
		{Tool: 7, Sem: 0.82, Relevance: 0.8},
		{Tool: 3, Sem: 0.80, Relevance: 0.6},
	}}
	pos := p.Choose(s)
	p.Observe(s, pos, bandit.Feedback{Executed: false, TaskKnown: true, Task: false})
	fmt.Println("task mode:", p.(*bandit.Factored).TaskMode())
	s.T = 1
	r := bandit.Rank(p, s)
	for _, i := range r.Order {
		pt := r.Parts[i]
		fmt.Printf("step 1: tool %d reliability %.4f masked %v\n", s.Candidates[i].Tool, pt.Reliability, pt.Masked)
	}
	// Output:
	// task mode: true
	// step 1: tool 3 reliability 1.0000 masked false
	// step 1: tool 7 reliability 0.0005 masked false
}

// The paper's RATED: S_final = 0.75·S_sem + 0.15·S_bandit + 0.10·r_static, with a discounted
// LinUCB per tool over x̃ = [β·x; 1], β = √(λ(1−γ)) = √0.05. An untried tool's S_bandit is its
// prior plus the bonus α·√(x̃ᵀx̃/λ) = 0.5 + 0.1·√1.05 ≈ 0.602, so tool 7 scores
// 0.615 + 0.090 + 0.05 ≈ 0.755 against tool 3's 0.740. After its failure (y = 0), A = λ + x̃²
// = [1.05, 2] and b = γ·[0, λ·0.5] = [0, 0.475], so S_bandit = 0.475/2 + 0.1·√(0.05/1.05 + 1/2)
// ≈ 0.312 and tool 7's score falls to 0.615 + 0.047 + 0.05 ≈ 0.712, below tool 3.
func ExampleNew_paperRATED() {
	spec := bandit.Spec{Name: "RATED (Full)", Kind: "rated", Alpha: 0.1, Gamma: 0.95}
	env := bandit.Env{NumTools: 10, Dim: 1, Weights: bandit.FusionWeights{Semantic: 0.75, Bandit: 0.15, Prior: 0.10}}
	p, err := bandit.New(spec, env)
	if err != nil {
		panic(err)
	}
	s := &bandit.Step{Context: []float64{1}, Candidates: []bandit.Candidate{
		{Tool: 7, Sem: 0.82, Prior: 0.5},
		{Tool: 3, Sem: 0.80, Prior: 0.5},
	}}
	for t := range 2 {
		s.T = t
		r := bandit.Rank(p, s) // Parts[i].Reliability is S_bandit
		for _, i := range r.Order {
			fmt.Printf("step %d: tool %d score %.3f S_bandit %.3f\n", t, s.Candidates[i].Tool, r.Parts[i].Score, r.Parts[i].Reliability)
		}
		pos := p.Choose(s)
		p.Observe(s, pos, bandit.Feedback{Executed: t != 0}) // the first call fails
	}
	// Output:
	// step 0: tool 7 score 0.755 S_bandit 0.602
	// step 0: tool 3 score 0.740 S_bandit 0.602
	// step 1: tool 3 score 0.740 S_bandit 0.602
	// step 1: tool 7 score 0.712 S_bandit 0.312
}

// A calibrator with the hubness feature over a catalog of ten tools, each bank query counting
// its top candidate (depth 1, s̄ = 0.1): "mail.send" is the top candidate of 40 of the 50 bank
// queries, a hub, "crm.add_contact" of 2, eight others of 1 each. Bound to a catalog with
// ForTools, Apply gives the hub less relevance for the same score: its feature is
// log((40 + 100·0.1)/(50 + 100)) = log(1/3), the other's log(12/150), and the weight −0.5 puts
// them 0.71 logits apart: σ(−2 + 4·0.8 + 0.549) = 0.852 against σ(1.2 + 1.263) = 0.921.
// "ticket.open", which the bank never covered, gets the catalog's mean feature, −2.453 (the
// eight others are at log(11/150)): σ(1.2 + 1.226) = 0.919, a typical tool's.
func ExampleCalibrator_ForTools() {
	counts := map[string]int{"mail.send": 40, "crm.add_contact": 2}
	for i := range 8 {
		counts[fmt.Sprintf("tool%d", i)] = 1
	}
	cal := &bandit.Calibrator{Weights: [4]float64{-2, 4, 0, 0},
		Hub: &bandit.Hubness{Weight: -0.5, Depth: 1, Queries: 50, Strength: 100, MeanShare: 0.1, LikelihoodRatio: 30, Counts: counts}}
	if err := cal.Validate(); err != nil {
		panic(err)
	}
	bound := cal.ForTools([]string{"mail.send", "crm.add_contact", "ticket.open"})
	cands := []bandit.Candidate{{Tool: 0, Sem: 0.8}, {Tool: 1, Sem: 0.8}, {Tool: 2, Sem: 0.8}}
	bound.Apply(cands)
	for _, c := range cands {
		fmt.Printf("tool %d: %.3f\n", c.Tool, c.Relevance)
	}
	// Output:
	// tool 0: 0.852
	// tool 1: 0.921
	// tool 2: 0.919
}

// The order-keeping baselines given the calibrated relevance (order: calibrated): Retry walks
// the candidates by it, best first, instead of the retriever's ranking.
func ExampleNewStaticOrdered() {
	step := &bandit.Step{Candidates: []bandit.Candidate{{Tool: 4, Relevance: 0.3}, {Tool: 9, Relevance: 0.6}, {Tool: 2, Relevance: 0.5}},
		Excluded: []bool{false, false, false}}
	retry := bandit.NewStaticOrdered("Retry (k=3, calibrated order)", bandit.OrderCalibrated)
	for a := 0; a < 3; a++ {
		pos := retry.Choose(step)
		fmt.Println("attempt", a, "runs tool", step.Candidates[pos].Tool)
		step.Excluded[pos] = true
	}
	// Output:
	// attempt 0 runs tool 9
	// attempt 1 runs tool 2
	// attempt 2 runs tool 4
}

// The calibrated order puts the likelier-relevant candidate first and breaks a tie by the
// retriever's rank.
func ExampleCalibratedBefore() {
	s := &bandit.Step{Candidates: []bandit.Candidate{{Tool: 5, Relevance: 0.2}, {Tool: 6, Relevance: 0.7}, {Tool: 7, Relevance: 0.7}}}
	fmt.Println(bandit.CalibratedBefore(s, 1, 0), bandit.CalibratedBefore(s, 1, 2), bandit.CalibratedBefore(s, 2, 1))
	// Output: true true false
}
