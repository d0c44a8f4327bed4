package evaldynamic

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/viper"

	"github.com/rated-dev/rated/pkg/decisionlog"
	"github.com/rated-dev/rated/pkg/defaultbench"
)

// TestDecisionLogMatchesTheRuns writes the decision log of a small grid and recomputes each
// run's Post-Fail SR from the log's outcomes alone; it must equal runs.jsonl's. The logging
// policies' propensities are checked too: 1 on the choice for the deterministic recommended
// policy, a distribution over the candidates for the sampling GRPO baseline.
func TestDecisionLogMatchesTheRuns(t *testing.T) {
	cfg, err := LoadConfig(viper.New(), []string{writeYAML(t, `
dynamic: {steps: 1200, summary_from: 400, summary_to: 1000, as_window: 100, seeds: [3], split: test, curve_stride: 50, compare: []}
scenarios:
  - {name: p20, failure_rate: 0.2, theta: 0.9, events: [{kind: persistent, start: 400, select: {by: frequency, skip_top: 0.1, fraction: 0.2}}]}
policies:
  - {name: "RATED-R", kind: factored, relevance: {model: kernel, alpha: 0.1}, reliability: {half_life: 1000, prior_strength: 1, pool_rate: 0.05, pool_init: 1, pool_evidence: 1, reset_on_failure: true, mask_base: 200}, fusion: {kind: expected}, attempts: 2}
  - {name: GRPO, kind: batch_grpo, batch: 100}
`)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := defaultbench.Load()
	res, err := LexicalResources(b, "default", cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, logDir := t.TempDir(), t.TempDir()
	if _, err := Run(context.Background(), cfg, res, Options{OutDir: out, Workers: 2, DecisionLog: logDir}); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	f, _ := os.Open(filepath.Join(out, "runs.jsonl"))
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			Policy     string  `json:"policy"`
			PostFailSR float64 `json:"post_fail_sr"`
		}
		json.Unmarshal(sc.Bytes(), &r)
		want[r.Policy] = r.PostFailSR
	}
	f.Close()
	for policy, sr := range want {
		prefix := "execution_p20_" + policy + "_seed3"
		files, err := decisionlog.Files(logDir, prefix)
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no log files (%v)", prefix, err)
		}
		served := map[int64]bool{}
		decisions := 0
		_, err = decisionlog.ReadFiles(files, func(r decisionlog.Record) error {
			if d := r.Decision; d != nil {
				decisions++
				sum, ones := 0.0, 0
				for _, c := range d.Candidates {
					sum += c.Propensity
					if c.Propensity == 1 {
						ones++
					}
				}
				if math.Abs(sum-1) > 1e-9 || d.Explores != (policy == "GRPO") || (!d.Explores && ones != 1) ||
					d.Source != decisionlog.SourceSim || d.Run == nil || d.ContextDim != cfg.Retrieval.ContextDim || d.Query.Text == "" {
					t.Fatalf("%s: decision %s: propensities sum %v, explores %v: %+v", policy, d.ID, sum, d.Explores, d)
				}
				if !strings.HasPrefix(d.ID, prefix+"/") {
					t.Fatalf("decision id %s", d.ID)
				}
			}
			if o := r.Outcome; o != nil && o.Served != nil && *o.Served {
				served[o.T] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		hits := 0
		for step := range served {
			if step >= 400 && step < 1000 {
				hits++
			}
		}
		if got := float64(hits) / 600; math.Abs(got-sr) > 1e-12 || decisions < 1150 { // a step whose query matches no tool has no decision
			t.Fatalf("%s: Post-Fail SR from the log %v, runs.jsonl %v (%d decisions)", policy, got, sr, decisions)
		}
	}
}
