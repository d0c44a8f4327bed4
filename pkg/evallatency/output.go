package evallatency

import (
	"fmt"
	"os"
	"strconv"

	"github.com/rated-dev/rated/pkg/provenance"
	"github.com/rated-dev/rated/pkg/report"
)

// Report is everything `rated eval latency` writes to table3.json.
type Report struct {
	Pipeline *Result     `json:"pipeline"`
	Search   []SearchRow `json:"search_sweep,omitempty"`
	Host     HostInfo    `json:"host"`
	// Provenance is the rated build, asset home, front end and encoder digests of the run.
	Provenance provenance.Record `json:"provenance"`
}

// HostInfo describes where the figures were measured.
type HostInfo struct {
	Device     string `json:"device"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUs       int    `json:"cpus"`
	GoVersion  string `json:"go_version"`
	Note       string `json:"note,omitempty"`
}

func f3(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }

// PipelineTable is Table 3: one row for the front end alone, one per policy.
func PipelineTable(r *Report) *report.Table {
	p := r.Pipeline
	t := &report.Table{
		Title:   fmt.Sprintf("Table 3: per-query latency, batch size 1 (%s, %d tools)", p.Frontend, p.Tools),
		Columns: []string{"Pipeline", "mean (ms)", "P95 (ms)", "policy overhead mean (ms)", "policy overhead P95 (ms)"},
	}
	for i, row := range p.Rows {
		om, op := f3(row.OverMean), f3(row.OverP95)
		if i == 0 {
			om, op = "–", "–"
		}
		t.Rows = append(t.Rows, []string{row.Name, f3(row.MeanMS), f3(row.P95MS), om, op})
	}
	t.Notes = []string{
		fmt.Sprintf("%d queries measured after %d warm-up queries, one at a time; top-%d candidates per query.", p.Queries, p.Warmup, p.K),
		"Encoding only: query embedding (or tokenisation) and exact top-K search. A policy row adds, per query, that policy's Choose and Observe calls on the same candidates; the overhead columns are the policy's time alone.",
		fmt.Sprintf("Policies learn from simulated outcomes (%.0f%% failures, seeded) so their updates run as in the dynamic experiment.", 100*p.Failure),
		fmt.Sprintf("Host: %s, GOMAXPROCS %d of %d CPUs, %s. %s", r.Host.Device, r.Host.GOMAXPROCS, r.Host.CPUs, r.Host.GoVersion, r.Host.Note),
	}
	return t
}

// SearchTable is the catalog-size sweep of exact top-K search.
func SearchTable(r *Report) *report.Table {
	t := &report.Table{
		Title:   "Table 3b: exact top-K search latency by catalog size (synthetic unit vectors, batch size 1)",
		Columns: []string{"Tools", "dim", "queries", "mean (ms)", "P95 (ms)"},
	}
	for _, s := range r.Search {
		t.Rows = append(t.Rows, []string{strconv.Itoa(s.Tools), strconv.Itoa(s.Dim), strconv.Itoa(s.Queries), f3(s.MeanMS), f3(s.P95MS)})
	}
	t.Notes = []string{"retrieve.Dense.SearchVector: one float32 matrix-vector product (gonum BLAS) and a bounded heap; the query embedding is not included.",
		fmt.Sprintf("Host: %s, GOMAXPROCS %d of %d CPUs, %s. %s", r.Host.Device, r.Host.GOMAXPROCS, r.Host.CPUs, r.Host.GoVersion, r.Host.Note)}
	return t
}

// WriteOutputs writes OUT/table3.{md,csv,json,tex} (table3.json holds the whole report) and,
// when the sweep ran, OUT/table3_search.{md,csv,tex}.
func WriteOutputs(dir string, r *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if err := report.WriteFiles(dir, "table3", PipelineTable(r), r); err != nil {
		return err
	}
	if len(r.Search) > 0 {
		return report.WriteFiles(dir, "table3_search", SearchTable(r), nil)
	}
	return nil
}
