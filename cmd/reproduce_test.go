package cmd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/reproduce"
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

// Every expected table is accounted for: one not asked for is an [INFO] line naming it, one of
// an asked-for table number that this benchmark does not produce (table1-real of the default)
// is MISSING cell by cell, and an expected table without any cell is MISSING as a whole.
func TestReproduceAccountsForEveryExpectedTable(t *testing.T) {
	t.Setenv("RATED_ASSETS", t.TempDir())
	dir := t.TempDir()
	expected := filepath.Join(dir, "expected.json")
	if err := os.WriteFile(expected, []byte(`{"tables": {
		"table1": {"tolerance": 0.001, "retrievers": ["tfidf", "bm25"], "rows": {"BM25": {"p t-test (MRR)": "(baseline)"}}},
		"table1-real": {"tolerance": 0.001, "rows": {"BM25": {"MRR": "0.165"}}},
		"table3": {"tolerance": 0, "informational": true, "rows": {"Encoder only": {"Mean (ms)": "1.0"}}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := runRated("reproduce", "--tables", "1", "--expected", expected, "--out", filepath.Join(dir, "out"))
	if err == nil {
		t.Fatalf("an expected table that was not produced passed:\n%s", stdout)
	}
	for _, want := range []string{"[OK] table1 | BM25 | p t-test (MRR): (baseline)", "[MISSING] table1-real | BM25 | MRR: expected 0.165, not produced",
		"[INFO] table3: not regenerated (--tables 1), its expected cells are not checked", "1 OK, 0 FAIL, 1 MISSING"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s\nstderr:\n%s", want, stdout, stderr)
		}
	}
	if err := os.WriteFile(expected, []byte(`{"tables": {"table1": {"tolerance": 0.001, "retrievers": ["tfidf", "bm25"], "rows": {}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, err = runRated("reproduce", "--tables", "1", "--expected", expected, "--out", filepath.Join(dir, "out"))
	if err == nil || !strings.Contains(stdout, "[MISSING] table1: the expected values hold no cell for this table") {
		t.Errorf("an expected table without cells: %v\n%s", err, stdout)
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

// Bad --tables, --latency-queries and --sizes values are refused before any work, naming the
// flag, and leave no output directory.
func TestReproduceRefusesBadFlagsBeforeWork(t *testing.T) {
	t.Setenv("RATED_ASSETS", t.TempDir())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tables", "4"}, "--tables 4: want 1, 2 or 3"},
		{[]string{"--tables", "0,5"}, "--tables 0: want 1, 2 or 3"},
		{[]string{"--tables", "1,2,5"}, "--tables 5: want 1, 2 or 3"},
		{[]string{"--tables", "1,1"}, "--tables 1: listed twice"},
		{[]string{"--latency-queries", "0"}, "--latency-queries 0: must be at least 1"},
		{[]string{"--tables", "3", "--latency-queries", "-2"}, "--latency-queries -2: must be at least 1"},
		{[]string{"--sizes", "5000,0"}, "--sizes 0: a catalog size must be positive"},
		{[]string{"--bench", "ecoagent", "--tables", "3"}, "--bench ecoagent has no Table 3"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		_, _, err := runRated(append([]string{"reproduce", "--out", out}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: --out exists after a refused run (%v)", c.args, err)
		}
	}
	// An expected file written inside --out was deleted by the next run, which replaces --out.
	out := filepath.Join(t.TempDir(), "out")
	update := filepath.Join(out, "table1", "expected.json")
	if _, _, err := runRated("reproduce", "--tables", "1", "--out", out, "--update", update); err == nil || !strings.Contains(err.Error(), "--update "+update+" is inside --out") {
		t.Errorf("--update inside --out: %v", err)
	}
}

// An expected file with a misspelt key is refused naming it; one whose tables hold no cell for
// the regenerated tables fails instead of passing with nothing checked.
func TestReproduceRefusesUncheckableExpected(t *testing.T) {
	t.Setenv("RATED_ASSETS", t.TempDir())
	dir := t.TempDir()
	for _, c := range []struct{ body, want string }{
		{`{"tabels": {"table1": {"tolerance": 0.001, "rows": {"BM25": {"MRR": "0.5"}}}}}`, `unknown field "tabels"`},
		{`{"tables": {"table1": {"tolerance": 0.001, "row": {"BM25": {"MRR": "0.5"}}}}}`, `unknown field "row"`},
		{`{"tables": {"tabel1": {"tolerance": 0.001, "rows": {"BM25": {"MRR": "0.5"}}}}}`, `unknown table "tabel1"`},
	} {
		expected := filepath.Join(dir, "e.json")
		os.WriteFile(expected, []byte(c.body), 0o644)
		_, _, err := runRated("reproduce", "--tables", "1", "--expected", expected, "--out", filepath.Join(dir, "out"))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), expected) {
			t.Errorf("%s: error %v, want %q naming the file", c.body, err, c.want)
		}
	}
	// Table 2's values only, Table 1 regenerated: no cell compared.
	expected := filepath.Join(dir, "e.json")
	os.WriteFile(expected, []byte(`{"tables": {"table2": {"tolerance": 0.1, "rows": {"X": {"Y": "1"}}}}}`), 0o644)
	stdout, _, err := runRated("reproduce", "--tables", "1", "--expected", expected, "--out", filepath.Join(dir, "out"))
	if err == nil || !strings.Contains(stdout, "no expected cell was compared") {
		t.Errorf("nothing compared: error %v\n%s", err, stdout)
	}
}

// --update with a subset of the tables keeps the other tables of the expected file as they were
// and replaces only the regenerated ones.
func TestReproduceUpdateKeepsOtherTables(t *testing.T) {
	t.Setenv("RATED_ASSETS", t.TempDir())
	dir := t.TempDir()
	expected := filepath.Join(dir, "expected.json")
	if err := os.WriteFile(expected, []byte(`{"about": "hand-written", "tables": {
		"table1": {"tolerance": 0.001, "retrievers": ["tfidf", "bm25"], "rows": {"BM25": {"MRR": "0.999"}}},
		"table2": {"tolerance": 0.1, "rows": {"RATED (Full)": {"AS": "83.4%"}}},
		"table3": {"tolerance": 0, "informational": true, "rows": {"Encoder only": {"Mean (ms)": "1.0"}}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := runRated("reproduce", "--tables", "1", "--expected", expected, "--update", expected, "--out", filepath.Join(dir, "out"))
	if err != nil {
		t.Fatalf("--update: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "3 tables") || !strings.Contains(stdout, "1 regenerated, 2 kept") {
		t.Errorf("stdout: %s", stdout)
	}
	got, err := reproduce.ReadExpected(expected)
	if err != nil {
		t.Fatal(err)
	}
	if r := got.Tables["table2"]; r.Tolerance != 0.1 || r.Rows["RATED (Full)"]["AS"] != "83.4%" || len(r.Rows) != 1 {
		t.Errorf("table2 not kept: %+v", r)
	}
	if r := got.Tables["table3"]; !r.Informational || r.Rows["Encoder only"]["Mean (ms)"] != "1.0" {
		t.Errorf("table3 not kept: %+v", r)
	}
	t1 := got.Tables["table1"]
	if mrr := t1.Rows["BM25"]["MRR"]; mrr == "" || mrr == "0.999" || len(t1.Rows) != 2 || !slices.Equal(t1.Retrievers, []string{"tfidf", "bm25"}) {
		t.Errorf("table1 not regenerated: %+v", t1)
	}
}
