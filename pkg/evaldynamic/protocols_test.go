package evaldynamic

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/viper"
	"gopkg.in/yaml.v3"

	"github.com/rated-dev/rated/configs"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/metrics"
	"github.com/rated-dev/rated/pkg/sim"
)

func TestPaperConfigRecommendedRowIsConfigsRecommended(t *testing.T) {
	cfg, err := LoadConfig(viper.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := bandit.RecommendedSpec()
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.policyNamed(want.Name)
	if got == nil {
		t.Fatalf("configs/paper.yaml has no %q row", want.Name)
	}
	a, _ := yaml.Marshal(got)
	b, _ := yaml.Marshal(want)
	if string(a) != string(b) {
		t.Fatalf("paper.yaml's row differs from configs/recommended.yaml:\n%s\nvs\n%s", a, b)
	}
}

// TestPaperHubnessIsServesDefault: the calibration `rated serve` fits takes the hubness
// feature's defaults from bandit's constants, which must be paper.yaml's dynamic.hubness.
func TestPaperHubnessIsServesDefault(t *testing.T) {
	cfg, err := LoadConfig(viper.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if h := cfg.Dynamic.Hubness; h.Depth != bandit.DefaultHubnessDepth || h.Strength != bandit.DefaultHubnessStrength {
		t.Fatalf("paper.yaml dynamic.hubness %+v, bandit's defaults depth %d, strength %v", h, bandit.DefaultHubnessDepth, bandit.DefaultHubnessStrength)
	}
}

func TestShippedConfigsLoad(t *testing.T) {
	entries, err := configs.Files.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	loaded := 0
	for _, e := range entries {
		switch e.Name() {
		case "llm.yaml", "sources.yaml", "recommended.yaml", "llm-candidates":
			// Not dynamic configurations: the LLM, the crawl's sources, one policy spec
			// (the test above keeps it equal to paper.yaml's row) and a folder of LLM configurations.
		default:
			loaded++
			raw, _ := configs.Files.ReadFile(e.Name())
			files := []string{writeYAML(t, string(raw))}
			if strings.HasPrefix(e.Name(), "sweep-") {
				// The sweeps run over extended.yaml's scenarios (their usage lines), which their
				// per-scenario margins name.
				ext, _ := configs.Files.ReadFile("extended.yaml")
				files = append([]string{writeYAML(t, string(ext))}, files...)
			}
			cfg, err := LoadConfig(viper.New(), files)
			if err != nil {
				t.Fatalf("configs/%s: %v", e.Name(), err)
			}
			if cfg.Sweep != nil {
				if err := cfg.CheckSweep(); err != nil {
					t.Fatalf("configs/%s: %v", e.Name(), err)
				}
			}
			if err := cfg.CheckFileNames(true); err != nil {
				t.Fatalf("configs/%s: %v", e.Name(), err)
			}
		}
	}
	if loaded < 10 {
		t.Fatalf("%d shipped dynamic configurations loaded; the embedded folder lost some", loaded)
	}
}

func TestProtocolsAndComparesAreValidated(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"protocols:\n  - {name: x, kind: psychic}\n", "protocols[0].kind"},
		{"protocols:\n  - {name: j, kind: judged, false_positive: 1.5}\n", "protocols[0].false_positive"},
		{"protocols:\n  - {name: e, kind: execution, false_negative: 0.1}\n", "judged only"},
		{"protocols: []\n", "protocols"},
		{"dynamic:\n  compare: [nobody]\n", "dynamic.compare[0]"},
		{"policies:\n  - {name: f, kind: factored, relevance: {model: kernel}, fusion: {kind: linear, semantic: 0.5}}\n", "policies[0].fusion weights"},
		{"policies:\n  - {name: f, kind: factored, relevance: {model: telepathy}, fusion: {kind: expected}}\n", "policies[0].relevance.model"},
		{"policies:\n  - {name: f, kind: factored, relevance: {model: kernel}, reliability: {prior_strength: 0}, fusion: {kind: expected}}\n", "policies[0].reliability.prior_strength"},
		{"policies:\n  - {name: s, kind: static, fusion: {kind: expected}}\n", "kind factored only"},
		{"policies:\n  - {name: f, kind: factored, relevance: {model: kernel, sketch: bloom}, fusion: {kind: expected}}\n", "policies[0].relevance.sketch"},
		{"policies:\n  - {name: f, kind: factored, relevance: {model: rated, sketch: sign}, fusion: {kind: expected}}\n", "only the kernel model"},
		{"policies:\n  - {name: f, kind: factored, relevance: {model: kernel, bandwidth: -0.1}, fusion: {kind: expected}}\n", "policies[0].relevance.bandwidth"},
		{"policies:\n  - {name: f, kind: factored, relevance: {model: kernel, merge: 1.5}, fusion: {kind: expected}}\n", "policies[0].relevance.merge"},
		{"policies:\n  - {name: f, kind: factored, relevance: {model: kernel, max_prototypes: -2}, fusion: {kind: expected}}\n", "policies[0].relevance.max_prototypes"},
		{"policies:\n  - {name: f, kind: factored, relevance: {model: kernel, bandwidths: [0.1, 0]}, fusion: {kind: expected}}\n", "policies[0].relevance.bandwidths[1]"},
		{"policies:\n  - {name: f, kind: factored, relevance: {model: kernel, bandwidth: 0.1, bandwidths: [0.1, 0.2]}, fusion: {kind: expected}}\n", "not both"},
		{"policies:\n  - {name: f, kind: factored, relevance: {model: residual, bandwidths: [0.1, 0.2]}, fusion: {kind: expected}}\n", "only the kernel model has a bandwidth"},
	}
	for _, c := range cases {
		_, err := LoadConfig(viper.New(), []string{writeYAML(t, c.yaml)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to name %q", c.yaml, err, c.want)
		}
	}
}

func TestCalibrationNeverOnTheReportedSplit(t *testing.T) {
	cfg, err := LoadConfig(viper.New(), []string{writeYAML(t, small), writeYAML(t, "dynamic:\n  calibration: test\n")})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := defaultbench.Load()
	res, _ := LexicalResources(b, "default", cfg)
	if _, _, err := BuildWorld(res, cfg); err == nil || !strings.Contains(err.Error(), "never on the split you report") {
		t.Fatalf("calibrating on the evaluated test split: %v", err)
	}
}

func TestSweepSpecsByHand(t *testing.T) {
	base := bandit.Spec{Name: "R", Kind: "factored", Relevance: &bandit.RelevanceSpec{Model: "calibrated"},
		Reliability: &bandit.HealthConfig{PriorStrength: 1, PoolInit: 1, MaskBase: 100}, Fusion: &bandit.FusionConfig{Kind: "expected"}}
	specs, err := sweepSpecs(base, []SweepParam{
		{Key: "reliability.mask_base", Values: []any{50, 200}},
		{Key: "reliability.half_life", Values: []any{500, 1000, 2000}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 6 {
		t.Fatalf("%d settings, want 2 × 3", len(specs))
	}
	last := specs[5]
	if last.spec.Reliability.MaskBase != 200 || last.spec.Reliability.HalfLife != 2000 || last.spec.Reliability.PriorStrength != 1 {
		t.Fatalf("last setting %+v", last.spec.Reliability)
	}
	if last.spec.Name != "R [reliability.mask_base=200, reliability.half_life=2000]" || last.setting["reliability.half_life"] != "2000" {
		t.Fatalf("name %q setting %v", last.spec.Name, last.setting)
	}
	if base.Reliability.MaskBase != 100 {
		t.Fatal("the base spec must not change")
	}
	_, err = sweepSpecs(base, []SweepParam{{Key: "reliability.prior_strength", Values: []any{0}}})
	if err == nil || !strings.Contains(err.Error(), "prior_strength") {
		t.Fatalf("an invalid setting must be refused before any run: %v", err)
	}
	_, err = sweepSpecs(base, []SweepParam{{Key: "reliability.no_such_key", Values: []any{1}}})
	if err == nil || !strings.Contains(err.Error(), "no_such_key") {
		t.Fatalf("an unknown key must be refused: %v", err)
	}
}

func TestChooseSettingHonoursTheCriterion(t *testing.T) {
	cfg := &Config{Scenarios: []sim.Scenario{{Name: "a"}, {Name: "b"}}, Sweep: &SweepConfig{Policy: "R",
		Criterion: SweepCriterion{FSRReference: "BL", FSRMargin: 0.01, FSRMargins: map[string]float64{"b": -0.001}}}}
	specs := []sweepSpec{{spec: bandit.Spec{Name: "R [x=1]"}, setting: map[string]string{"x": "1"}},
		{spec: bandit.Spec{Name: "R [x=2]"}, setting: map[string]string{"x": "2"}},
		{spec: bandit.Spec{Name: "R [x=3]"}, setting: map[string]string{"x": "3"}}}
	row := func(method, sc string, sr, fsr float64) sim.Row {
		return sim.Row{Method: method, Scenario: sc, PostFailSR: metrics.Summary{Mean: sr}, FSR: metrics.Summary{Mean: fsr}}
	}
	rows := []sim.Row{
		row("BL", "a", 0.40, 0.02), row("BL", "b", 0.45, 0.015),
		// x=1: best SR but FSR in b above the blacklist's (margin −0.1 point there).
		row("R [x=1]", "a", 0.50, 0.025), row("R [x=1]", "b", 0.50, 0.016),
		// x=2: meets both constraints (a: 0.029 ≤ 0.03; b: 0.013 ≤ 0.014).
		row("R [x=2]", "a", 0.45, 0.029), row("R [x=2]", "b", 0.46, 0.013),
		// x=3: meets them too, lower SR.
		row("R [x=3]", "a", 0.41, 0.01), row("R [x=3]", "b", 0.41, 0.01),
	}
	res := chooseSetting(cfg, specs, rows)
	if res.Chosen.Setting["x"] != "2" || res.ChosenSpec.Name != "R" {
		t.Fatalf("chose %v (%s), want x=2", res.Chosen.Setting, res.ChosenSpec.Name)
	}
	if math.Abs(res.Points[1].MeanSR-0.455) > 1e-12 || len(res.Points[0].Violations) != 1 {
		t.Fatalf("points %+v", res.Points)
	}
}

func TestSweepRefusesTestSplitAndWritesItsOutputs(t *testing.T) {
	body := `
dynamic: {steps: 3000, summary_from: 1000, summary_to: 2500, as_window: 100, seeds: [1], split: dev, curve_stride: 50, compare: []}
scenarios:
  - {name: p20, failure_rate: 0.2, theta: 0.9, events: [{kind: persistent, start: 1000, select: {by: frequency, skip_top: 0.1, fraction: 0.2}}]}
policies:
  - {name: BL, kind: blacklist}
  - {name: R, kind: factored, relevance: {model: calibrated}, reliability: {prior_strength: 1, pool_init: 1, mask_base: 100}, fusion: {kind: expected}}
sweep:
  policy: R
  params: [{key: reliability.mask_base, values: [50, 100]}]
  criterion: {fsr_reference: BL, fsr_margin: 0.01}
`
	cfg, err := LoadConfig(viper.New(), []string{writeYAML(t, body)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := defaultbench.Load()
	res, _ := LexicalResources(b, "default", cfg)
	dir := t.TempDir()
	out, err := Sweep(context.Background(), cfg, res, Options{OutDir: dir, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Points) != 2 {
		t.Fatalf("%d points", len(out.Points))
	}
	for _, f := range []string{"sweep.md", "sweep.json", "chosen.yaml", "sweep-reliability-mask_base-sr.png", "sweep-reliability-mask_base-fsr.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "chosen.yaml"))
	var chosen struct{ Policies []bandit.Spec }
	if err := yaml.Unmarshal(raw, &chosen); err != nil || len(chosen.Policies) != 1 || chosen.Policies[0].Name != "R" {
		t.Fatalf("chosen.yaml: %v %s", err, raw)
	}
	var js SweepResult
	raw, _ = os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err := json.Unmarshal(raw, &js); err != nil || !reflect.DeepEqual(js.Chosen.Setting, out.Chosen.Setting) {
		t.Fatalf("sweep.json: %v", err)
	}
	cfg.Dynamic.Split = "test"
	if _, err := Sweep(context.Background(), cfg, res, Options{OutDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "tune on dev") {
		t.Fatalf("a sweep on test must be refused: %v", err)
	}
}

func TestPairedComparesSeedBySeed(t *testing.T) {
	cfg := &Config{Protocols: []sim.Protocol{{Name: "execution"}}, Scenarios: []sim.Scenario{{Name: "s"}},
		Policies: []bandit.Spec{{Name: "A"}, {Name: "B"}}, Dynamic: DynamicConfig{Compare: []string{"A"}}}
	var results []sim.RunResult
	for i, sr := range []float64{0.50, 0.52, 0.55} { // A
		results = append(results, sim.RunResult{Protocol: "execution", Scenario: "s", Policy: "A", Seed: uint64(i), PostFailSR: sr, FSR: 0.02})
	}
	for i, sr := range []float64{0.40, 0.43, 0.44} { // B
		fsr := []float64{0.03, 0.05, 0.04}[i]
		results = append(results, sim.RunResult{Protocol: "execution", Scenario: "s", Policy: "B", Seed: uint64(i), PostFailSR: sr, FSR: fsr})
	}
	rows, err := Paired(cfg, results)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Baseline != "B" {
		t.Fatalf("rows %+v", rows)
	}
	// Differences 0.10, 0.09, 0.11: mean 0.10, sd 0.01, t = 0.10/(0.01/√3) = 17.32.
	r := rows[0]
	if math.Abs(r.SRDiff.Mean-0.10) > 1e-12 || math.Abs(r.SRTest.Statistic-10*math.Sqrt(3)) > 1e-9 {
		t.Fatalf("diff %v t %v", r.SRDiff.Mean, r.SRTest.Statistic)
	}
	// FSR differences −0.01, −0.03, −0.02: mean −0.02. The p-values, from scipy.stats.ttest_rel
	// on the same per-seed values: SR 0.0033167587223568657, FSR 0.07417990022744855; the JSON
	// fields sr_p and fsr_p carry them.
	if math.Abs(r.FSRDiff.Mean+0.02) > 1e-12 {
		t.Fatalf("FSR diff %v", r.FSRDiff.Mean)
	}
	if r.SRP == nil || r.FSRP == nil || math.Abs(*r.SRP-0.0033167587223568657) > 1e-9 || math.Abs(*r.FSRP-0.07417990022744855) > 1e-9 {
		t.Fatalf("sr_p %v, fsr_p %v; want 0.00332 and 0.0742", r.SRP, r.FSRP)
	}
}
