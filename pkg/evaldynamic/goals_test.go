package evaldynamic

import (
	"math"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/metrics"
	"github.com/rated-dev/rated/pkg/sim"
)

// TestGoalsByHand checks every goal on rows and per-seed results written by hand, against
// verdicts worked out by hand; the paired p-values are scipy's (stats.ttest_rel): 0.0533 for
// task SRs [.50 .52 .51] vs [.46 .47 .49], 0.2254 for judged [.30 .31 .33] vs [.30 .305 .32].
func TestGoalsByHand(t *testing.T) {
	cfg := &Config{
		Protocols: []sim.Protocol{{Name: "exec", Kind: sim.ProtocolExecution}, {Name: "task", Kind: sim.ProtocolTask}, {Name: "judged", Kind: sim.ProtocolJudged}},
		Scenarios: []sim.Scenario{
			{Name: "t", Events: []sim.Event{{Kind: sim.EventTransient}}},
			{Name: "p", Events: []sim.Event{{Kind: sim.EventPersistent, Select: sim.Selector{Unit: sim.UnitProvider}}}},
		},
		Policies: []bandit.Spec{{Name: "A", Kind: "oracle_availability"}, {Name: "O", Kind: "oracle_detect_once"}, {Name: "S", Kind: "static"},
			{Name: "B", Kind: "blacklist"}, {Name: "R", Kind: "retry", K: 3}, {Name: "X", Kind: "linucb"}, {Name: "Y", Kind: "sw_ucb"},
			{Name: "V", Kind: "factored"}, {Name: "P", Kind: "factored"}, {Name: "F", Kind: "factored"}},
		Goals: GoalsConfig{Policy: "P", Fallback: "F", NotBaselines: []string{"V"}, SRWithin: 0.5, FSROver: 1, PreFailWithin: 0.5, TaskMargin: 3, PValue: 0.01, Attempts: 1.15},
	}
	sum := func(x float64) metrics.Summary { return metrics.Summary{Mean: x, N: 3} }
	row := func(proto, sc, m string, sr, fsr, pre, att float64, failed int) sim.Row {
		return sim.Row{Protocol: proto, Scenario: sc, Method: m, PostFailSR: sum(sr), FSR: sum(fsr), PreFailSR: sum(pre),
			AttemptsPerStep: sum(att), AS: sim.ASSummary{Mean: 700, FailedRuns: failed}, Seeds: 3}
	}
	rows := []sim.Row{
		row("exec", "t", "A", 0.40, 0, 0.45, 1, 0), row("exec", "t", "O", 0.398, 0.01, 0.45, 1, 0),
		row("exec", "t", "S", 0.35, 0.10, 0.45, 1, 0), row("exec", "t", "B", 0.36, 0.02, 0.45, 1, 0),
		row("exec", "t", "R", 0.405, 0.15, 0.45, 1.2, 0),
		row("exec", "t", "P", 0.396, 0.031, 0.446, 1, 1), row("exec", "t", "F", 0.41, 0.03, 0.446, 1.2, 0),
		row("exec", "p", "A", 0.30, 0, 0.45, 1, 0), row("exec", "p", "S", 0.28, 0.2, 0.45, 1, 0),
		row("exec", "p", "B", 0.29, 0.02, 0.45, 1, 0), row("exec", "p", "P", 0.30, 0.015, 0.45, 1, 0),
		row("task", "t", "P", 0.51, 0.01, 0.45, 1, 0), row("judged", "t", "P", 0.3133, 0.01, 0.45, 1, 0),
	}
	var results []sim.RunResult
	runs := func(proto, pol string, srs ...float64) {
		for i, x := range srs {
			results = append(results, sim.RunResult{Protocol: proto, Scenario: "t", Policy: pol, Seed: uint64(i + 1), PostFailSR: x})
		}
	}
	runs("task", "P", 0.50, 0.52, 0.51)
	runs("task", "X", 0.46, 0.47, 0.49)
	runs("task", "Y", 0.44, 0.45, 0.47)
	runs("task", "V", 0.60, 0.60, 0.60) // a variant of the policy: not a baseline
	runs("judged", "P", 0.30, 0.31, 0.33)
	runs("judged", "X", 0.30, 0.305, 0.32)
	got, err := Goals(cfg, rows, results)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		proto, sc, goal string
		measured        float64
		required        string
		met             bool
	}{
		{"exec", "t", "within 0.5 points of the availability oracle", 39.6, "≥ 39.50", true},
		{"exec", "t", "FSR at most the blacklist's + 1 point", 3.1, "≤ 3.00", false},
		{"exec", "t", "pre-failure SR", 44.6, "≥ 44.50", true},
		{"exec", "t", "finite adaptation steps", 700, "every run adapts", false},
		// The fallback passes Retry's SR (41.0 ≥ 40.5) but at 1.2 attempts; the policy at 1
		// attempt is under it (39.6).
		{"exec", "t", "R's SR at ≤ 1.15 attempts/step (with fallback)", 41.0, "≥ 40.50 at ≤ 1.15 attempts", false},
		{"exec", "p", "within 0.5 points", 30.0, "≥ 29.50", true},
		{"exec", "p", "FSR at most", 1.5, "≤ 3.00", true},
		{"exec", "p", "FSR below the blacklist's", 1.5, "< 2.00", true},
		{"exec", "p", "pre-failure SR", 45, "≥ 44.50", true},
		// Margins 3.67 (X) and 5.67 (Y) points, both ≥ 3, but p = 0.053 over X.
		{"task", "t", "by ≥ 3 points", 11.0 / 3, "≥ 3 points over each", false},
		{"judged", "t", "above every baseline's", 0.5, "> 0 over each", false},
	}
	if len(got) != len(want) {
		for _, g := range got {
			t.Logf("%+v", g)
		}
		t.Fatalf("%d goals, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Protocol != w.proto || g.Scenario != w.sc || !strings.Contains(g.Goal, w.goal) || math.Abs(g.Measured-w.measured) > 1e-9 ||
			g.Required != w.required || g.Met != w.met {
			t.Errorf("goal %d: %+v\nwant %+v", i, g, w)
		}
	}
	if n := got[9].Note; !strings.Contains(n, "over X") || !strings.Contains(n, "largest p 0.053") || !strings.Contains(n, "2 baselines") {
		t.Errorf("task note %q: want the closest baseline X, p 0.053, and 2 baselines compared (X, Y: V is a variant, the others have no runs)", n)
	}

	// With one attempt already above Retry, the policy itself meets the fallback goal.
	rows = append(rows, row("task", "t", "F", 0.60, 0.02, 0.45, 1.3, 0), row("task", "t", "R", 0.405, 0.15, 0.45, 1.2, 0))
	got, err = Goals(cfg, rows, results)
	if err != nil {
		t.Fatal(err)
	}
	last := got[len(got)-2] // the task scenario's fallback goal comes after its margin goal
	if !strings.Contains(last.Goal, "(with fallback)") || !last.Met || math.Abs(last.Measured-51) > 1e-9 || !strings.HasPrefix(last.Note, "P at 1.000") {
		t.Errorf("task fallback goal: %+v, want met by P at 51.00", last)
	}

	// With references in the calibrated order (reference_order: calibrated), the goals compare
	// with those: A2 at 0.42 makes P's 39.6 short of 41.5, B2's FSR 0.025 lets its 3.1 pass
	// (≤ 3.5), S2's pre-failure 0.47 asks 46.5; the retriever-order rows are ignored.
	cfg.Policies = append(cfg.Policies, bandit.Spec{Name: "A2", Kind: "oracle_availability", Order: bandit.OrderCalibrated},
		bandit.Spec{Name: "S2", Kind: "static", Order: bandit.OrderCalibrated}, bandit.Spec{Name: "B2", Kind: "blacklist", Order: bandit.OrderCalibrated})
	rows = append(rows, row("exec", "t", "A2", 0.42, 0, 0.47, 1, 0), row("exec", "t", "S2", 0.36, 0.10, 0.47, 1, 0),
		row("exec", "t", "B2", 0.37, 0.025, 0.47, 1, 0))
	cfg.Goals.ReferenceOrder = bandit.OrderCalibrated
	got, err = Goals(cfg, rows, results)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []struct {
		required string
		met      bool
		ref      string
	}{{"≥ 41.50", false, "A2 42.00"}, {"≤ 3.50", true, "B2 2.50"}, {"≥ 46.50", false, "S2 47.00"}} {
		if g := got[i]; g.Required != w.required || g.Met != w.met || !strings.Contains(g.Note, w.ref) {
			t.Errorf("calibrated references, goal %d: %+v, want %s (met %v) against %s", i, g, w.required, w.met, w.ref)
		}
	}
	cfg.Goals.ReferenceOrder = ""
	if got, _ = Goals(cfg, rows, results); got[0].Required != "≥ 39.50" {
		t.Errorf("retriever-order references: %+v, want A's 40.0 − 0.5", got[0])
	}

	// No report without the policy.
	cfg.Goals.Policy = "nobody"
	if got, _ := Goals(cfg, rows, results); got != nil {
		t.Errorf("goals for a policy not in the run: %v", got)
	}
}

// TestGoalsConfigValidate refuses negative margins, a p-value outside (0, 1) and a budget under
// one attempt.
func TestGoalsConfigValidate(t *testing.T) {
	ok := GoalsConfig{Policy: "P", Fallback: "F", SRWithin: 0.5, FSROver: 1, PreFailWithin: 0.5, TaskMargin: 3, PValue: 0.01, Attempts: 1.15}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*GoalsConfig)
		want string
	}{
		{func(g *GoalsConfig) { g.SRWithin = -1 }, "goals.sr_within"},
		{func(g *GoalsConfig) { g.TaskMargin = -0.1 }, "goals.task_margin"},
		{func(g *GoalsConfig) { g.PValue = 1 }, "goals.p_value"},
		{func(g *GoalsConfig) { g.Attempts = 0.9 }, "goals.attempts"},
		{func(g *GoalsConfig) { g.ReferenceOrder = "semantic" }, "goals.reference_order"},
	} {
		g := ok
		c.edit(&g)
		if err := g.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", g, err, c.want)
		}
	}
}

// TestGoalsTiesReferencesAndSeeds: a measure exactly at its requirement meets it (0.0954 is
// 0.5 point under 0.1004, and 0.0205 1 point over 0.0105, though 100·x rounds either side);
// a goal whose reference policy is not in the run is shown as not measured and left out of the
// count; per-seed runs are paired by seed, not by position, and runs of other seeds are an
// error, not a panic.
func TestGoalsTiesReferencesAndSeeds(t *testing.T) {
	cfg := &Config{
		Protocols: []sim.Protocol{{Name: "exec", Kind: sim.ProtocolExecution}, {Name: "task", Kind: sim.ProtocolTask}},
		Scenarios: []sim.Scenario{{Name: "s", Events: []sim.Event{{Kind: sim.EventPersistent}}}},
		Policies:  []bandit.Spec{{Name: "A", Kind: "oracle_availability"}, {Name: "B", Kind: "blacklist"}, {Name: "X", Kind: "linucb"}, {Name: "P", Kind: "factored"}},
		Goals:     GoalsConfig{Policy: "P", SRWithin: 0.5, FSROver: 1, PreFailWithin: 0.5, TaskMargin: 3, PValue: 0.01, Attempts: 1.15},
	}
	sum := func(x float64) metrics.Summary { return metrics.Summary{Mean: x, N: 3} }
	row := func(proto, m string, sr, fsr float64) sim.Row {
		return sim.Row{Protocol: proto, Scenario: "s", Method: m, PostFailSR: sum(sr), FSR: sum(fsr), PreFailSR: sum(0.4), AttemptsPerStep: sum(1), Seeds: 3}
	}
	rows := []sim.Row{row("exec", "A", 0.1004, 0), row("exec", "B", 0.2, 0.0105), row("exec", "P", 0.0954, 0.0205), row("task", "P", 0.5, 0)}
	var results []sim.RunResult
	runs := func(pol string, seeds []uint64, srs ...float64) {
		for i, x := range srs {
			results = append(results, sim.RunResult{Protocol: "task", Scenario: "s", Policy: pol, Seed: seeds[i], PostFailSR: x})
		}
	}
	runs("P", []uint64{1, 2, 3}, 0.50, 0.52, 0.55)
	runs("X", []uint64{3, 1, 2}, 0.44, 0.40, 0.43) // seed order 3, 1, 2: by seed, 0.40, 0.43, 0.44
	got, err := Goals(cfg, rows, results)
	if err != nil {
		t.Fatal(err)
	}
	byGoal := map[string]GoalRow{}
	for _, g := range got {
		byGoal[g.Protocol+" "+g.Goal] = g
	}
	if g := byGoal["exec Post-Fail SR within 0.5 points of the availability oracle"]; !g.Met {
		t.Errorf("SR exactly 0.5 point under the oracle: %+v, want met", g)
	}
	if g := byGoal["exec FSR at most the blacklist's + 1 point"]; !g.Met {
		t.Errorf("FSR exactly 1 point over the blacklist's: %+v, want met", g)
	}
	if g := byGoal["exec pre-failure SR at least static's − 0.5 points"]; !g.NotMeasured || g.Met || !strings.Contains(g.Note, "no static policy") {
		t.Errorf("pre-failure goal without a static policy: %+v, want not measured", g)
	}
	// Paired by seed: differences 0.10, 0.09, 0.11 (mean 10 points, sd 0.01, t = 17.32 on 2
	// degrees of freedom, p = 1 − t/√(t² + 2) = 0.0033); by position they would be 0.06,
	// 0.12, 0.12 (p = 0.063).
	g := byGoal["task Post-Fail SR above every baseline's by ≥ 3 points, paired p < 0.01"]
	if !g.Met || !(math.Abs(g.Measured-10) <= 1e-9) || !strings.Contains(g.Note, "largest p 0.0033") {
		t.Errorf("task goal: %+v, want met, margin 10 points, p 0.0033 (paired by seed)", g)
	}
	table := GoalsTable(got, "P")
	if !strings.Contains(table.Notes[0], "3 of 3 goals met (1 more not measured") {
		t.Errorf("goals count: %q", table.Notes[0])
	}
	// A seed of one policy missing from the other: an error naming it.
	results[len(results)-1].Seed = 9
	if _, err := Goals(cfg, rows, results); err == nil || !strings.Contains(err.Error(), "has no single run to pair with") {
		t.Errorf("unpaired seeds: %v", err)
	}
	results = results[:len(results)-1]
	if _, err := Goals(cfg, rows, results); err == nil || !strings.Contains(err.Error(), "3 runs against 2") {
		t.Errorf("unequal runs: %v", err)
	}
}
