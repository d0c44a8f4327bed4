package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
