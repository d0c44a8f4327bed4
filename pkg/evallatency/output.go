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
	// SweepFit, when the sweep drew from a mixture fitted to real embeddings, describes the fit.
	SweepFit *FitReport `json:"sweep_fit,omitempty"`
	Host     HostInfo   `json:"host"`
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

// SearchTable is the catalog-size sweep of top-K search methods.
func SearchTable(r *Report) *report.Table {
	t := &report.Table{
		Title:   "Table 3b: top-K search by catalog size (synthetic vectors)",
		Columns: []string{"Tools", "dim", "method", "batch", "queries", "mean (ms/query)", "median (ms/query)", "P95 (ms/query)", "recall@k vs exact", "build (s)", "index (MB)"},
	}
	warmups := map[int]bool{}
	for _, s := range r.Search {
		warmups[s.Warmup] = true
		t.Rows = append(t.Rows, []string{strconv.Itoa(s.Tools), strconv.Itoa(s.Dim), s.Method, strconv.Itoa(s.Batch), strconv.Itoa(s.Queries),
			f3(s.MeanMS), f3(s.MedianMS), f3(s.P95MS), f3(s.Recall), strconv.FormatFloat(s.BuildS, 'f', 1, 64), strconv.FormatFloat(s.IndexMB, 'f', 0, 64)})
	}
	t.Notes = []string{"exact float32: retrieve.Dense.SearchVector, one matrix-vector product (gonum BLAS) and a bounded heap per query; blocked batch: SearchVectors, a blocked matrix product (vecmath.DotBlock) over document blocks in parallel, per-query time = batch time / batch size; int8: retrieve.Int8Dense, an int8 scan of the whole catalog then float32 re-scoring of a shortlist; HNSW: retrieve.HNSW over github.com/coder/hnsw; IVF: retrieve.IVF, spherical k-means lists, int8 codes of the probed lists scanned, float32 re-scoring (index MB: centroids, lists and codes; the float32 matrix is kept for re-scoring). The query embedding is not included."}
	if len(warmups) == 1 {
		for w := range warmups {
			t.Notes = append(t.Notes, fmt.Sprintf("Each method's queries are measured after %d unmeasured warm-up queries of its own.", w))
		}
	}
	if f := r.SweepFit; f != nil {
		t.Notes = append(t.Notes, fmt.Sprintf("Vectors (catalogs and queries): draws from a Gaussian mixture fitted to %d real embeddings (%s): %d spherical k-means components, their member means and weights, one covariance pooled around them (effective rank %.1f), scaled to unit length. Neighbour profile, real vs as many draws: mean cosine of random pairs %.3f vs %.3f, of the nearest neighbour %.3f vs %.3f, of the %d-th %.3f vs %.3f.",
			f.Fitted, f.Source, f.Components, f.EffectiveRank, f.Real.Pairs, f.Synthetic.Pairs, f.Real.Nearest, f.Synthetic.Nearest, f.Real.K, f.Real.KthNear, f.Synthetic.KthNear))
	} else {
		t.Notes = append(t.Notes, "Vectors are seeded isotropic Gaussian directions on the unit sphere of the encoder's dimension, not real embeddings: they have no cluster structure, the hardest case for an approximate index.")
	}
	t.Notes = append(t.Notes, fmt.Sprintf("Host: %s, GOMAXPROCS %d of %d CPUs, %s. %s", r.Host.Device, r.Host.GOMAXPROCS, r.Host.CPUs, r.Host.GoVersion, r.Host.Note))
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
