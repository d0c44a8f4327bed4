package evaldynamic

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/spf13/viper"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/sim"
)

// TestImpossibleValuesAreRefusedBeforeWork (issue 16): values that used to run the whole job (and
// then fail in JSON encoding) or to run with a silently wrong meaning are refused by LoadConfig,
// naming the key.
func TestImpossibleValuesAreRefusedBeforeWork(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"policies:\n  - {name: x, kind: rated, alpha: .inf, gamma: 0.9}\n", "policies[0].alpha"},
		{"dynamic:\n  bound_attempts: [0.5]\n", "dynamic.bound_attempts[0]"},
		{"dynamic:\n  bound_attempts: [1.15]\n", "dynamic.bound_attempts: the bounds come from oracle_fallback"},
		{"policies:\n  - {name: x, kind: global_mab, alpha: .nan}\n", "policies[0].alpha"},
		{"policies:\n  - {name: x, kind: batch_grpo, temperature: .inf}\n", "policies[0].temperature"},
		{"prior:\n  source_weights: {official: 1.0, langchain: -0.5, other: 0.6}\n", "prior.source_weights.langchain"},
		{"prior:\n  source_weights: {official: 1.0, langchain: 1.5, other: 0.6}\n", "prior.source_weights.langchain"},
		{"prior:\n  source_weights: {official: .nan, other: 0.6}\n", "prior.source_weights.official"},
		// A repeated seed repeats the same run and used to count as an independent repetition.
		{"dynamic:\n  seeds: [1, 1]\n", "dynamic.seeds: seed 1 listed twice"},
		{"dynamic:\n  seeds: [3, 1, 2, 3]\n", "dynamic.seeds: seed 3 listed twice"},
		{"retrieval:\n  tau: -1\n", "retrieval.tau"},
		{"retrieval:\n  tau: 0\n", "retrieval.tau"},
		{"fusion:\n  semantic: .inf\n", "fusion.semantic"},
		{"scenarios:\n  - {name: s, failure_rate: 0.2, theta: .nan, events: [{kind: persistent, start: 2000, select: {by: frequency, fraction: 0.2}}]}\n", "scenarios[0].theta"},
		{"dynamic:\n  compare: [\"Static top-1\", \"RATED (Full)\", \"Static top-1\"]\n", `dynamic.compare[2] = "Static top-1": already dynamic.compare[0]`},
		// Keys of another kind were ignored (a persistent outage with an end never ended), and a
		// flaky event without success_prob ran as a tool that never succeeds.
		{"scenarios:\n  - {name: s, failure_rate: 0.2, theta: 0.9, events: [{kind: persistent, start: 2000, end: 3000, select: {by: frequency, fraction: 0.2}}]}\n",
			"scenarios[0].events[0].end = 3000: a persistent event has no end"},
		{"scenarios:\n  - {name: s, failure_rate: 0.2, theta: 0.9, events: [{kind: flaky, start: 2000, select: {by: frequency, fraction: 0.2}}]}\n",
			"scenarios[0].events[0].success_prob = 0: a flaky tool succeeds with a probability in (0, 1]"},
		{"scenarios:\n  - {name: s, failure_rate: 0.2, theta: 0.9, events: [{kind: transient, start: 2000, end: 3000, period: 50, select: {by: frequency, fraction: 0.2}}]}\n",
			"scenarios[0].events[0].period = 50: only a flapping event has a period, not transient"},
		{"scenarios:\n  - {name: s, failure_rate: 0.2, theta: 0.9, events: [{kind: persistent, start: 2000, success_prob: 0.3, select: {by: frequency, fraction: 0.2}}]}\n",
			"scenarios[0].events[0].success_prob = 0.3: only a flaky event"},
		{"scenarios:\n  - {name: s, failure_rate: 0.2, theta: 0.9, events: [{kind: flaky, start: 2000, success_prob: .nan, select: {by: frequency, fraction: 0.2}}]}\n", "scenarios[0].events[0].success_prob"},
	}
	for _, c := range cases {
		_, err := LoadConfig(viper.New(), []string{writeYAML(t, c.yaml)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to name %q", c.yaml, err, c.want)
		}
	}
}

// TestAllZeroGradesAreRefused (issue 16): a split whose qrels hold no relevant tool (every grade
// 0) cannot measure success; eval dynamic used to report SR 0.0% and "AS 0 ± 0" for every
// policy instead of refusing, as eval offline does.
func TestAllZeroGradesAreRefused(t *testing.T) {
	b, err := bench.Read(fstest.MapFS{
		"corpus.jsonl":   {Data: []byte(`{"_id":"t1","title":"slack","text":"post a message"}` + "\n" + `{"_id":"t2","title":"mail","text":"send an email"}` + "\n")},
		"queries.jsonl":  {Data: []byte(`{"_id":"q1","text":"post to slack"}` + "\n" + `{"_id":"q2","text":"send mail"}` + "\n")},
		"qrels/test.tsv": {Data: []byte("q1\tt1\t0\nq2\tt2\t0\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(viper.New(), []string{writeYAML(t, small)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := LexicalResources(b, "zeros", cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = BuildWorld(res, cfg)
	if err == nil || !strings.Contains(err.Error(), `split "test"`) || !strings.Contains(err.Error(), "grade > 0") {
		t.Fatalf("error %v, want a refusal naming the split and the grades", err)
	}
}

// TestUnknownKeyNamesItsFile: with several --config files, an unknown key used to be reported
// after merging ("'retrieval' has invalid keys: kk"), without saying which file holds it.
func TestUnknownKeyNamesItsFile(t *testing.T) {
	good := writeYAML(t, "retrieval:\n  k: 5\n")
	bad := writeYAML(t, "retrieval:\n  kk: 3\n")
	for _, files := range [][]string{{bad}, {good, bad}, {bad, good}} {
		_, err := LoadConfig(viper.New(), files)
		if err == nil || !strings.Contains(err.Error(), "config "+bad+": ") || !strings.Contains(err.Error(), "'retrieval' has invalid keys: kk") {
			t.Errorf("%v: error %v, want it to name %s and the key", files, err, bad)
		}
		if err != nil && strings.Contains(err.Error(), good) {
			t.Errorf("%v: error %v names the good file", files, err)
		}
	}
}

// TestWrongTypesAreRefused: the decoder was weakly typed, so k: 10.7 ran with K = 10, k: true
// with K = 1 and seeds: 3 with one seed. A value of the wrong type is refused naming the key;
// whole numbers written as floats (1e3) still pass.
func TestWrongTypesAreRefused(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"retrieval:\n  k: 10.7\n", "'retrieval.k' 10.7 is not an integer"},
		{"retrieval:\n  k: true\n", "'retrieval.k' expected type 'int', got unconvertible type 'bool'"},
		{"retrieval:\n  k: \"10\"\n", "'retrieval.k' expected type 'int', got unconvertible type 'string'"},
		{"dynamic:\n  seeds: 3\n", "'dynamic.seeds' source data must be an array or slice, got int"},
		{"dynamic:\n  seeds: [1, -2]\n", "'dynamic.seeds[1]' cannot parse value as 'uint64': -2 overflows uint"},
		{"dynamic:\n  seeds: [1.5]\n", "'dynamic.seeds[0]' 1.5 is not a non-negative integer"},
		{"dynamic:\n  compare: \"a,b\"\n", "'dynamic.compare' source data must be an array or slice, got string"},
		{"retrieval:\n  context_center: 1\n", "'retrieval.context_center' expected type 'bool', got unconvertible type 'int'"},
		{"dynamic:\n  split: 2\n", "'dynamic.split' expected type 'string', got unconvertible type 'int'"},
	}
	for _, c := range cases {
		path := writeYAML(t, c.yaml)
		_, err := LoadConfig(viper.New(), []string{path})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "config "+path) {
			t.Errorf("%q: error %v, want it to name %s and contain %q", c.yaml, err, path, c.want)
		}
	}
	cfg, err := LoadConfig(viper.New(), []string{writeYAML(t, "retrieval:\n  k: 1e1\ndynamic:\n  steps: 1.0e4\n")})
	if err != nil || cfg.Retrieval.K != 10 || cfg.Dynamic.Steps != 10000 {
		t.Fatalf("whole numbers written as floats: %v", err)
	}
}

// TestEnvironmentStringsAreParsed: RATED_* environment variables are strings; they still set
// numeric, boolean and list keys, and one that does not parse is refused naming the key.
func TestEnvironmentStringsAreParsed(t *testing.T) {
	t.Setenv("RATED_RETRIEVAL_K", "7")
	t.Setenv("RATED_RETRIEVAL_TAU", "0.5")
	t.Setenv("RATED_RETRIEVAL_CONTEXT_CENTER", "true")
	t.Setenv("RATED_DYNAMIC_SEEDS", "4,5")
	cfg, err := LoadConfig(viper.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Retrieval.K != 7 || cfg.Retrieval.Tau != 0.5 || !cfg.Retrieval.ContextCenter || len(cfg.Dynamic.Seeds) != 2 || cfg.Dynamic.Seeds[0] != 4 || cfg.Dynamic.Seeds[1] != 5 {
		t.Fatalf("environment not applied: %+v %+v", cfg.Retrieval, cfg.Dynamic.Seeds)
	}
	for key, c := range map[string]struct{ value, want string }{
		"RATED_RETRIEVAL_K":              {"10.7", `'retrieval.k' "10.7" is not an integer`},
		"RATED_DYNAMIC_SEEDS":            {"1,x", `'dynamic.seeds[1]' "x" is not a non-negative integer`},
		"RATED_DYNAMIC_STEPS":            {"many", `'dynamic.steps' "many" is not an integer`},
		"RATED_RETRIEVAL_TAU":            {"warm", `'retrieval.tau' "warm" is not a number`},
		"RATED_DYNAMIC_SPLIT":            {"dev", ""},
		"RATED_RETRIEVAL_CONTEXT_CENTER": {"yes please", `'retrieval.context_center' "yes please" is not true or false`},
	} {
		t.Run(key, func(t *testing.T) {
			t.Setenv(key, c.value)
			_, err := LoadConfig(viper.New(), nil)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%s=%s: error %v, want %q", key, c.value, err, c.want)
			}
		})
	}
}

// TestEnvironmentOverridesAreChecked: a RATED_<SECTION>_<KEY> variable that names no key of the
// section (viper ignored it), an empty one, and a bad value are refused naming the variable;
// other RATED_ variables are not the configuration's.
func TestEnvironmentOverridesAreChecked(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"RATED_DYNAMIC_STEPZ", "100", "environment RATED_DYNAMIC_STEPZ: no configuration key dynamic.* of that name"},
		{"RATED_DYNAMIC_SEEDS", "", "environment RATED_DYNAMIC_SEEDS is set but empty"},
		{"RATED_DYNAMIC_STEPS", "abc", `environment RATED_DYNAMIC_STEPS="abc": configuration`},
		{"RATED_RETRIEVAL_K", "2.5", `environment RATED_RETRIEVAL_K="2.5"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(c.name, c.value)
			if _, err := LoadConfig(viper.New(), nil); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s=%q: %v, want %q", c.name, c.value, err, c.want)
			}
		})
	}
	t.Setenv("RATED_HOME", "/elsewhere")
	t.Setenv("RATED_DYNAMIC_STEPS", "4000")
	cfg, err := LoadConfig(viper.New(), nil)
	if err != nil || cfg.Dynamic.Steps != 4000 {
		t.Fatalf("a good override: %v, steps %v", err, cfg)
	}
}

// TestBadStepsInAFileAreNamedUnderAnOverride: steps: -5 in a file with RATED_DYNAMIC_STEPS=200
// was reported as a summary window that does not fit; the bad key is named instead.
func TestBadStepsInAFileAreNamedUnderAnOverride(t *testing.T) {
	f := filepath.Join(t.TempDir(), "neg.yaml")
	if err := os.WriteFile(f, []byte("dynamic: {steps: -5}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RATED_DYNAMIC_STEPS", "200")
	if _, err := LoadConfig(viper.New(), []string{f}); err == nil || !strings.Contains(err.Error(), "dynamic.steps = -5 in the configuration files") {
		t.Errorf("error %v, want it to name dynamic.steps = -5", err)
	}
}

// TestEnvironmentSetsKeysNoFileSets: the known keys came from the files alone, so
// RATED_DYNAMIC_BOUND_ATTEMPTS (paper.yaml sets no bound_attempts) was refused as naming no key,
// and RATED_SWEEP_POLICY (no sweep section) was ignored without a word.
func TestEnvironmentSetsKeysNoFileSets(t *testing.T) {
	t.Setenv("RATED_DYNAMIC_BOUND_ATTEMPTS", "1.15")
	// Applied: paper.yaml has no oracle_fallback policy for the bounds to come from.
	if _, err := LoadConfig(viper.New(), nil); err == nil || !strings.Contains(err.Error(), "dynamic.bound_attempts: the bounds come from oracle_fallback") {
		t.Fatalf("RATED_DYNAMIC_BOUND_ATTEMPTS: %v", err)
	}
	t.Setenv("RATED_DYNAMIC_BOUND_ATTEMPTS", "1.15,1.3")
	cfg, err := LoadConfig(viper.New(), []string{writeYAML(t, "policies:\n  - {name: s, kind: static}\n  - {name: o, kind: oracle_fallback}\ndynamic:\n  compare: []\n")})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Dynamic.BoundAttempts; len(got) != 2 || got[0] != 1.15 || got[1] != 1.3 {
		t.Fatalf("dynamic.bound_attempts %v, want [1.15 1.3]", got)
	}
	os.Unsetenv("RATED_DYNAMIC_BOUND_ATTEMPTS")
	t.Setenv("RATED_SWEEP_POLICY", "Static")
	cfg, err = LoadConfig(viper.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Sweep == nil || cfg.Sweep.Policy != "Static" {
		t.Fatalf("RATED_SWEEP_POLICY ignored: sweep %+v", cfg.Sweep)
	}
	t.Setenv("RATED_SWEEP_POLICI", "Static")
	if _, err := LoadConfig(viper.New(), nil); err == nil || !strings.Contains(err.Error(), "RATED_SWEEP_POLICI: no configuration key sweep.*") {
		t.Fatalf("RATED_SWEEP_POLICI: %v", err)
	}
}

// TestFSRMarginsKeepScenarioNames: viper lower-cases map keys, so the margin written for a
// scenario "Provider-20" was looked up as "provider-20", never found, and the default applied;
// a margin naming no scenario was ignored too.
func TestFSRMarginsKeepScenarioNames(t *testing.T) {
	sweep := func(margins string) string {
		return `dynamic: {compare: [], split: dev}
scenarios:
  - {name: Provider-20, failure_rate: 0.2, theta: 0.9, events: [{kind: persistent, start: 2000, select: {by: frequency, fraction: 0.2, unit: provider}}]}
  - {name: p20, failure_rate: 0.2, theta: 0.9, events: [{kind: persistent, start: 2000, select: {by: frequency, fraction: 0.2}}]}
policies:
  - {name: BL, kind: blacklist}
  - {name: R, kind: rated, alpha: 0.1, gamma: 0.9}
sweep:
  policy: R
  params: [{key: alpha, values: [0.1, 0.2]}]
  criterion: {fsr_reference: BL, fsr_margin: 0.01, fsr_margins: ` + margins + `}
`
	}
	cfg, err := LoadConfig(viper.New(), []string{writeYAML(t, sweep("{Provider-20: -0.001}"))})
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := cfg.Sweep.Criterion.FSRMargins["Provider-20"]; !ok || m != -0.001 {
		t.Fatalf("fsr_margins %v, want Provider-20: -0.001", cfg.Sweep.Criterion.FSRMargins)
	}
	if err := cfg.CheckSweep(); err != nil {
		t.Fatal(err)
	}
	cfg, err = LoadConfig(viper.New(), []string{writeYAML(t, sweep("{p2O: -0.001}"))})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.CheckSweep(); err == nil || !strings.Contains(err.Error(), "sweep.criterion.fsr_margins.p2o: no scenario of that name") {
		t.Fatalf("a margin naming no scenario: %v", err)
	}
}

// TestGoalsPolicyOfAnotherRunIsWarned: a file that replaces the policies keeps paper.yaml's
// goals.policy, and the run wrote no goals.* without a word.
func TestGoalsPolicyOfAnotherRunIsWarned(t *testing.T) {
	paper, err := LoadConfig(viper.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := paper.Warnings(); len(w) != 0 {
		t.Fatalf("paper.yaml: %v", w)
	}
	cfg, err := LoadConfig(viper.New(), []string{writeYAML(t, "dynamic: {compare: []}\npolicies:\n  - {name: s, kind: static}\n")})
	if err != nil {
		t.Fatal(err)
	}
	if w := cfg.Warnings(); len(w) != 1 || !strings.Contains(w[0], `goals.policy = "`+paper.Goals.Policy+`" names no policy of this run`) {
		t.Fatalf("warnings %v", w)
	}
}

// TestLateOnsetIsWarned: Post-Fail SR shares one window over every scenario, so a scenario whose
// onset comes later counted its pre-failure steps as post-failure without a word (and the notes
// stated only the first scenario's onset). It is warned, and Table 2's notes say it.
func TestLateOnsetIsWarned(t *testing.T) {
	cfg, err := LoadConfig(viper.New(), []string{writeYAML(t, "scenarios:\n  - {name: s, failure_rate: 0.2, theta: 0.9, events: [{kind: persistent, start: 2000, select: {by: frequency, fraction: 0.2}}]}\n  - {name: late, failure_rate: 0.2, theta: 0.9, events: [{kind: persistent, start: 3000, select: {by: frequency, fraction: 0.2}}]}\n")})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(cfg.Warnings(), "\n")
	if !strings.Contains(w, "scenario late: onset 3000 falls after dynamic.summary_from = 2000, so its Post-Fail SR and FSR count 1000 pre-failure steps") || strings.Contains(w, "scenario s:") {
		t.Fatalf("warnings:\n%s", w)
	}
	notes := strings.Join(Table2(cfg, nil, WorldInfo{}).Notes, "\n")
	for _, want := range []string{"Failure onset at step 2000 (s); step 3000 (late)", "starts before the failure onset of late (onset 3000)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("Table 2 notes lack %q:\n%s", want, notes)
		}
	}
	// An onset after the window's end: the window is all pre-failure (it said "count 4000
	// pre-failure steps" of a 3,000-step window). Tools appearing earlier are no onset (the
	// metrics were measured from the new tools' step, 1000, before anything failed).
	cfg, err = LoadConfig(viper.New(), []string{writeYAML(t, "scenarios:\n  - {name: later, failure_rate: 0.2, theta: 0.9, events: [{kind: new_tools, start: 1000, select: {by: random, fraction: 0.2}}, {kind: persistent, start: 6000, select: {by: frequency, fraction: 0.2}}]}\n")})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(cfg.Warnings(), "\n"); !strings.Contains(w, "scenario later: onset 6000 falls after dynamic.summary_from = 2000, so its Post-Fail SR and FSR count only pre-failure steps (the whole window, 2001–5000, lies before the failure)") {
		t.Fatalf("warnings:\n%s", w)
	}
}

// TestSelectionNoteFollowsTheSelectors: Table 2's note on which tools fail said "the next ρ·N
// after skipping the 10% most frequently relevant" whatever the scenarios selected.
func TestSelectionNoteFollowsTheSelectors(t *testing.T) {
	got := selectionNote([]sim.Scenario{
		{Name: "a", Events: []sim.Event{{Kind: sim.EventPersistent, Select: sim.Selector{By: "frequency", SkipTop: 0.1, Fraction: 0.2}}}},
		{Name: "b", Events: []sim.Event{{Kind: sim.EventFlaky, Select: sim.Selector{By: "frequency", SkipTop: 0.1, Fraction: 0.2}}}},
		{Name: "p", Events: []sim.Event{{Kind: sim.EventPersistent, Select: sim.Selector{By: "random", Fraction: 0.3, Unit: sim.UnitProvider, Among: sim.AmongRelevant}}}},
		{Name: "c", Events: []sim.Event{{Kind: sim.EventNewTools, Select: sim.Selector{By: "random", Fraction: 0.3, Unit: sim.UnitProvider, Among: sim.AmongRelevant}}}},
	})
	want := "the events select 20% of the catalog, most frequently relevant in the stream first, after skipping the top 10%: a, b; " +
		"whole providers covering 30% of the tools the stream needs, in a seeded random order: p, c (the tools that appear)."
	if got != want {
		t.Fatalf("note\n%s\nwant\n%s", got, want)
	}
}
