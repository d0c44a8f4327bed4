package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without an installed encoder (empty asset folder) the command times BM25 + hashed bag of words.
func TestEvalLatencyCommandLexical(t *testing.T) {
	t.Setenv("RATED_ASSETS", t.TempDir())
	dir := writeBench(t, goodBenchFiles())
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, err := runRated("eval", "latency", "--bench", dir, "--out", out, "--queries", "30", "--warmup", "3",
		"--sizes", "50,200", "--sweep-queries", "5")
	if err != nil {
		t.Fatalf("eval latency: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "no encoder installed") {
		t.Errorf("the lexical fallback was not announced:\n%s", stderr)
	}
	for _, s := range []string{"Encoding only (BM25 + hashed-bow-384", "+ RATED (Full)", "+ RATED (w/o Feedback)", "+ RATED (w/ Global MAB)", "+ ToolRL-like Batch GRPO", "| 200 "} {
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
