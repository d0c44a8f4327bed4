package evaldynamic

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/viper"

	"github.com/rated-dev/rated/pkg/defaultbench"
)

func writeYAML(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPaperConfigHoldsThePaperValues(t *testing.T) {
	cfg, err := LoadConfig(viper.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Dynamic
	if cfg.Retrieval.K != 10 || d.Steps != 10000 || cfg.Scenarios[0].Onset() != 2000 || cfg.Scenarios[1].Onset() != 2000 || d.SummaryFrom != 2000 || d.SummaryTo != 5000 || d.ASWindow != 200 {
		t.Errorf("protocol values differ from the paper: %+v %+v", cfg.Retrieval, d)
	}
	if f := cfg.Fusion; f.Semantic != 0.75 || f.Bandit != 0.15 || f.Prior != 0.10 {
		t.Errorf("fusion %+v", f)
	}
	if p := cfg.Prior; p.ConsistencyWeight != 0.5 || p.SourceWeight != 0.3 || p.QualityWeight != 0.2 {
		t.Errorf("prior %+v", p)
	}
	found := false
	for _, p := range cfg.Policies {
		if p.Kind == "rated" {
			found = p.Alpha == 0.1 && p.Gamma == 0.95
		}
	}
	if !found {
		t.Error("RATED (Full) must use α = 0.1, γ = 0.95")
	}
	if len(cfg.Scenarios) != 2 || cfg.Scenarios[0].Theta != 0.9 || cfg.Scenarios[1].Theta != 0.8 ||
		cfg.Scenarios[0].Events[0].Select.Fraction != 0.2 || cfg.Scenarios[1].Events[0].Select.Fraction != 0.3 ||
		cfg.Scenarios[0].Events[0].Select.SkipTop != 0.1 {
		t.Errorf("scenarios %+v", cfg.Scenarios)
	}
}

func TestBadConfigurationIsRefusedNamingTheKey(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"policies:\n  - {name: x, kind: oracle}\n", "policies[0].kind"},
		{"policies:\n  - {name: x, kind: rated, gamma: 1.2}\n", "policies[0].gamma"},
		{"retrieval:\n  k: 0\n", "retrieval.k"},
		{"fusion:\n  semantic: 0.8\n", "fusion weights"},
		{"scenarios:\n  - {name: s, theta: 0.9, events: [{kind: persistent, start: 2000, select: {by: frequency, fraction: 1.0}}]}\n", "scenarios[0].events[0].select.fraction"},
		{"dynamik:\n  steps: 5\n", "dynamik"},
		{"prior:\n  quality_weight: 0.9\n", "prior weights"},
	}
	for _, c := range cases {
		_, err := LoadConfig(viper.New(), []string{writeYAML(t, c.yaml)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to name %q", c.yaml, err, c.want)
		}
	}
	if _, err := LoadConfig(viper.New(), []string{"/nonexistent.yaml"}); err == nil || !strings.Contains(err.Error(), "/nonexistent.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

// TestShippedConfigsFromAnywhere: the docs' `--config configs/extended.yaml` (or extended.yaml)
// works from a directory without the repository's configs/, reading the copy in the binary; a
// file on disk at that path wins; a name that is neither is refused naming it and the shipped
// ones.
func TestShippedConfigsFromAnywhere(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, name := range []string{"configs/extended.yaml", "extended.yaml", "./configs/extended.yaml"} {
		cfg, err := LoadConfig(viper.New(), []string{name})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// extended.yaml's seven scenarios, in its order (the paper's base has two).
		var got []string
		for _, s := range cfg.Scenarios {
			got = append(got, s.Name)
		}
		want := []string{"persistent-20", "persistent-30", "transient-20", "flapping-20", "flaky-20", "cold-start-20", "provider-20"}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s: scenarios %v, want extended.yaml's %v", name, got, want)
		}
	}
	if err := os.MkdirAll("configs", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("configs/extended.yaml", []byte("scenarios:\n  - {name: mine, theta: 0.9, events: [{kind: persistent, start: 2000, select: {by: frequency, fraction: 0.2}}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(viper.New(), []string{"configs/extended.yaml"})
	if err != nil || len(cfg.Scenarios) != 1 || cfg.Scenarios[0].Name != "mine" {
		t.Fatalf("a file on disk must win over the embedded copy: %v %+v", err, cfg)
	}
	for _, name := range []string{"configs/nosuch.yaml", "elsewhere/protocols.yaml", "protocols"} {
		_, err := LoadConfig(viper.New(), []string{name})
		if err == nil || !strings.Contains(err.Error(), "config "+name+": no such file") || !strings.Contains(err.Error(), "protocols.yaml") {
			t.Errorf("%s: error %v, want it to name the path and the shipped configs", name, err)
		}
	}
}

func TestEnvironmentOverrides(t *testing.T) {
	t.Setenv("RATED_DYNAMIC_STEPS", "6000")
	cfg, err := LoadConfig(viper.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Dynamic.Steps != 6000 {
		t.Fatalf("steps = %d, want the environment's 6000", cfg.Dynamic.Steps)
	}
}

// small is a short run of the paper protocol scaled down, for tests.
const small = `
dynamic: {steps: 3000, summary_from: 1000, summary_to: 2500, as_window: 100, seeds: [1, 2], split: test, curve_stride: 50}
scenarios:
  - {name: p20, failure_rate: 0.2, theta: 0.9, events: [{kind: persistent, start: 1000, select: {by: frequency, skip_top: 0.1, fraction: 0.2}}]}
`

func TestRunWritesReproducibleOutputs(t *testing.T) {
	cfg, err := LoadConfig(viper.New(), []string{writeYAML(t, small)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := defaultbench.Load()
	if err != nil {
		t.Fatal(err)
	}
	res, err := LexicalResources(b, "default", cfg)
	if err != nil {
		t.Fatal(err)
	}
	fixed := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	run := func(dir string, workers int) []byte {
		if _, err := Run(context.Background(), cfg, res, Options{OutDir: dir, Workers: workers, Now: fixed}); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "table2.json"))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	d1, d2 := t.TempDir(), t.TempDir()
	a, bb := run(d1, 2), run(d2, 1)
	if string(a) != string(bb) {
		t.Fatal("same configuration and seeds must give byte-identical table2.json")
	}
	var parsed struct {
		Rows []struct {
			Method      string                       `json:"method"`
			FailureRate float64                      `json:"failure_rate"`
			PostFailSR  struct{ Mean, CI95 float64 } `json:"post_fail_sr"`
			FSR         struct{ Mean, CI95 float64 } `json:"fsr"`
			AS          struct {
				Mean       float64 `json:"mean"`
				FailedRuns int     `json:"failed_runs"`
			} `json:"as"`
			Seeds int `json:"seeds"`
		} `json:"rows"`
		Config map[string]any `json:"config"`
	}
	if err := json.Unmarshal(a, &parsed); err != nil {
		t.Fatal(err)
	}
	if len(parsed.Rows) != len(cfg.Policies) || parsed.Rows[0].Seeds != 2 || parsed.Rows[0].FailureRate != 0.2 || parsed.Config == nil {
		t.Fatalf("table2.json layout: %+v", parsed)
	}
	for _, f := range []string{"table2.md", "table2.csv", "table2.tex", "config.yaml", "runs.jsonl", "sr-p20.png"} {
		if st, err := os.Stat(filepath.Join(d1, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	// The blacklist never re-selects a failed tool: its FSR must be far below the static top-1's.
	fsr := map[string]float64{}
	for _, r := range parsed.Rows {
		fsr[r.Method] = r.FSR.Mean
	}
	if !(fsr["Health Check Blacklist"] < fsr["Static top-1"]/4) {
		t.Errorf("blacklist FSR %v vs static %v", fsr["Health Check Blacklist"], fsr["Static top-1"])
	}
}
