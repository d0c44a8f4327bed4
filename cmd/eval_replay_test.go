package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/decisionlog"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/router"
)

// TestEvalReplayOnAServedLog: a router logging with the recommended policy wrapped in ε-greedy
// exploration (what rated serve --policy writes) serves 300 requests; rated eval replay then
// evaluates three policies on its decision log and writes the table and the JSON.
func TestEvalReplayOnAServedLog(t *testing.T) {
	b, err := defaultbench.Load()
	if err != nil {
		t.Fatal(err)
	}
	front, _ := router.NewLexicalFrontend(64)
	cal, _, err := router.FitCalibration(front, b, "dev", 10, bandit.DefaultHubnessDepth, bandit.DefaultHubnessStrength)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := bandit.RecommendedSpec()
	spec.Name, spec.Explore = "recommended-eps", &bandit.ExploreConfig{Kind: bandit.ExploreEpsilonGreedy, Epsilon: 0.3}
	logDir, dir := t.TempDir(), t.TempDir()
	w, err := decisionlog.Open(logDir, decisionlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := router.New(context.Background(), router.Config{Frontend: front, Tools: b.Tools, Calibrator: cal, Policy: &spec, Log: w, LogContext: true})
	if err != nil {
		t.Fatal(err)
	}
	queries := b.SplitQueries("test")
	for i := range 300 {
		sel, err := r.Select(context.Background(), queries[i%len(queries)].Text, router.SelectOptions{})
		if err != nil || len(sel.Tools) == 0 {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(sel.Tools[0].ID))
		if _, err := r.Report(context.Background(), sel.DecisionID, sel.Tools[0].ID, router.Outcome{Executed: h.Sum32()%4 != 0}, -1); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	// A replica killed mid-write leaves a torn last line: skipped, and said so.
	logs, err := decisionlog.FilesIn(logDir)
	if err != nil || len(logs) == 0 {
		t.Fatalf("decision logs %v: %v", logs, err)
	}
	torn := filepath.Join(logDir, "decisions-torn-000001.jsonl")
	if err := os.WriteFile(torn, []byte(`{"v":1,"kind":"outc`), 0o644); err != nil {
		t.Fatal(err)
	}
	specs := filepath.Join(dir, "targets.yaml")
	os.WriteFile(specs, []byte("- {name: static, kind: static}\n- {name: prior, kind: prior_only}\n"), 0o644)
	out := filepath.Join(dir, "out")
	cmd := newRootCmd()
	var so, se bytes.Buffer
	cmd.SetOut(&so)
	cmd.SetErr(&se)
	cmd.SetArgs([]string{"eval", "replay", "--log", logDir, "--policies", "recommended", "--policies", specs, "--out", out})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("eval replay: %v\n%s", err, se.String())
	}
	for _, want := range []string{"| static |", "| prior |", "| RATED-R (recommended) |", "300 of 300 decisions drawn at random"} {
		if !strings.Contains(so.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, so.String())
		}
	}
	if !strings.Contains(se.String(), torn+": its last line has no newline") || !strings.Contains(so.String(), "Torn last lines skipped") {
		t.Fatalf("the torn file was not reported:\n%s\n%s", se.String(), so.String())
	}
	if strings.Contains(so.String(), "Warning") {
		t.Fatalf("an exploring log was warned about:\n%s", so.String())
	}
	var doc struct {
		Events    int                  `json:"events"`
		Folds     int                  `json:"folds"`
		Weights   bandit.FusionWeights `json:"weights"`
		TornTails []string             `json:"torn_tails"`
		Estimates []struct {
			Policy string `json:"policy"`
			IPS    struct{ Value, Low, High float64 }
		} `json:"estimates"`
	}
	raw, err := os.ReadFile(filepath.Join(out, "replay.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.Events != 300 || len(doc.Estimates) != 3 {
		t.Fatalf("replay.json: %v, %d events, %d estimates", err, doc.Events, len(doc.Estimates))
	}
	if doc.Folds != 2 || doc.Weights != (bandit.FusionWeights{Semantic: 0.75, Bandit: 0.15, Prior: 0.10}) || len(doc.TornTails) != 1 || doc.TornTails[0] != torn {
		t.Fatalf("replay.json records folds %d, weights %+v, torn tails %v", doc.Folds, doc.Weights, doc.TornTails)
	}
	for _, e := range doc.Estimates {
		if !(e.IPS.Low <= e.IPS.Value && e.IPS.Value <= e.IPS.High) {
			t.Fatalf("%s: IPS %+v", e.Policy, e.IPS)
		}
	}
}

// Cross-fitting folds below 2, fusion weights that cannot fuse, an unknown reward and an --out
// below a regular file are refused before any log is read (the --log here does not exist),
// naming the flags.
func TestEvalReplayRefusesBadFoldsAndWeights(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	afile := filepath.Join(t.TempDir(), "afile")
	if err := os.WriteFile(afile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--folds", "0"}, "--folds 0: the doubly robust reward model needs at least 2 cross-fitting folds"},
		{[]string{"--folds", "1"}, "--folds 1: the doubly robust"},
		{[]string{"--folds", "-4"}, "--folds -4: the doubly robust"},
		{[]string{"--w-semantic", "0.8"}, "--w-semantic 0.8, --w-bandit 0.15, --w-prior 0.1: the fusion weights must sum to 1"},
		{[]string{"--w-bandit", "-0.1", "--w-semantic", "1"}, "--w-bandit -0.1: a fusion weight must be a finite number >= 0"},
		{[]string{"--w-prior", "NaN"}, "--w-prior NaN: a fusion weight must be a finite number >= 0"},
		{[]string{"--reward", "bogus"}, `--reward "bogus": must be auto, executed, task or served`},
		{[]string{"--out", filepath.Join(afile, "sub")}, "--out " + filepath.Join(afile, "sub") + ": " + afile + " is not a directory"},
	} {
		_, _, err := runRated(append([]string{"eval", "replay", "--log", missing, "--policies", "recommended"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}
