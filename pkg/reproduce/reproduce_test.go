package reproduce

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/report"
)

func TestNumber(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0.457", 0.457, true}, {"0.477*", 0.477, true}, {"83.4%", 83.4, true}, {"83.4 ± 0.3%", 83.4, true},
		{"<0.001", 0.001, true}, {" 12 ", 12, true}, {"–", 0, false}, {"(baseline)", 0, false}, {"BM25", 0, false},
	}
	for _, c := range cases {
		got, _, ok := number(c.in)
		if ok != c.ok || ok && math.Abs(got-c.want) > 1e-12 {
			t.Errorf("number(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestCompare(t *testing.T) {
	got := &report.Table{Columns: []string{"Retriever", "MRR", "p"}, Rows: [][]string{
		{"BM25", "0.457", "(baseline)"},
		{"TF-IDF", "0.480*", "0.0014"},
	}}
	exp := ExpectedTable{Tolerance: 0.002, Rows: map[string]map[string]string{
		"BM25":   {"MRR": "0.458", "p": "(baseline)"},
		"TF-IDF": {"MRR": "0.477", "p": "–"},
		"Dense":  {"MRR": "0.600"},
	}}
	lines := Compare("table1", exp, got)
	want := map[string]Status{"BM25/MRR": OK, "BM25/p": OK, "TF-IDF/MRR": Fail, "TF-IDF/p": Fail, "Dense/MRR": Missing}
	if len(lines) != len(want) {
		t.Fatalf("%d lines: %v", len(lines), lines)
	}
	for _, l := range lines {
		if w := want[l.Row+"/"+l.Column]; l.Status != w {
			t.Errorf("%s: %s, want %s", l, l.Status, w)
		}
	}
	var buf bytes.Buffer
	if Summarize(&buf, lines) {
		t.Error("a run with FAIL and MISSING cells passed")
	}
	for _, s := range []string{"[OK] table1 | BM25 | MRR: 0.457", "[FAIL] table1 | TF-IDF | MRR: expected 0.477, got 0.480* (+0.003)", "[MISSING] table1 | Dense | MRR", "2 OK, 2 FAIL, 1 MISSING"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, buf.String())
		}
	}
	// An informational table never fails.
	exp.Informational = true
	buf.Reset()
	if !Summarize(&buf, Compare("table3", exp, got)) {
		t.Errorf("informational table failed:\n%s", buf.String())
	}
	// A table that was not produced at all: every cell missing.
	for _, l := range Compare("table2", ExpectedTable{Rows: map[string]map[string]string{"x": {"y": "1"}}}, nil) {
		if l.Status != Missing {
			t.Errorf("%s", l)
		}
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	tab := &report.Table{Columns: []string{"Policy", "SR"}, Rows: [][]string{{"RATED (Full)", "83.4 ± 0.3%"}, {"Static", "70.0 ± 1.0%"}}}
	snap, err := Snapshot(tab, 0.005, false)
	if err != nil {
		t.Fatal(err)
	}
	e := &Expected{About: "test", Tables: map[string]ExpectedTable{"table2": snap}}
	path := filepath.Join(t.TempDir(), "expected.json")
	if err := e.Write(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadExpected(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if !Summarize(&buf, Compare("table2", back.Tables["table2"], tab)) || !strings.Contains(buf.String(), "2 OK") {
		t.Errorf("snapshot does not match its own table:\n%s", buf.String())
	}
	if _, err := DefaultExpected(); err != nil {
		t.Errorf("embedded expected values: %v", err)
	}
	if _, err := ReadExpected(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("missing file accepted")
	}
}

// A misspelt field, an unknown table name, trailing data or a negative tolerance is an error
// naming the file and the key; both shipped files decode strictly.
func TestParseExpectedStrict(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"tabels": {}}`, `exp.json: json: unknown field "tabels"`},
		{`{"tables": {"table1": {"tolerance": 0.001, "row": {"BM25": {"MRR": "0.5"}}}}}`, `exp.json: json: unknown field "row"`},
		{`{"tables": {"table1": {"tolerence": 0.001, "rows": {}}}}`, `unknown field "tolerence"`},
		{`{"tables": {"tabel2": {"rows": {}}}}`, `exp.json: tables: unknown table "tabel2"`},
		{`{"tables": {"table2": {"tolerance": -0.1, "rows": {}}}}`, `exp.json: tables.table2.tolerance -0.1: must be >= 0`},
		{`{"tables": {}} {}`, `exp.json: data after the JSON object`},
	} {
		if _, err := parseExpected([]byte(c.body), "exp.json"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.body, err, c.want)
		}
	}
	e, err := parseExpected([]byte(`{"about": "a", "tables": {"table1-syn": {"tolerance": 0.001, "retrievers": ["bm25"], "rows": {"BM25": {"MRR": "0.5"}}},
		"table3": {"tolerance": 0, "informational": true, "rows": {}}}}`), "exp.json")
	if err != nil || e.Tables["table1-syn"].Rows["BM25"]["MRR"] != "0.5" || !e.Tables["table3"].Informational {
		t.Errorf("valid file: %+v, %v", e, err)
	}
	if _, err := EcoAgentExpected(); err != nil {
		t.Errorf("embedded EcoAgent expected values: %v", err)
	}
	if _, err := DefaultExpected(); err != nil {
		t.Errorf("embedded default expected values: %v", err)
	}
}

// No compared cell at all fails the run: it checked nothing.
func TestSummarizeNothingCompared(t *testing.T) {
	var buf bytes.Buffer
	if Summarize(&buf, nil) {
		t.Error("a run with no compared cell passed")
	}
	if !strings.Contains(buf.String(), "no expected cell was compared") {
		t.Errorf("output: %s", buf.String())
	}
	if Summarize(&buf, Compare("table1", ExpectedTable{Rows: map[string]map[string]string{}}, &report.Table{Columns: []string{"R", "MRR"}, Rows: [][]string{{"BM25", "0.5"}}})) {
		t.Error("an expected table without rows passed")
	}
}

// An expected table without any cell is one MISSING line naming the table, not silence.
func TestCompareEmptyExpectedTable(t *testing.T) {
	lines := Compare("table2", ExpectedTable{Tolerance: 0.1, Rows: map[string]map[string]string{}}, &report.Table{Columns: []string{"Method", "SR"}, Rows: [][]string{{"Static", "40.0%"}}})
	if len(lines) != 1 || lines[0].Status != Missing || !strings.HasPrefix(lines[0].String(), "[MISSING] table2: the expected values hold no cell") {
		t.Errorf("lines %v", lines)
	}
}

// A significance or bound mark that appears, vanishes or flips fails the cell even when the
// number is within tolerance: "0.305*" claims a significant gain, "0.305" does not.
func TestCompareMarks(t *testing.T) {
	cases := []struct {
		want, got string
		status    Status
		note      string
	}{
		{"0.305*", "0.3052*", OK, ""},
		{"0.305*", "0.305", Fail, `marks differ: expected "…*", got none`},
		{"0.305", "0.305†", Fail, `marks differ: expected none, got "…†"`},
		{"0.305*", "0.305†", Fail, `marks differ: expected "…*", got "…†"`},
		{"<0.001", "0.001", Fail, `marks differ: expected "<…", got none`},
		{"<0.001", "<0.001", OK, ""},
		{"83.4 ± 0.3%", "83.5 ± 0.4%", OK, ""},
	}
	for _, c := range cases {
		got := &report.Table{Columns: []string{"Retriever", "MRR"}, Rows: [][]string{{"BM25", c.got}}}
		lines := Compare("table1", ExpectedTable{Tolerance: 0.1, Rows: map[string]map[string]string{"BM25": {"MRR": c.want}}}, got)
		if len(lines) != 1 || lines[0].Status != c.status || lines[0].Note != c.note {
			t.Errorf("expected %q, got %q: %+v; want %s %q", c.want, c.got, lines, c.status, c.note)
		}
	}
}

// Two regenerated rows of one name cannot be checked: each expected cell of that row fails with
// the reason, Cells and Snapshot refuse the table, and rows named by two key columns are apart.
func TestDuplicateRowNames(t *testing.T) {
	dup := &report.Table{Columns: []string{"Retriever", "MRR"}, Rows: [][]string{{"BM25", "0.500"}, {"TF-IDF", "0.4"}, {"BM25", "0.300"}}}
	lines := Compare("table1", ExpectedTable{Tolerance: 0.001, Rows: map[string]map[string]string{"BM25": {"MRR": "0.500"}, "TF-IDF": {"MRR": "0.4"}}}, dup)
	if len(lines) != 2 || lines[0].Status != Fail || lines[1].Status != OK ||
		lines[0].String() != `[FAIL] table1 | BM25 | MRR: expected 0.500: row "BM25" appears 2 times in the regenerated table: its cells cannot be told apart` {
		t.Errorf("lines %v", lines)
	}
	if _, err := Cells(dup); err == nil || err.Error() != `row "BM25" appears 2 times: rows of one name cannot be told apart` {
		t.Errorf("Cells: %v", err)
	}
	if _, err := Snapshot(dup, 0.001, false); err == nil {
		t.Error("Snapshot took a table with two rows of one name")
	}
	keyed := &report.Table{KeyColumns: 2, Columns: []string{"Feedback", "Method", "SR"}, Rows: [][]string{
		{"execution", "Static", "40.0%"}, {"task", "Static", "41.0%"}}}
	cells, err := Cells(keyed)
	if err != nil || len(cells) != 2 || cells["execution / Static"]["SR"] != "40.0%" || cells["task / Static"]["SR"] != "41.0%" || len(cells["task / Static"]) != 1 {
		t.Errorf("keyed cells %v, %v", cells, err)
	}
}
