package evaldynamic

import (
	"fmt"
	"math"
	"slices"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/metrics"
	"github.com/rated-dev/rated/pkg/report"
	"github.com/rated-dev/rated/pkg/sim"
)

// GoalsConfig names the policy whose goals goals.{md,csv,json,tex} checks (issue 11's: against
// the availability oracle, the blacklist, the static ranking, every baseline and Retry) and
// the margins. The report is written when Policy is among the run's policies; the other roles
// are found by kind (oracle_availability, oracle_detect_once, blacklist, static, retry).
type GoalsConfig struct {
	// Policy is the policy the goals are about ("" for no report).
	Policy string `yaml:"policy" json:"policy"`
	// Fallback is its variant with an attempt budget, checked against Retry ("" for none).
	Fallback string `yaml:"fallback" json:"fallback"`
	// NotBaselines are further variants of the policy, left out of "every baseline" (oracles,
	// Policy and Fallback always are).
	NotBaselines []string `yaml:"not_baselines" json:"not_baselines"`
	// SRWithin: under execution feedback, Post-Fail SR at least the availability oracle's minus
	// this many points.
	SRWithin float64 `yaml:"sr_within" json:"sr_within"`
	// FSROver: under execution feedback, FSR at most the blacklist's plus this many points.
	FSROver float64 `yaml:"fsr_over" json:"fsr_over"`
	// PreFailWithin: under execution feedback, pre-failure SR at least static's minus this.
	PreFailWithin float64 `yaml:"pre_fail_within" json:"pre_fail_within"`
	// TaskMargin: under task feedback, Post-Fail SR above every baseline's by this many points,
	// each paired over seeds with p < PValue; under judged feedback, above every baseline's with
	// p < PValue.
	TaskMargin float64 `yaml:"task_margin" json:"task_margin"`
	PValue     float64 `yaml:"p_value" json:"p_value"`
	// Attempts: the fallback reaches Retry's Post-Fail SR at no more attempts per step than this.
	Attempts float64 `yaml:"attempts" json:"attempts"`
	// ReferenceOrder chooses the references among policies of the same kind: those walking the
	// candidates in this order (bandit.OrderRetriever, or bandit.OrderCalibrated: the baselines
	// and oracles given the calibrated relevance the policy fuses, so that no goal is met by
	// that estimate alone), else the first of the kind. "" is OrderRetriever.
	ReferenceOrder string `yaml:"reference_order" json:"reference_order"`
}

// Validate checks the margins. The names are not checked against the policies: a file that
// replaces the policies may drop any of them, and the goals of a role that is not in the run
// are left out of the report.
func (g GoalsConfig) Validate() error {
	for _, f := range []struct {
		key string
		v   float64
	}{{"sr_within", g.SRWithin}, {"fsr_over", g.FSROver}, {"pre_fail_within", g.PreFailWithin}, {"task_margin", g.TaskMargin}} {
		if f.v < 0 {
			return fmt.Errorf("goals.%s = %v: a margin in percentage points, ≥ 0", f.key, f.v)
		}
	}
	if o := g.ReferenceOrder; o != "" && o != bandit.OrderRetriever && o != bandit.OrderCalibrated {
		return fmt.Errorf("goals.reference_order = %q: must be %q or %q", o, bandit.OrderRetriever, bandit.OrderCalibrated)
	}
	if g.Policy == "" {
		return nil
	}
	if !(g.PValue > 0 && g.PValue < 1) {
		return fmt.Errorf("goals.p_value = %v: must be in (0, 1)", g.PValue)
	}
	if g.Attempts < 1 {
		return fmt.Errorf("goals.attempts = %v: an attempt budget is at least 1 attempt per step", g.Attempts)
	}
	return nil
}

// GoalRow is one goal checked on one protocol and scenario. Measured and Required are in
// percentage points (attempts per step for the fallback's budget).
type GoalRow struct {
	Protocol string  `json:"protocol"`
	Scenario string  `json:"scenario"`
	Goal     string  `json:"goal"`
	Measured float64 `json:"measured"`
	Required string  `json:"required"`
	Met      bool    `json:"met"`
	// NotMeasured: the run lacks the goal's reference (the policy it compares with), so the
	// goal is neither met nor missed (Measured is 0); Note names what is missing.
	NotMeasured bool `json:"not_measured,omitempty"`
	// Note gives what the verdict rests on (the reference row, the paired test, a bound row).
	Note string `json:"note,omitempty"`
}

// Goals checks cfg.Goals on the summarised rows and the per-seed results (for the paired
// tests); nil when the run lacks the goals' policy.
func Goals(cfg *Config, rows []sim.Row, results []sim.RunResult) ([]GoalRow, error) {
	g := cfg.Goals
	kindOf := map[string]string{}
	for _, p := range cfg.Policies {
		kindOf[p.Name] = p.Kind
	}
	if g.Policy == "" || kindOf[g.Policy] == "" {
		return nil, nil
	}
	order := func(o string) string {
		if o == "" {
			return bandit.OrderRetriever
		}
		return o
	}
	byKind := func(kind string) string {
		first := ""
		for _, p := range cfg.Policies {
			if p.Kind != kind {
				continue
			}
			if order(p.Order) == order(g.ReferenceOrder) {
				return p.Name
			}
			if first == "" {
				first = p.Name
			}
		}
		return first
	}
	avail, once, blacklist, static, retry := byKind("oracle_availability"), byKind("oracle_detect_once"), byKind("blacklist"), byKind("static"), byKind("retry")
	var baselines []string
	for _, p := range cfg.Policies {
		if !bandit.IsOracle(p.Kind) && p.Name != g.Policy && p.Name != g.Fallback && !slices.Contains(g.NotBaselines, p.Name) {
			baselines = append(baselines, p.Name)
		}
	}
	type key struct{ proto, sc, pol string }
	row := map[key]sim.Row{}
	for _, r := range rows {
		row[key{r.Protocol, r.Scenario, r.Method}] = r
	}
	runs := map[key][]sim.RunResult{}
	for _, r := range results {
		k := key{r.Protocol, r.Scenario, r.Policy}
		runs[k] = append(runs[k], r)
	}
	pts := func(x float64) float64 { return 100 * x }
	var out []GoalRow
	for _, proto := range cfg.Protocols {
		for _, sc := range cfg.Scenarios {
			get := func(name string) (sim.Row, bool) {
				r, ok := row[key{proto.Name, sc.Name, name}]
				return r, ok && name != ""
			}
			add := func(goal string, measured float64, required string, met bool, note string) {
				out = append(out, GoalRow{Protocol: proto.Name, Scenario: sc.Name, Goal: goal, Measured: measured, Required: required, Met: met, Note: note})
			}
			// lacking names a goal whose reference the run does not have: shown, not counted.
			lacking := func(goal, kind string) {
				out = append(out, GoalRow{Protocol: proto.Name, Scenario: sc.Name, Goal: goal, Required: "—",
					NotMeasured: true, Note: fmt.Sprintf("not measured: the run has no %s policy", kind)})
			}
			me, ok := get(g.Policy)
			if !ok {
				continue
			}
			sr, fsr := pts(me.PostFailSR.Mean), pts(me.FSR.Mean)
			switch proto.Kind {
			case sim.ProtocolExecution:
				if a, ok := get(avail); ok {
					need := pts(a.PostFailSR.Mean) - g.SRWithin
					note := fmt.Sprintf("%s %.2f", avail, pts(a.PostFailSR.Mean))
					if o, ok := get(once); ok {
						note += fmt.Sprintf("; %s %.2f", once, pts(o.PostFailSR.Mean))
					}
					add("Post-Fail SR within "+fmtPoints(g.SRWithin)+" of the availability oracle", sr, fmt.Sprintf("≥ %.2f", need), sr >= need-tieTolerance, note)
				} else {
					lacking("Post-Fail SR within "+fmtPoints(g.SRWithin)+" of the availability oracle", "oracle_availability")
				}
				if b, ok := get(blacklist); ok {
					need := pts(b.FSR.Mean) + g.FSROver
					add("FSR at most the blacklist's + "+fmtPoints(g.FSROver), fsr, fmt.Sprintf("≤ %.2f", need), fsr <= need+tieTolerance, fmt.Sprintf("%s %.2f", blacklist, pts(b.FSR.Mean)))
					if hasProviderEvent(sc) {
						add("FSR below the blacklist's (provider outages)", fsr, fmt.Sprintf("< %.2f", pts(b.FSR.Mean)), fsr < pts(b.FSR.Mean), "")
					}
				} else {
					lacking("FSR at most the blacklist's + "+fmtPoints(g.FSROver), "blacklist")
					if hasProviderEvent(sc) {
						lacking("FSR below the blacklist's (provider outages)", "blacklist")
					}
				}
				if s, ok := get(static); ok {
					pre, need := pts(me.PreFailSR.Mean), pts(s.PreFailSR.Mean)-g.PreFailWithin
					add("pre-failure SR at least static's − "+fmtPoints(g.PreFailWithin), pre, fmt.Sprintf("≥ %.2f", need), pre >= need-tieTolerance, fmt.Sprintf("%s %.2f", static, pts(s.PreFailSR.Mean)))
				} else {
					lacking("pre-failure SR at least static's − "+fmtPoints(g.PreFailWithin), "static")
				}
				if hasEventKind(sc, sim.EventTransient) {
					add("finite adaptation steps (transient outages)", me.AS.Mean, "every run adapts", me.AS.FailedRuns == 0,
						fmt.Sprintf("%d of %d runs never adapted", me.AS.FailedRuns, me.Seeds))
				}
			case sim.ProtocolTask, sim.ProtocolJudged:
				margin, goal := g.TaskMargin, fmt.Sprintf("Post-Fail SR above every baseline's by ≥ %s, paired p < %g", fmtPoints(g.TaskMargin), g.PValue)
				if proto.Kind == sim.ProtocolJudged {
					margin, goal = 0, fmt.Sprintf("Post-Fail SR above every baseline's, paired p < %g", g.PValue)
				}
				least, worstP, closest, compared := math.Inf(1), 0.0, "", 0
				for _, b := range baselines {
					theirs, ok := runs[key{proto.Name, sc.Name, b}]
					if !ok {
						continue
					}
					compared++
					mine := runs[key{proto.Name, sc.Name, g.Policy}]
					x, y, err := pairBySeed(mine, theirs, srOf)
					if err != nil {
						return nil, fmt.Errorf("goals: %s vs %s (%s, %s): %w", g.Policy, b, proto.Name, sc.Name, err)
					}
					d := metrics.MeanCI95(diff(x, y)).Mean
					test, err := metrics.PairedTTest(x, y)
					if err != nil {
						return nil, fmt.Errorf("goals: %s vs %s (%s, %s): %w", g.Policy, b, proto.Name, sc.Name, err)
					}
					p := test.P
					if math.IsNaN(p) {
						p = 1 // every seed equal: no evidence either way
					}
					if pts(d) < least {
						least, closest = pts(d), b
					}
					worstP = max(worstP, p)
				}
				if closest != "" {
					required, met := fmt.Sprintf("≥ %s over each", fmtPoints(margin)), least >= margin-tieTolerance
					if proto.Kind == sim.ProtocolJudged {
						required, met = "> 0 over each", least > 0
					}
					add(goal, least, required, met && worstP < g.PValue,
						fmt.Sprintf("smallest margin over %s; largest p %.2g over the %d baselines", closest, worstP, compared))
				} else {
					lacking(goal, "baseline")
				}
			}
			// Retry's SR within the attempt budget, by the fallback or, where one attempt already
			// reaches it (task feedback), by the policy itself.
			retryName := retry
			if retryName == "" {
				retryName = "Retry"
			}
			fallbackGoal := fmt.Sprintf("%s's SR at ≤ %g attempts/step (with fallback)", retryName, g.Attempts)
			if f, ok := get(g.Fallback); ok {
				if r, ok := get(retry); !ok {
					lacking(fallbackGoal, "retry")
				} else {
					rsr := pts(r.PostFailSR.Mean)
					reaches := func(x sim.Row) bool {
						return pts(x.PostFailSR.Mean) >= rsr-tieTolerance && x.AttemptsPerStep.Mean <= g.Attempts+tieTolerance
					}
					best, by := f, g.Fallback
					if !reaches(f) && reaches(me) {
						best, by = me, g.Policy
					}
					note := fmt.Sprintf("%s %.2f at %.3f attempts/step", g.Fallback, pts(f.PostFailSR.Mean), f.AttemptsPerStep.Mean)
					if by == g.Policy {
						note = fmt.Sprintf("%s at %.3f attempts/step; ", g.Policy, me.AttemptsPerStep.Mean) + note
					}
					add(fallbackGoal, pts(best.PostFailSR.Mean),
						fmt.Sprintf("≥ %.2f at ≤ %g attempts", rsr, g.Attempts), reaches(best), note+fmt.Sprintf("; %s at %.3f", retry, r.AttemptsPerStep.Mean))
				}
			}
		}
	}
	return out, nil
}

// notMeasuredNote is the goals count's addendum for n goals without their reference.
func notMeasuredNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d more not measured: the run lacks their reference policy)", n)
}

// tieTolerance (percentage points, or attempts per step) lets a measure that equals its
// requirement meet it: a policy exactly 0.5 point under the oracle, computed as 100·(a − b)
// over seeds, lands a rounding error either side of 0.5 (about a quarter of such ties failed).
const tieTolerance = 1e-9

func fmtPoints(x float64) string {
	if x == 1 {
		return "1 point"
	}
	return fmt.Sprintf("%g points", x)
}

func hasEventKind(sc sim.Scenario, kind string) bool {
	return slices.ContainsFunc(sc.Events, func(e sim.Event) bool { return e.Kind == kind })
}

func hasProviderEvent(sc sim.Scenario) bool {
	return slices.ContainsFunc(sc.Events, func(e sim.Event) bool { return e.Select.Unit == sim.UnitProvider && e.Kind != sim.EventNewTools })
}

// GoalsTable lays the goals out, one row per goal, protocol and scenario, with a count of those
// met in the notes.
func GoalsTable(goals []GoalRow, policy string) *report.Table {
	t := &report.Table{Title: "Goals of " + policy,
		Columns: []string{"Feedback", "Scenario", "Goal", "Measured", "Required", "Met", "Reference"}}
	met, measuredGoals := 0, 0
	for _, r := range goals {
		verdict := "no"
		switch {
		case r.NotMeasured:
			verdict = "not measured"
		case r.Met:
			verdict, met = "yes", met+1
		}
		if !r.NotMeasured {
			measuredGoals++
		}
		measured := fmt.Sprintf("%.2f", r.Measured)
		switch {
		case r.NotMeasured:
			measured = "—"
		case r.Goal == "finite adaptation steps (transient outages)":
			measured = fmt.Sprintf("%.0f steps", r.Measured)
		}
		t.Rows = append(t.Rows, []string{r.Protocol, r.Scenario, r.Goal, measured, r.Required, verdict, r.Note})
	}
	t.Notes = []string{
		fmt.Sprintf("%d of %d goals met%s. Post-Fail SR, FSR and pre-failure SR in percent, means over the run's seeds; margins in percentage points; p from the paired t-test over seeds (two-sided; NaN, when every seed ties, counts as 1).", met, measuredGoals, notMeasuredNote(len(goals)-measuredGoals)),
		"A goal not met is not by itself a defect of the policy: where an oracle that a causal policy cannot pass is itself short of the requirement, the goal is out of reach (docs/RESULTS.md, \"Goals of issue 11, measured\").",
	}
	return t
}
