package evaldynamic_test

import (
	"fmt"

	"github.com/spf13/viper"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/evaldynamic"
	"github.com/rated-dev/rated/pkg/metrics"
	"github.com/rated-dev/rated/pkg/sim"
)

// The paper's protocol as configs/paper.yaml holds it (T = 10,000 steps, failures from step
// 2,000, Post-Fail SR over steps 2,001–5,000, a 200-step AS window), and the same protocol
// compressed to 1,000 steps by setting dynamic.steps alone (as --steps 1000 does): every
// step-valued key scales by 1,000/10,000, so the onset moves to 200, the window to [200, 500)
// and the AS window to 20, while K and the fusion weights are unchanged.
func ExampleLoadConfig() {
	show := func(cfg *evaldynamic.Config) {
		d := cfg.Dynamic
		fmt.Printf("T %d, onset %d, summary [%d, %d), AS window %d, K %d, fusion %.2f/%.2f/%.2f\n",
			d.Steps, cfg.Scenarios[0].Events[0].Start, d.SummaryFrom, d.SummaryTo, d.ASWindow,
			cfg.Retrieval.K, cfg.Fusion.Semantic, cfg.Fusion.Bandit, cfg.Fusion.Prior)
	}
	paper, err := evaldynamic.PaperConfig()
	if err != nil {
		panic(err)
	}
	show(paper)

	v := viper.New()
	v.Set("dynamic.steps", 1000)
	short, err := evaldynamic.LoadConfig(v, nil)
	if err != nil {
		panic(err)
	}
	show(short)
	// Output:
	// T 10000, onset 2000, summary [2000, 5000), AS window 200, K 10, fusion 0.75/0.15/0.10
	// T 1000, onset 200, summary [200, 500), AS window 20, K 10, fusion 0.75/0.15/0.10
}

// Two order-keeping fallback oracle rows (λ = 0: SR 50% at 1.5 attempts per step; λ = 0.1: 45% at
// 1.1) bound Retry, which spent 1.2 attempts for 44%: min(50 + 0·(1.2 − 1.5), 45 + 10·(1.2 − 1.1))
// = 46%, attained at λ = 0.1, so Retry stands 2 points below its bound.
func ExampleFallbackBounds() {
	cfg := &evaldynamic.Config{
		Protocols: []sim.Protocol{{Name: "execution", Kind: "execution"}},
		Scenarios: []sim.Scenario{{Name: "flaky-20"}},
		Policies: []bandit.Spec{
			{Name: "oracle λ=0", Kind: "oracle_fallback", Attempts: 3, KeepOrder: true},
			{Name: "oracle λ=0.1", Kind: "oracle_fallback", Attempts: 3, AttemptPrice: 0.1, KeepOrder: true},
			{Name: "Retry (k=3)", Kind: "retry", K: 3},
		},
	}
	row := func(method string, sr, attempts float64) sim.Row {
		return sim.Row{Protocol: "execution", Scenario: "flaky-20", Method: method,
			PostFailSR: metrics.Summary{Mean: sr}, AttemptsPerStep: metrics.Summary{Mean: attempts}}
	}
	rows := []sim.Row{row("oracle λ=0", 0.50, 1.5), row("oracle λ=0.1", 0.45, 1.1), row("Retry (k=3)", 0.44, 1.2)}
	for _, b := range evaldynamic.FallbackBounds(cfg, rows) {
		fmt.Printf("%s, %s: bound %.1f%% at λ = %g, SR − bound %+.1f points\n", b.Policy, b.Class, 100*b.Bound, b.Price, 100**b.Gap)
	}
	// Output:
	// Retry (k=3), order-keeping: bound 46.0% at λ = 0.1, SR − bound -2.0 points
}

// The goals of a run, checked from its rows: here one execution-feedback scenario where the
// policy is 0.3 point under the availability oracle (within the 0.5 allowed) and 0.8 point over
// the blacklist's FSR (within 1 point).
func ExampleGoals() {
	cfg := &evaldynamic.Config{
		Protocols: []sim.Protocol{{Name: "execution", Kind: sim.ProtocolExecution}},
		Scenarios: []sim.Scenario{{Name: "persistent-20", Events: []sim.Event{{Kind: sim.EventPersistent}}}},
		Policies:  []bandit.Spec{{Name: "Availability oracle", Kind: "oracle_availability"}, {Name: "Health Check Blacklist", Kind: "blacklist"}, {Name: "RATED-R", Kind: "factored"}},
		Goals:     evaldynamic.GoalsConfig{Policy: "RATED-R", SRWithin: 0.5, FSROver: 1, PValue: 0.01, Attempts: 1.15},
	}
	row := func(method string, sr, fsr float64) sim.Row {
		return sim.Row{Protocol: "execution", Scenario: "persistent-20", Method: method,
			PostFailSR: metrics.Summary{Mean: sr}, FSR: metrics.Summary{Mean: fsr}}
	}
	rows := []sim.Row{row("Availability oracle", 0.400, 0), row("Health Check Blacklist", 0.395, 0.010), row("RATED-R", 0.397, 0.018)}
	goals, err := evaldynamic.Goals(cfg, rows, nil)
	if err != nil {
		panic(err)
	}
	for _, g := range goals {
		if g.NotMeasured { // the run has no static policy to compare pre-failure SR with
			fmt.Printf("%s: %s\n", g.Goal, g.Note)
			continue
		}
		fmt.Printf("%s: %.2f, required %s, met %v\n", g.Goal, g.Measured, g.Required, g.Met)
	}
	// Output:
	// Post-Fail SR within 0.5 points of the availability oracle: 39.70, required ≥ 39.50, met true
	// FSR at most the blacklist's + 1 point: 1.80, required ≤ 2.00, met true
	// pre-failure SR at least static's − 0 points: not measured: the run has no static policy
}
