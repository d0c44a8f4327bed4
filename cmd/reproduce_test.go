package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
)

// Table 1 only, lexical retrievers: a cell off by more than the tolerance fails the run and is
// printed with its difference; regenerating the expected values with --update then passes.
func TestReproduceTable1(t *testing.T) {
	dir := t.TempDir()
	expected := filepath.Join(dir, "expected.json")
	// BM25's MRR on the embedded default is not 0.999: this cell must fail.
	if err := os.WriteFile(expected, []byte(`{"tables": {"table1": {"tolerance": 0.001, "retrievers": ["tfidf", "bm25"],
		"rows": {"BM25": {"MRR": "0.999", "p t-test (MRR)": "(baseline)"}}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	stdout, stderr, err := runRated("reproduce", "--tables", "1", "--expected", expected, "--out", out)
	if err == nil {
		t.Fatalf("a wrong expected MRR passed:\n%s", stdout)
	}
	if !strings.Contains(stdout, "[FAIL] table1 | BM25 | MRR: expected 0.999, got 0.") || !strings.Contains(stdout, "[OK] table1 | BM25 | p t-test (MRR): (baseline)") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "table1", "table1.md")); err != nil {
		t.Errorf("table 1 not written under OUT/table1: %v", err)
	}
	updated := filepath.Join(dir, "updated.json")
	if _, stderr, err := runRated("reproduce", "--tables", "1", "--expected", expected, "--out", out, "--update", updated); err != nil {
		t.Fatalf("--update: %v\n%s", err, stderr)
	}
	stdout, stderr, err = runRated("reproduce", "--tables", "1", "--expected", updated, "--out", out)
	if err != nil || !strings.Contains(stdout, "0 FAIL, 0 MISSING") {
		t.Errorf("regenerated values do not reproduce: %v\n%s\n%s", err, stdout, stderr)
	}
}

// The shipped expected values (pkg/reproduce/expected/default.json) must still reproduce:
// Tables 1 and 2 on the embedded default with the installed encoders. A change that moves a
// published figure fails here until the expected file is regenerated and the diff reviewed.
func TestReproduceShippedExpectedValues(t *testing.T) {
	testassets.ORTLibrary(t)
	// Table 1's rows: the encoders of rated setup models and baselines (E5, SPLADE).
	for _, m := range []string{"bge-small-en-v1.5", "all-minilm-l6-v2", "e5-small-v2", "e5-small-v2-q", "splade-tiny"} {
		testassets.Model(t, m)
	}
	t.Setenv("RATED_HOME", testassets.Dir(t))
	stdout, stderr, err := runRated("reproduce", "--tables", "1,2", "--out", t.TempDir())
	if err != nil || !strings.Contains(stdout, " 0 FAIL, 0 MISSING") {
		var failed []string
		for _, line := range strings.Split(stdout, "\n") {
			if !strings.HasPrefix(line, "[OK]") {
				failed = append(failed, line)
			}
		}
		t.Fatalf("shipped expected values do not reproduce (%v):\n%s\nstderr tail:\n%s", err, strings.Join(failed, "\n"), stderr[max(0, len(stderr)-2000):])
	}
}

// The shipped EcoAgent release (data/ecoagent) must reproduce its expected values
// (pkg/reproduce/expected/ecoagent.json) without any LLM: Table 1 on its Syn and Real test splits
// (TF-IDF, the two BM25s, SPLADE, all-MiniLM-L6-v2 and its fusion with the English BM25) and Table 2
// on Real test (Syn test while the release has no Real) with all-MiniLM-L6-v2.
func TestReproduceEcoAgentRelease(t *testing.T) {
	testassets.ORTLibrary(t)
	testassets.Model(t, "all-minilm-l6-v2")
	testassets.Model(t, "splade-tiny")
	t.Setenv("RATED_HOME", testassets.Dir(t))
	stdout, stderr, err := runRated("reproduce", "--bench", "ecoagent", "--out", t.TempDir())
	if err != nil || !strings.Contains(stdout, " 0 FAIL, 0 MISSING") || !strings.Contains(stdout, "[OK] table1-syn | BM25 | MRR") {
		t.Fatalf("the EcoAgent release does not reproduce (%v):\n%s\nstderr tail:\n%s", err, stdout, stderr[max(0, len(stderr)-2000):])
	}
	// --release reads a folder instead of the embedded copy; a folder without syn/ is an error
	// naming it.
	if _, _, err := runRated("reproduce", "--bench", "ecoagent", "--release", t.TempDir(), "--out", t.TempDir()); err == nil || !strings.Contains(err.Error(), "syn") {
		t.Fatalf("empty release folder: %v", err)
	}
	if _, _, err := runRated("reproduce", "--bench", "nope"); err == nil || !strings.Contains(err.Error(), "default or ecoagent") {
		t.Fatalf("unknown bench: %v", err)
	}
}
