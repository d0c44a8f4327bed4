package evaloffline

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rated-dev/rated/internal/atomicfile"
	"github.com/rated-dev/rated/pkg/metrics"
	"github.com/rated-dev/rated/pkg/report"
)

// RunFileName is the file name of a retriever's TREC run under OUT/runs/: its registry name with
// every character outside [A-Za-z0-9._-] replaced by "_", plus ".trec".
func RunFileName(name string) string {
	return unsafeChars.ReplaceAllString(name, "_") + ".trec"
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// QrelsFileName is the file name of the qrels written beside the runs.
func QrelsFileName(split string) string {
	return "qrels." + unsafeChars.ReplaceAllString(split, "_") + ".trec"
}

// WriteOutputs writes OUT/table1.{md,csv,json,tex}, OUT/per_query.csv, OUT/runs/<name>.trec per
// retriever and OUT/qrels.<split>.trec (the evaluated queries only, every judgment including
// grade 0), each atomically.
func WriteOutputs(dir string, res *Result) error {
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	var qrels strings.Builder
	for _, qid := range res.Queries {
		rel := res.qrels[qid]
		docs := make([]string, 0, len(rel))
		for d := range rel {
			docs = append(docs, d)
		}
		slices.Sort(docs)
		for _, d := range docs {
			fmt.Fprintf(&qrels, "%s 0 %s %d\n", qid, d, rel[d])
		}
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, QrelsFileName(res.Split)), []byte(qrels.String())); err != nil {
		return err
	}
	for _, sys := range res.Systems {
		var run strings.Builder
		tag := unsafeChars.ReplaceAllString(sys.Name, "_")
		for i, qid := range res.Queries {
			for rank, d := range sys.runs[i] {
				fmt.Fprintf(&run, "%s Q0 %s %d %s %s\n", qid, d.ID, rank+1, metrics.TrecScore(d.Score), tag)
			}
		}
		if err := atomicfile.WriteBytes(filepath.Join(dir, "runs", RunFileName(sys.Name)), []byte(run.String())); err != nil {
			return err
		}
	}
	var pq strings.Builder
	pq.WriteString("query_id,retriever," + strings.Join(res.Measures, ",") + ",returned\n")
	for _, sys := range res.Systems {
		for _, q := range sys.PerQuery {
			fmt.Fprintf(&pq, "%s,%s", csvField(q.QueryID), csvField(sys.Name))
			for _, m := range res.Measures {
				pq.WriteString("," + strconv.FormatFloat(q.Values[m], 'g', -1, 64))
			}
			fmt.Fprintf(&pq, ",%d\n", q.Returned)
		}
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, "per_query.csv"), []byte(pq.String())); err != nil {
		return err
	}
	return report.WriteFiles(dir, "table1", Table(res), res)
}

// csvField quotes a CSV field when needed (RFC 4180).
func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n\r") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// formatP prints a p-value with three significant digits, "<0.001" below 0.001 and "–" when
// undefined.
func formatP(p *float64) string {
	switch {
	case p == nil:
		return "–"
	case *p < 0.001:
		return "<0.001"
	}
	return strconv.FormatFloat(*p, 'g', 3, 64)
}

// Table builds Table 1: one row per retriever, one column per measure (three decimals), and
// the two p-values of the first measure against the baseline.
func Table(res *Result) *report.Table {
	t := &report.Table{Title: fmt.Sprintf("Table 1: offline retrieval, %s, %s split (%d queries)", res.Benchmark, res.Split, len(res.Queries))}
	t.Columns = append([]string{"Retriever"}, res.Measures...)
	first := res.Measures[0]
	if res.Baseline != "" {
		t.Columns = append(t.Columns, "p t-test ("+first+")", "p randomisation ("+first+")")
	}
	baseLabel := res.Baseline
	for _, sys := range res.Systems {
		if sys.Name == res.Baseline {
			baseLabel = sys.Label
		}
	}
	for _, sys := range res.Systems {
		row := []string{sys.Label}
		for _, m := range res.Measures {
			cell := strconv.FormatFloat(sys.Mean[m], 'f', 3, 64)
			// A star is earned: significantly above the baseline; significantly below is †.
			if st, ok := sys.Tests[m]; ok && st.PTTest != nil && *st.PTTest < 0.05 {
				if st.MeanDiff > 0 {
					cell += "*"
				} else {
					cell += "†"
				}
			}
			row = append(row, cell)
		}
		if res.Baseline != "" {
			if sys.Name == res.Baseline {
				row = append(row, "(baseline)", "(baseline)")
			} else {
				st := sys.Tests[first]
				row = append(row, formatP(st.PTTest), formatP(st.PRandomise))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	t.Notes = append(t.Notes, fmt.Sprintf("Queries: the %d queries of qrels/%s.tsv with at least one relevant tool (grade > 0). %d queries whose qrels list no relevant tool are not evaluated (they would score 0 for every retriever); queries absent from qrels/%s.tsv belong to other splits.",
		len(res.Queries), res.Split, len(res.NoRelevant), res.Split))
	if res.SampledFrom > 0 {
		t.Notes[len(t.Notes)-1] = fmt.Sprintf("Queries: a sample of %d (seed %d) of the %d queries of qrels/%s.tsv with at least one relevant tool (grade > 0), listed in table1.json. %d queries whose qrels list no relevant tool are not evaluated.",
			len(res.Queries), res.Seed, res.SampledFrom, res.Split, len(res.NoRelevant))
	}
	t.Notes = append(t.Notes, measureNotes(res.measures, res.Depth)...)
	var names []string
	for i, m := range res.Measures {
		if res.IRMeasures[i] != m {
			names = append(names, m+" = "+res.IRMeasures[i])
		}
	}
	if len(names) > 0 {
		t.Notes = append(t.Notes, "ir_measures names: "+strings.Join(names, ", ")+" (table1.json lists both, and the trec_eval names).")
	}
	var empty []string
	for _, sys := range res.Systems {
		if sys.EmptyRuns > 0 {
			empty = append(empty, fmt.Sprintf("%s %d", sys.Label, sys.EmptyRuns))
		}
	}
	emptyNote := "none"
	if len(empty) > 0 {
		emptyNote = strings.Join(empty, ", ")
	}
	t.Notes = append(t.Notes, "A query for which a retriever returns no tool scores 0 on every measure (trec_eval -c). Queries with no tool returned: "+emptyNote+".")
	var short []string
	for _, sys := range res.Systems {
		most := 0
		for _, q := range sys.PerQuery {
			most = max(most, q.Returned)
		}
		if most > 0 && most < res.Depth {
			short = append(short, fmt.Sprintf("%s (%d)", sys.Label, most))
		}
	}
	for _, sys := range res.Systems {
		if l := sys.Latency; l != nil {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: %s %.3f at %.0f ms per query on average (P95 %.0f ms) for the model's answer, %d queries (%d answered in this run, the rest read from the answer journal with the time recorded when they were asked).",
				sys.Label, res.Measures[0], sys.Mean[res.Measures[0]], l.MeanMS, l.P95MS, l.Queries, l.Fresh))
		}
	}
	if len(short) > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("Runs shorter than the depth %d (a reranker scores only its first stage's head, RATED ranks only the dense top-K, a lexical retriever returns only the tools that share a term with the query, and no run is longer than the catalog): %s tools at most per query. Their MRR and MAP count a relevant tool only within those.", res.Depth, strings.Join(short, ", ")))
	}
	if res.Baseline != "" {
		t.Notes = append(t.Notes, fmt.Sprintf("p: two-sided paired tests over the %d per-query values against %s: Student's paired t-test and a sign-flip randomisation test (%d rounds, seed %d). * marks a measure significantly above %s (paired t-test p < 0.05), † one significantly below. All p-values per measure: table1.json.",
			len(res.Queries), baseLabel, res.Rounds, res.Seed, baseLabel))
	}
	t.Notes = append(t.Notes, fmt.Sprintf("Rankings are those of runs/<retriever>.trec read by trec_eval (score descending, ties by tool id descending); check with: trec_eval -c %s %s runs/<retriever>.trec", TrecEvalArgs(res.measures), QrelsFileName(res.Split)))
	return t
}

// measureNotes defines the table's measures, one note per family present, in the order the
// families first appear.
func measureNotes(measures []metrics.Measure, depth int) []string {
	names := map[metrics.Kind][]string{}
	cut, whole := map[metrics.Kind]bool{}, map[metrics.Kind]bool{}
	var order []metrics.Kind
	for _, m := range measures {
		if names[m.Kind] == nil {
			order = append(order, m.Kind)
		}
		names[m.Kind] = append(names[m.Kind], m.String())
		cut[m.Kind] = cut[m.Kind] || m.K > 0
		whole[m.Kind] = whole[m.Kind] || m.K == 0
	}
	// within says which ranks MRR and MAP count: the run's depth, the cutoff k, or both.
	within := func(k metrics.Kind, name string) string {
		switch {
		case cut[k] && whole[k]:
			return fmt.Sprintf("within the top %d, or the top k for %s@k", depth, name)
		case cut[k]:
			return "within the top k"
		}
		return fmt.Sprintf("within the top %d", depth)
	}
	var notes []string
	for _, k := range order {
		var def string
		switch k {
		case metrics.RR:
			def = "mean reciprocal rank of the first relevant tool " + within(k, "MRR") + " (0 when none is retrieved; MRR is trec_eval's recip_rank; MRR@k, cut at rank k, is ir_measures' RR@k and has no trec_eval measure)."
		case metrics.Recall:
			def = "fraction of the query's relevant tools found in the top k (trec_eval recall.k)."
		case metrics.Hit:
			def = "1 if at least one relevant tool is in the top k, else 0 (trec_eval success.k); equal to Recall@k when a query has exactly one relevant tool, as in the paper."
		case metrics.NDCG:
			def = "graded relevance as gain, log2(rank+1) discount, normalised by the ideal ranking's (trec_eval ndcg_cut.k)."
		case metrics.AP:
			def = "mean over queries of the average precision: precision at the rank of each relevant tool, 0 for those not retrieved, averaged over all the query's relevant tools, " + within(k, "MAP") + " (trec_eval map, map_cut.k)."
		case metrics.Precision:
			def = "relevant tools in the top k divided by k, even when fewer tools are returned (trec_eval P.k)."
		default:
			continue
		}
		notes = append(notes, strings.Join(names[k], ", ")+": "+def)
	}
	return notes
}

// TrecEvalArgs returns the trec_eval -m options computing measures (those with a trec_eval
// equivalent), cutoffs of one family grouped: "-m recip_rank -m recall.1,5,10 -m ndcg_cut.10".
func TrecEvalArgs(measures []metrics.Measure) string {
	var families []string
	cutoffs := map[string][]string{}
	for _, m := range measures {
		name := m.TrecEvalName()
		if name == "" {
			continue
		}
		family, k := name, ""
		if i := strings.LastIndex(name, "_"); i > 0 && m.Kind != metrics.RR {
			family, k = name[:i], name[i+1:]
		}
		if _, ok := cutoffs[family]; !ok {
			families = append(families, family)
		}
		if k != "" {
			cutoffs[family] = append(cutoffs[family], k)
		} else if cutoffs[family] == nil {
			cutoffs[family] = []string{}
		}
	}
	args := make([]string, len(families))
	for i, f := range families {
		args[i] = "-m " + f
		if ks := cutoffs[f]; len(ks) > 0 {
			args[i] += "." + strings.Join(ks, ",")
		}
	}
	return strings.Join(args, " ")
}
