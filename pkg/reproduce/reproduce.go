// Package reproduce compares regenerated result tables with the expected values kept in the
// repository, cell by cell, the way Anserini's regressions do: every expected cell is printed as
// [OK] or with its difference, and a run passes only when every cell matches within the table's
// tolerance.
package reproduce

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rated-dev/rated/internal/atomicfile"
	"github.com/rated-dev/rated/pkg/report"
)

//go:embed expected/*.json
var embedded embed.FS

// Expected holds the expected tables by name ("table1", "table2", "table3").
type Expected struct {
	// About says how and where the values were produced.
	About  string                   `json:"about"`
	Tables map[string]ExpectedTable `json:"tables"`
}

// ExpectedTable holds one table's expected cells: row label (first column) -> column -> cell.
type ExpectedTable struct {
	// Tolerance is the largest absolute difference accepted between numeric cells.
	Tolerance float64 `json:"tolerance"`
	// Informational tables (latency: machine-dependent) are printed but never fail the run.
	Informational bool `json:"informational,omitempty"`
	// Retrievers are the registry names Table 1 is regenerated with (rated eval offline
	// --retrievers), in row order.
	Retrievers []string                     `json:"retrievers,omitempty"`
	Rows       map[string]map[string]string `json:"rows"`
}

// DefaultExpected returns the expected values of the embedded default benchmark
// (pkg/reproduce/expected/default.json).
func DefaultExpected() (*Expected, error) {
	raw, err := embedded.ReadFile("expected/default.json")
	if err != nil {
		return nil, err
	}
	return parseExpected(raw, "pkg/reproduce/expected/default.json")
}

// EcoAgentExpected returns the expected values of the shipped EcoAgent release (data/ecoagent),
// pkg/reproduce/expected/ecoagent.json.
func EcoAgentExpected() (*Expected, error) {
	raw, err := embedded.ReadFile("expected/ecoagent.json")
	if err != nil {
		return nil, err
	}
	return parseExpected(raw, "pkg/reproduce/expected/ecoagent.json")
}

// ReadExpected reads an expected-values file.
func ReadExpected(path string) (*Expected, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseExpected(raw, path)
}

// TableNames are the tables rated reproduce produces, the only keys an expected file's "tables"
// may hold.
var TableNames = []string{"table1", "table1-syn", "table1-real", "table2", "table3"}

// parseExpected decodes an expected-values file strictly: a misspelt field ("tabels", "row") or
// table name would otherwise leave cells silently unchecked.
func parseExpected(raw []byte, name string) (*Expected, error) {
	var e Expected
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: data after the JSON object", name)
	}
	if e.Tables == nil {
		e.Tables = map[string]ExpectedTable{}
	}
	for _, t := range slices.Sorted(maps.Keys(e.Tables)) {
		if !slices.Contains(TableNames, t) {
			return nil, fmt.Errorf("%s: tables: unknown table %q (want %s)", name, t, strings.Join(TableNames, ", "))
		}
		if tol := e.Tables[t].Tolerance; tol < 0 {
			return nil, fmt.Errorf("%s: tables.%s.tolerance %v: must be >= 0", name, t, tol)
		}
	}
	return &e, nil
}

// Write stores e as indented JSON, atomically.
func (e *Expected) Write(path string) error {
	raw, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, append(raw, '\n'))
}

// Cells indexes a table's cells by row name (its key columns, report.Table.RowKey) and column
// name. Two rows of one name are an error: a check of that name would see only one of them.
func Cells(t *report.Table) (map[string]map[string]string, error) {
	cells, rows := index(t)
	for _, name := range slices.Sorted(maps.Keys(rows)) {
		if rows[name] > 1 {
			return nil, fmt.Errorf("row %q appears %d times: rows of one name cannot be told apart", name, rows[name])
		}
	}
	return cells, nil
}

// index is Cells without the refusal: rows counts the rows of every name.
func index(t *report.Table) (cells map[string]map[string]string, rows map[string]int) {
	cells, rows = map[string]map[string]string{}, map[string]int{}
	for _, r := range t.Rows {
		if len(r) == 0 {
			continue
		}
		key := t.RowKey(r)
		rows[key]++
		row := map[string]string{}
		for i := t.Keys(); i < len(r) && i < len(t.Columns); i++ {
			row[t.Columns[i]] = r[i]
		}
		cells[key] = row
	}
	return cells, rows
}

// Status is the outcome of one cell.
type Status string

// Cell outcomes.
const (
	OK      Status = "OK"
	Fail    Status = "FAIL"
	Missing Status = "MISSING"
	Info    Status = "INFO"
)

// Line is one compared cell.
type Line struct {
	Status   Status
	Table    string
	Row      string
	Column   string
	Expected string
	Got      string
	Diff     float64 // got - expected, for numeric cells; NaN otherwise
	// Note says why a line failed when the values alone do not (a changed significance mark, a
	// row name that appears twice, a table with no expected cell).
	Note string
}

// String prints the line as "[OK] table1 | BM25 | MRR: 0.457" or with the difference.
func (l Line) String() string {
	if l.Row == "" && l.Column == "" { // a line about the whole table
		return fmt.Sprintf("[%s] %s: %s", l.Status, l.Table, l.Note)
	}
	where := fmt.Sprintf("%s | %s | %s", l.Table, l.Row, l.Column)
	var s string
	switch {
	case l.Status == OK:
		return fmt.Sprintf("[OK] %s: %s", where, l.Got)
	case l.Status == Missing:
		s = fmt.Sprintf("[MISSING] %s: expected %s, not produced", where, l.Expected)
	case l.Got == "" && l.Note != "":
		s = fmt.Sprintf("[%s] %s: expected %s", l.Status, where, l.Expected)
	case !math.IsNaN(l.Diff):
		s = fmt.Sprintf("[%s] %s: expected %s, got %s (%+.4g)", l.Status, where, l.Expected, l.Got, l.Diff)
	default:
		s = fmt.Sprintf("[%s] %s: expected %q, got %q", l.Status, where, l.Expected, l.Got)
	}
	if l.Note != "" {
		s += ": " + l.Note
	}
	return s
}

// number parses a table cell as a number: "0.457", "0.477*", "83.4%", "83.4 ± 0.3%" (the value
// before ±), "<0.001" (0.001). ok is false for anything else ("–", "(baseline)", text). marks are
// the cell's significance and bound marks around "…": the comparison before the number ("<" of
// "<0.001") and the marks at its end ("*" above the baseline, "†" below). Two cells within
// tolerance still differ when these do: "0.305*" and "0.305" make different claims.
func number(cell string) (v float64, marks string, ok bool) {
	s := strings.TrimSpace(cell)
	num := strings.TrimLeft(s, "<>≤≥")
	tail := strings.TrimRight(s, "%")
	marks = s[:len(s)-len(num)] + "…" + tail[len(strings.TrimRight(tail, "*†")):]
	if i := strings.Index(num, "±"); i >= 0 {
		num = num[:i]
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimRight(strings.TrimSpace(num), "*%†")), 64)
	return v, marks, err == nil
}

// describeMarks names a marks value for a message: "none", or the marks around "…".
func describeMarks(m string) string {
	if m == "…" {
		return "none"
	}
	return strconv.Quote(m)
}

// Compare checks every expected cell of table name against got (nil when the table was not
// produced). Rows and columns present in got but not expected are ignored. A numeric cell
// matches when it is within the tolerance and carries the same significance marks; an expected
// row whose name appears twice in got fails, and so does an expected table without any cell.
func Compare(name string, exp ExpectedTable, got *report.Table) []Line {
	status := func(s Status) Status {
		if exp.Informational && s != OK {
			return Info
		}
		return s
	}
	if len(exp.Rows) == 0 {
		return []Line{{Status: status(Missing), Table: name, Diff: math.NaN(),
			Note: "the expected values hold no cell for this table: nothing of it would be checked (rated reproduce --update FILE writes them)"}}
	}
	var cells map[string]map[string]string
	var rows map[string]int
	if got != nil {
		cells, rows = index(got)
	}
	var out []Line
	for _, row := range slices.Sorted(maps.Keys(exp.Rows)) {
		for _, col := range slices.Sorted(maps.Keys(exp.Rows[row])) {
			want := exp.Rows[row][col]
			l := Line{Table: name, Row: row, Column: col, Expected: want, Diff: math.NaN()}
			have, ok := cells[row][col]
			switch {
			case rows[row] > 1:
				l.Status = Fail
				l.Note = fmt.Sprintf("row %q appears %d times in the regenerated table: its cells cannot be told apart", row, rows[row])
			case !ok:
				l.Status = Missing
			default:
				l.Got = have
				wv, wm, wok := number(want)
				hv, hm, hok := number(have)
				switch {
				case wok && hok:
					l.Diff = hv - wv
					switch {
					case math.Abs(l.Diff) > exp.Tolerance+1e-12:
						l.Status = Fail
					case wm != hm:
						l.Status = Fail
						l.Note = fmt.Sprintf("marks differ: expected %s, got %s", describeMarks(wm), describeMarks(hm))
					default:
						l.Status = OK
					}
				case strings.TrimSpace(want) == strings.TrimSpace(have):
					l.Status = OK
				default:
					l.Status = Fail
				}
			}
			l.Status = status(l.Status)
			out = append(out, l)
		}
	}
	return out
}

// Snapshot turns a produced table into expected values with the given tolerance; a table with
// two rows of one name is refused (Cells).
func Snapshot(t *report.Table, tolerance float64, informational bool) (ExpectedTable, error) {
	rows, err := Cells(t)
	if err != nil {
		return ExpectedTable{}, err
	}
	return ExpectedTable{Tolerance: tolerance, Informational: informational, Rows: rows}, nil
}

// Summarize prints every line and a closing count, and reports whether every non-informational
// cell matched. No line at all (no expected cell for the tables compared) fails: a run that
// checked nothing proves nothing.
func Summarize(w io.Writer, lines []Line) bool {
	if len(lines) == 0 {
		fmt.Fprintln(w, "reproduce: no expected cell was compared: the expected values hold no rows for the regenerated tables")
		return false
	}
	counts := map[Status]int{}
	for _, l := range lines {
		fmt.Fprintln(w, l)
		counts[l.Status]++
	}
	fmt.Fprintf(w, "reproduce: %d OK, %d FAIL, %d MISSING, %d INFO\n", counts[OK], counts[Fail], counts[Missing], counts[Info])
	return counts[Fail] == 0 && counts[Missing] == 0
}
