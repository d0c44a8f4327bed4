package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without an installed encoder (empty asset home) the command refuses to run, naming the home and
// `rated setup models`; --retriever bm25 times BM25 + hashed bag of words.
func TestEvalLatencyCommandLexical(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("RATED_HOME", empty)
	dir := writeBench(t, goodBenchFiles())
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"eval", "latency", "--bench", dir, "--out", out, "--queries", "30", "--warmup", "3", "--sizes", "50,200", "--sweep-queries", "5"}
	if _, _, err := runRated(args...); err == nil || !strings.Contains(err.Error(), "rated setup models") || !strings.Contains(err.Error(), empty) {
		t.Fatalf("no encoder installed: want an error naming the home and rated setup models, got %v", err)
	}
	stdout, stderr, err := runRated(append(args, "--retriever", "bm25")...)
	if err != nil {
		t.Fatalf("eval latency: %v\n%s", err, stderr)
	}
	for _, s := range []string{"Encoding only (BM25 + hashed-bow-384", "+ RATED (Full)", "+ RATED-R (recommended)", "+ RATED (w/o Feedback)", "+ RATED (w/ Global MAB)", "+ ToolRL-like Batch GRPO", "| 200 "} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
	for _, f := range []string{"table3.md", "table3.csv", "table3.json", "table3.tex", "table3_search.md"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	if _, _, err := runRated("eval", "latency", "--bench", dir, "--out", out, "--policies", "Nope"); err == nil || !strings.Contains(err.Error(), `"Nope" is not a policy`) {
		t.Errorf("unknown policy: %v", err)
	}
}
