package ope_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/viper"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/decisionlog"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/evaldynamic"
	"github.com/rated-dev/rated/pkg/ope"
)

// writeLog writes decision-log lines to a new file.
func writeLog(t *testing.T, recs ...any) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "decisions-000001.jsonl")
	var b strings.Builder
	for _, r := range recs {
		raw, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// handLog is four decisions over two candidates, logged by a policy that picks position 0 with
// probability 0.8 (0.5 in the last decision), with rewards 1, 0, 1, 1.
func handLog(t *testing.T) string {
	return twoToolLog(t, [][2]float64{{0.8, 0.2}, {0.8, 0.2}, {0.8, 0.2}, {0.5, 0.5}}, []int{0, 1, 0, 1}, []bool{true, false, true, true})
}

// twoToolLog is a log of len(chosen) decisions over tools a and b (positions 0 and 1), decision i
// choosing position chosen[i] with the propensities props[i] and executing as executed[i].
func twoToolLog(t *testing.T, props [][2]float64, chosen []int, executed []bool) string {
	var recs []any
	ctx := decisionlog.EncodeContext([]float64{1, 0})
	for i := range chosen {
		id := fmt.Sprintf("d%d", i)
		d := decisionlog.Decision{V: 1, Kind: decisionlog.KindDecision, ID: id, T: int64(i), Source: decisionlog.SourceSim, Policy: "logger",
			Explores: true, Context: ctx, ContextDim: 2, Chosen: []string{"a", "b"}[chosen[i]], ChosenPosition: chosen[i]}
		for j, tool := range []string{"a", "b"} {
			d.Candidates = append(d.Candidates, decisionlog.Candidate{Tool: tool, Semantic: 0.9 - 0.5*float64(j), Prior: 0.5, Propensity: props[i][j]})
		}
		recs = append(recs, d, decisionlog.Outcome{V: 1, Kind: decisionlog.KindOutcome, ID: id, T: int64(i), Tool: d.Chosen, Position: chosen[i], Chosen: true, Executed: executed[i]})
	}
	return writeLog(t, recs...)
}

// TestEstimatorsByHand: the static policy (always position 0) on handLog. Its importance weights
// are 1/0.8, 0, 1/0.8, 0, so IPS = (1.25 + 0 + 1.25 + 0) / 4 = 0.625 and SNIPS = 2.5 / 2.5 = 1;
// replay accepts the matching events with probability 0.2 / 0.8 (MinPropensity / propensity).
// The reward model with two folds (events 0, 2 and 1, 3): fold {1, 3} sees tool a never and tool
// b twice (rewards 0, 1), position 1 twice, global mean 0.5; fold {0, 2} sees tool a twice
// (rewards 1, 1) at position 0, global mean 1.
func TestEstimatorsByHand(t *testing.T) {
	l, err := ope.ReadLog([]string{handLog(t)}, ope.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Events) != 4 || l.MinPropensity != 0.2 || l.Exploring != 4 {
		t.Fatalf("log: %d events, min propensity %v, exploring %d", len(l.Events), l.MinPropensity, l.Exploring)
	}
	est, err := ope.Evaluate(l, bandit.Spec{Name: "static", Kind: "static"}, ope.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if !(math.Abs(got-want) <= 1e-12) { // a NaN fails too
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	near("IPS", est.IPS.Value, 0.625)
	near("SNIPS", est.SNIPS.Value, 1)
	near("logged", est.Logged.Value, 0.75)
	near("agreement", est.Agreement, 0.5)
	near("ESS", est.ESS, 2)
	// q̂ for events 0 and 2 (fitted on events 1, 3): tool a unseen, position 0 unseen → the
	// global mean 0.5; tool b: (1 + 2·m1)/(2 + 2) with m1 = (1 + 2·0.5)/(2 + 2) = 0.5 → 0.5.
	// For events 1 and 3 (fitted on 0, 2): tool a (2 + 2·m0)/(2 + 2), m0 = (2 + 2)/(2 + 2) = 1
	// → 1; tool b unseen at position 1 (no data there: the global mean 1) → 1.
	q := ope.RewardModel(l, 2)
	for i, want := range [][]float64{{0.5, 0.5}, {1, 1}, {0.5, 0.5}, {1, 1}} {
		for a := range want {
			near(fmt.Sprintf("q̂[%d][%d]", i, a), q[i][a], want[a])
		}
	}
	// DM = mean of q̂(position 0) = (0.5 + 1 + 0.5 + 1)/4; DR adds w·(r − q̂(logged)) where the
	// target agrees: events 0 and 2, 1.25·(1 − 0.5) each.
	near("DM", est.DM.Value, 0.75)
	near("DR", est.DR.Value, 0.75+(1.25*0.5*2)/4)
	if est.Unsupported != 0 {
		t.Errorf("%d unsupported", est.Unsupported)
	}
	// Replay by hand: the static target matches the log at events 0 and 2 (propensity 0.8);
	// each is kept when its draw u < MinPropensity/0.8 = 0.25, one draw per event from the
	// seed's stream (PCG(seed, "replay")), whether it matches or not; both rewards are 1.
	draws := rand.New(rand.NewPCG(1, 0x7265706c6179))
	var accepted []int
	for i := range 4 {
		if u := draws.Float64(); (i == 0 || i == 2) && u < 0.2/0.8 {
			accepted = append(accepted, i)
		}
	}
	if !slices.Equal(est.Rows.ReplayAccepted, accepted) || est.ReplayAccepted != len(accepted) {
		t.Errorf("replay accepted events %v, want %v", est.Rows.ReplayAccepted, accepted)
	}
	if len(accepted) > 0 {
		near("replay", est.Replay.Value, 1)
	} else if !math.IsNaN(est.Replay.Value) {
		t.Errorf("replay = %v with no event accepted, want no estimate", est.Replay.Value)
	}
}

// TestNoInformationIsNoEstimate: a deterministic log (position 1 always, propensity 1) and the
// static target (position 0): no weight anywhere, so IPS, SNIPS and replay have no estimate
// (IPS used to print 0.0000 [0.0000, 0.0000], as if known exactly); the estimates encode to JSON
// with nulls (NaN made `eval replay --out` fail after printing its table); a one-event log's
// means have no interval, not a zero-width one.
func TestNoInformationIsNoEstimate(t *testing.T) {
	var recs []any
	ctx := decisionlog.EncodeContext([]float64{1, 0})
	for i := range 3 {
		id := fmt.Sprintf("d%d", i)
		d := decisionlog.Decision{V: 1, Kind: decisionlog.KindDecision, ID: id, T: int64(i), Source: decisionlog.SourceSim, Policy: "fixed",
			Context: ctx, ContextDim: 2, Chosen: "b", ChosenPosition: 1,
			Candidates: []decisionlog.Candidate{{Tool: "a", Semantic: 0.9, Prior: 0.5}, {Tool: "b", Semantic: 0.4, Prior: 0.5, Propensity: 1}}}
		recs = append(recs, d, decisionlog.Outcome{V: 1, Kind: decisionlog.KindOutcome, ID: id, T: int64(i), Tool: "b", Position: 1, Chosen: true, Executed: i != 1})
	}
	path := writeLog(t, recs...)
	l, err := ope.ReadLog([]string{path}, ope.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	est, err := ope.Evaluate(l, bandit.Spec{Name: "static", Kind: "static"}, ope.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for name, iv := range map[string]ope.Interval{"IPS": est.IPS, "SNIPS": est.SNIPS, "replay": est.Replay} {
		if !math.IsNaN(iv.Value) || !math.IsNaN(iv.Low) || !math.IsNaN(iv.High) {
			t.Errorf("%s = %+v, want no estimate", name, iv)
		}
	}
	raw, err := json.Marshal(est)
	if err != nil {
		t.Fatalf("estimates do not encode: %v", err)
	}
	if !strings.Contains(string(raw), `"ips":{"value":null,"low":null,"high":null}`) {
		t.Errorf("IPS encodes as %s", raw)
	}
	if !strings.Contains(ope.Markdown(l, []string{path}, []*ope.Estimate{est}), "—") {
		t.Error("the table shows a value for IPS")
	}
	one, err := ope.ReadLog([]string{writeLog(t, recs[:2]...)}, ope.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	est, err = ope.Evaluate(one, bandit.Spec{Name: "static", Kind: "static"}, ope.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if est.Logged.Value != 1 || !math.IsNaN(est.Logged.Low) || !math.IsNaN(est.Logged.High) {
		t.Errorf("one event's logged value %+v, want 1 with no interval", est.Logged)
	}
}

// TestSNIPSNeedsTwoInformedEvents: the static target (position 0) agrees with the log at event
// 0 only, so SNIPS = 1.25·1 / 1.25 = 1, one event's reward; its linearised terms are all 0 and
// the delta method's interval would be [1, 1]. There is none. IPS has three terms, 1.25, 0, 0:
// mean 0.41667, s = 0.72169, t(0.975, 2) = 4.30265, half-width 4.30265·0.72169/√3 = 1.79277.
func TestSNIPSNeedsTwoInformedEvents(t *testing.T) {
	l, err := ope.ReadLog([]string{twoToolLog(t, [][2]float64{{0.8, 0.2}, {0.8, 0.2}, {0.8, 0.2}}, []int{0, 1, 1}, []bool{true, true, false})}, ope.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	est, err := ope.Evaluate(l, bandit.Spec{Name: "static", Kind: "static"}, ope.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if est.SNIPS.Value != 1 || !math.IsNaN(est.SNIPS.Low) || !math.IsNaN(est.SNIPS.High) {
		t.Errorf("SNIPS %+v, want 1 with no interval", est.SNIPS)
	}
	if !(math.Abs(est.IPS.Value-1.25/3) <= 1e-12) || !(math.Abs(est.IPS.High-est.IPS.Value-1.79277) <= 1e-5) {
		t.Errorf("IPS %+v, want 0.41667 ± 1.79277", est.IPS)
	}
}

func TestReadLogRefusesBadLogs(t *testing.T) {
	base := decisionlog.Decision{V: 1, Kind: decisionlog.KindDecision, ID: "x", Source: "sim", Policy: "p", Chosen: "a",
		Candidates: []decisionlog.Candidate{{Tool: "a", Propensity: 0.5}, {Tool: "b", Propensity: 0.3}}, Context: decisionlog.EncodeContext([]float64{1}), ContextDim: 1}
	out := decisionlog.Outcome{V: 1, Kind: decisionlog.KindOutcome, ID: "x", Tool: "a", Chosen: true, Executed: true}
	noCtx := base
	noCtx.Context, noCtx.ContextDim = "", 0
	for _, c := range []struct {
		recs []any
		want string
	}{
		{[]any{base, out}, "propensities sum to 0.8"},
		{[]any{noCtx, out}, "--decision-log-context"},
		{[]any{base}, "no first-attempt decision with an outcome"},
	} {
		if _, err := ope.ReadLog([]string{writeLog(t, c.recs...)}, ope.ReadOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	// Each used to pass silently: a second outcome replacing the first (executed, then not; or
	// served, then not); a NaN in a context vector;
	// two simulator runs merged into one log (a --log DIR without --prefix); a chosen position
	// outside the candidates of a record not read through Decode (an index panic).
	good := base
	good.Candidates = []decisionlog.Candidate{{Tool: "a", Propensity: 0.5}, {Tool: "b", Propensity: 0.5}}
	failed := out
	failed.Executed = false
	run1, run2 := good, good
	run1.Run = &decisionlog.Run{Protocol: "task", Scenario: "p20", Seed: 1}
	run2.ID, run2.Run = "y", &decisionlog.Run{Protocol: "task", Scenario: "p20", Seed: 2}
	out2 := out
	out2.ID = "y"
	outside := good
	outside.ChosenPosition = 5
	served, unserved := out, out
	yes, no := true, false
	served.Served, unserved.Served = &yes, &no
	nan := good
	nan.Context = decisionlog.EncodeContext([]float64{math.NaN()})
	for _, c := range []struct {
		recs []decisionlog.Record
		want string
	}{
		{[]decisionlog.Record{{Decision: &good}, {Outcome: &out}, {Outcome: &failed}}, "two outcomes of the chosen tool disagree"},
		// Two reports that differ only in the simulator's truth left the last one's reward.
		{[]decisionlog.Record{{Decision: &good}, {Outcome: &served, File: "a.jsonl", Line: 2}, {Outcome: &unserved, File: "b.jsonl", Line: 7}},
			"b.jsonl:7: decision x: two outcomes of the chosen tool disagree (executed true, task unreported, served true at a.jsonl:2; then executed true, task unreported, served false)"},
		{[]decisionlog.Record{{Decision: &nan, File: "c.jsonl", Line: 3}, {Outcome: &out}}, "c.jsonl:3: decision x: context[0] = NaN: not a finite number"},
		{[]decisionlog.Record{{Decision: &good, File: "c.jsonl", Line: 1}, {Decision: &good, File: "d.jsonl", Line: 4}}, "d.jsonl:4: decision x appears twice (first at c.jsonl:1)"},
		{[]decisionlog.Record{{Decision: &run1}, {Outcome: &out}, {Decision: &run2}, {Outcome: &out2}}, "run task/p20 seed 1"},
		{[]decisionlog.Record{{Decision: &outside}, {Outcome: &out}}, "chosen position 5 of 2 candidates"},
	} {
		if _, err := ope.FromRecords(c.recs, ope.ReadOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	if _, err := ope.FromRecords([]decisionlog.Record{{Decision: &good}, {Outcome: &out}, {Outcome: &out}}, ope.ReadOptions{}); err != nil {
		t.Errorf("a report sent twice: %v", err)
	}
}

// simConfig is a small failure scenario under the task protocol: the logging policy is the
// recommended policy's design wrapped in ε-greedy exploration; the targets are fixed policies
// (their choice does not depend on what they observed: static, prior-only, frozen calibrated
// relevance) and learning ones (the recommended design, RATED's LinUCB).
const simConfig = `
dynamic: {steps: %d, summary_from: 0, summary_to: %d, as_window: 100, seeds: [%s], split: test, curve_stride: 100, compare: []}
protocols: [{name: task, kind: task}]
scenarios:
  - {name: p30, failure_rate: 0.3, theta: 0.9, events: [{kind: persistent, start: 300, select: {by: frequency, skip_top: 0.05, fraction: 0.3}}, {kind: flaky, start: 200, success_prob: 0.7, select: {by: frequency, skip_top: 0.0, fraction: 0.2}}]}
policies:
  - {name: LOGGER, kind: factored, relevance: {model: kernel, alpha: 0.1}, reliability: {half_life: 1000, prior_strength: 1, pool_rate: 0.05, pool_init: 1, pool_evidence: 1, reset_on_failure: true, mask_base: 100}, fusion: {kind: expected}, explore: {kind: epsilon_greedy, epsilon: 0.5}}
  - {name: STATIC, kind: static}
  - {name: PRIOR, kind: prior_only}
  - {name: FROZEN, kind: factored, relevance: {model: calibrated}, fusion: {kind: expected}}
  - {name: RECOMMENDED, kind: factored, relevance: {model: kernel, alpha: 0.1}, reliability: {half_life: 1000, prior_strength: 1, pool_rate: 0.05, pool_init: 1, pool_evidence: 1, reset_on_failure: true, mask_base: 100}, fusion: {kind: expected}}
  - {name: RATED, kind: rated, alpha: 0.1, gamma: 0.95}
`

// simRuns runs the grid and returns its policies' specs and the decision-log directory.
func simRuns(t *testing.T, steps int, seeds []uint64) (map[string]bandit.Spec, string, *bench.Bench) {
	t.Helper()
	var ss []string
	for _, s := range seeds {
		ss = append(ss, fmt.Sprint(s))
	}
	path := filepath.Join(t.TempDir(), "cfg.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf(simConfig, steps, steps, strings.Join(ss, ", "))), 0o644)
	cfg, err := evaldynamic.LoadConfig(viper.New(), []string{path})
	if err != nil {
		t.Fatal(err)
	}
	b, err := defaultbench.Load()
	if err != nil {
		t.Fatal(err)
	}
	res, err := evaldynamic.LexicalResources(b, "default", cfg)
	if err != nil {
		t.Fatal(err)
	}
	logDir := t.TempDir()
	if _, err := evaldynamic.Run(context.Background(), cfg, res, evaldynamic.Options{OutDir: t.TempDir(), Workers: 2, DecisionLog: logDir, Now: time.Now}); err != nil {
		t.Fatal(err)
	}
	specs := map[string]bandit.Spec{}
	for _, p := range cfg.Policies {
		specs[p.Name] = p
	}
	return specs, logDir, b
}

func runLog(t *testing.T, dir, policy string, seed uint64, opts ope.ReadOptions) *ope.Log {
	t.Helper()
	files, err := decisionlog.Files(dir, fmt.Sprintf("task_p30_%s_seed%d", policy, seed))
	if err != nil || len(files) == 0 {
		t.Fatalf("no log of %s seed %d: %v", policy, seed, err)
	}
	l, err := ope.ReadLog(files, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// meanReward is a log's mean reward: the value its policy reached online.
func meanReward(l *ope.Log) float64 {
	sum := 0.0
	for _, ev := range l.Events {
		sum += ev.Reward
	}
	return sum / float64(len(l.Events))
}

// TestEstimatorsMatchOpenBanditPipeline evaluates fixed and learning targets on a simulator log
// of an exploring logger and checks every estimate against Open Bandit Pipeline's estimators on
// the same rows to 1e-9: IPS, SNIPS, DR and DM, replay (obp's ReplayMethod on the events
// replay accepted), and the 95% intervals against numpy/scipy on obp's per-round estimates
// (SNIPS: the delta method, in numpy); obp's bootstrap intervals must agree with ours loosely.
func TestEstimatorsMatchOpenBanditPipeline(t *testing.T) {
	python := testassets.Python(t)
	specs, dir, b := simRuns(t, 1500, []uint64{1})
	l := runLog(t, dir, "LOGGER", 1, ope.ReadOptions{Catalog: b.Tools})
	ests := map[string]*ope.Estimate{}
	in := map[string]any{}
	for _, name := range []string{"STATIC", "PRIOR", "FROZEN", "RECOMMENDED", "RATED", "LOGGER"} {
		est, err := ope.Evaluate(l, specs[name], ope.Options{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		ests[name] = est
		in[name] = est.Rows
	}
	dirIO := t.TempDir()
	inPath, outPath := filepath.Join(dirIO, "in.json"), filepath.Join(dirIO, "out.json")
	raw, _ := json.Marshal(map[string]any{"policies": in})
	os.WriteFile(inPath, raw, 0o644)
	if msg, err := exec.Command(python, filepath.Join("testdata", "obp_ref.py"), inPath, outPath).CombinedOutput(); err != nil {
		t.Fatalf("obp_ref.py: %v\n%s", err, msg)
	}
	var ref map[string]map[string]any
	testassets.ReadJSON(t, outPath, &ref)
	for name, est := range ests {
		r := ref[name]
		num := func(key string) float64 { return r[key].(float64) }
		triple := func(key string) [3]float64 {
			v := r[key].([]any)
			return [3]float64{v[0].(float64), v[1].(float64), v[2].(float64)}
		}
		check := func(what string, got, want float64) {
			t.Helper()
			if !(math.Abs(got-want) <= 1e-9) { // a NaN fails too
				t.Errorf("%s %s: rated %.15g, obp %.15g", name, what, got, want)
			}
		}
		check("IPS", est.IPS.Value, num("ips"))
		check("SNIPS", est.SNIPS.Value, num("snips"))
		check("DR", est.DR.Value, num("dr"))
		check("DM", est.DM.Value, num("dm"))
		check("replay", est.Replay.Value, num("replay"))
		var acc []int
		for _, v := range r["replay_accepted"].([]any) {
			acc = append(acc, int(v.(float64)))
		}
		if !slices.Equal(acc, est.Rows.ReplayAccepted) {
			t.Errorf("%s replay accepted %d events, the reference's rejection sampling %d", name, len(est.Rows.ReplayAccepted), len(acc))
		}
		for _, c := range []struct {
			key string
			iv  ope.Interval
		}{{"ips_rounds_interval", est.IPS}, {"dr_rounds_interval", est.DR}, {"replay_interval", est.Replay}, {"snips_delta_interval", est.SNIPS}} {
			want := triple(c.key)
			check(c.key+" low", c.iv.Low, want[1])
			check(c.key+" high", c.iv.High, want[2])
		}
		for _, c := range []struct {
			key string
			iv  ope.Interval
		}{{"ips_bootstrap", est.IPS}, {"dr_bootstrap", est.DR}} {
			boot := triple(c.key)
			if width := c.iv.High - c.iv.Low; math.Abs(boot[1]-c.iv.Low) > 0.25*width || math.Abs(boot[2]-c.iv.High) > 0.25*width {
				t.Errorf("%s %s: obp's bootstrap [%.4f, %.4f], ours [%.4f, %.4f]", name, c.key, boot[1], boot[2], c.iv.Low, c.iv.High)
			}
		}
		t.Logf("%-12s IPS %.4f [%.4f, %.4f]  SNIPS %.4f  DR %.4f  replay %.4f (%d accepted)  ESS %.0f of %d", name,
			est.IPS.Value, est.IPS.Low, est.IPS.High, est.SNIPS.Value, est.DR.Value, est.Replay.Value, est.ReplayAccepted, est.ESS, est.Events)
	}
}

// TestEstimatesBracketTheOnlineValue runs every target online in the same simulated worlds as
// the exploring logger and checks that the estimators' 95% intervals, computed on the logger's
// log alone, contain the value the target reached online (the mean reward of its own first
// choices). For the fixed targets IPS, SNIPS, DR and replay are unbiased for that value, so over
// the seeds at least 8 of 10 intervals of each must contain it (95% expected). The learning
// targets are reported, not checked: see docs/OPE.md for why they are not unbiased.
func TestEstimatesBracketTheOnlineValue(t *testing.T) {
	seeds := []uint64{11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	specs, dir, b := simRuns(t, 800, seeds)
	covered := map[string]int{}
	for _, seed := range seeds {
		l := runLog(t, dir, "LOGGER", seed, ope.ReadOptions{Catalog: b.Tools})
		for _, name := range []string{"STATIC", "PRIOR", "FROZEN", "RECOMMENDED", "RATED"} {
			online := meanReward(runLog(t, dir, name, seed, ope.ReadOptions{Catalog: b.Tools}))
			est, err := ope.Evaluate(l, specs[name], ope.Options{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			for est2, iv := range map[string]ope.Interval{"IPS": est.IPS, "SNIPS": est.SNIPS, "DR": est.DR, "replay": est.Replay} {
				if iv.Contains(online) {
					covered[name+" "+est2]++
				}
			}
			if seed == seeds[0] {
				t.Logf("seed %d %-12s online %.4f  IPS [%.4f, %.4f]  SNIPS [%.4f, %.4f]  DR [%.4f, %.4f]  replay [%.4f, %.4f] (%d)", seed, name, online,
					est.IPS.Low, est.IPS.High, est.SNIPS.Low, est.SNIPS.High, est.DR.Low, est.DR.High, est.Replay.Low, est.Replay.High, est.ReplayAccepted)
			}
		}
	}
	for _, name := range []string{"STATIC", "PRIOR", "FROZEN", "RECOMMENDED", "RATED"} {
		line := name + ":"
		for _, e := range []string{"IPS", "SNIPS", "DR", "replay"} {
			n := covered[name+" "+e]
			line += fmt.Sprintf(" %s %d/%d", e, n, len(seeds))
			if name != "RECOMMENDED" && name != "RATED" && n < 8 {
				t.Errorf("%s %s: the 95%% interval contained the online value for %d of %d seeds", name, e, n, len(seeds))
			}
		}
		t.Log(line)
	}
}

// TestEvaluateFolds: the reward model needs two folds or more; 0 is the default 2 (DM 0.75 on
// handLog, as in TestEstimatorsByHand), 1 and negative counts are refused, not turned into 2.
func TestEvaluateFolds(t *testing.T) {
	l, err := ope.ReadLog([]string{handLog(t)}, ope.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	static := bandit.Spec{Name: "static", Kind: "static"}
	for _, folds := range []int{1, -4} {
		if _, err := ope.Evaluate(l, static, ope.Options{Seed: 1, Folds: folds}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("folds %d: the doubly robust reward model needs at least 2", folds)) {
			t.Errorf("folds %d: error %v", folds, err)
		}
	}
	for _, folds := range []int{0, 2} {
		est, err := ope.Evaluate(l, static, ope.Options{Seed: 1, Folds: folds})
		if err != nil || !(math.Abs(est.DM.Value-0.75) <= 1e-12) {
			t.Errorf("folds %d: DM %v, error %v; want 0.75", folds, est, err)
		}
	}
}
