// Package evaloffline is the offline evaluation of RATED's first stage (the paper's Table 1): every
// configured retriever ranks the tools for each query of one split of a BEIR-layout benchmark;
// the rankings are scored with pkg/metrics (trec_eval semantics), compared with a baseline by
// paired significance tests, and written as a table plus TREC run and qrels files, so that
// trec_eval, pytrec_eval, ir_measures or ranx can check every number.
//
// Which queries count: the queries of the split's qrels with at least one relevant tool
// (grade > 0), in queries.jsonl order. Queries whose qrels hold no relevant tool are left out of
// every mean (they would score 0 for every retriever) and listed in the result. A retriever that
// returns nothing for a query scores 0 on every measure for it (trec_eval -c). Runs are cut at
// Config.Depth and ranked as trec_eval reads the run files: score descending, ties by tool id
// descending.
package evaloffline

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/metrics"
	"github.com/rated-dev/rated/pkg/provenance"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// MaxRounds bounds Config.Rounds, the randomisation test's sign assignments per comparison.
const MaxRounds = 10_000_000

// Config selects what is evaluated and how.
type Config struct {
	// Split is the qrels split evaluated (qrels/<Split>.tsv).
	Split string
	// Retrievers are registry names, evaluated and listed in this order.
	Retrievers []string
	// Baseline is the registry name the others are tested against ("" for no tests); it must be
	// one of Retrievers.
	Baseline string
	// Depth is how many tools each retriever returns per query (the run depth).
	Depth int
	// Measures are the measures reported, in column order.
	Measures []metrics.Measure
	// Rounds is the number of sign assignments of the randomisation test.
	Rounds int
	// Seed seeds the randomisation test (one stream per retriever and measure) and the query
	// sample.
	Seed uint64
	// Sample, when > 0, evaluates a seeded sample of this many of the split's queries with a
	// relevant tool (in queries.jsonl order) instead of all of them: for costly retrievers.
	Sample int
}

// DefaultMeasures are the columns of Table 1: the paper's MRR, Recall@1 and Recall@5, plus
// Recall@10, Hit@1, Hit@5, nDCG@10, MAP and P@5.
func DefaultMeasures() []metrics.Measure {
	return []metrics.Measure{
		{Kind: metrics.RR}, {Kind: metrics.Recall, K: 1}, {Kind: metrics.Recall, K: 5}, {Kind: metrics.Recall, K: 10},
		{Kind: metrics.Hit, K: 1}, {Kind: metrics.Hit, K: 5}, {Kind: metrics.NDCG, K: 10},
		{Kind: metrics.AP}, {Kind: metrics.Precision, K: 5},
	}
}

// DefaultConfig evaluates TF-IDF and BM25 on the test split against BM25, run depth 100,
// 10,000 randomisation rounds, seed 1.
func DefaultConfig() Config {
	return Config{Split: "test", Retrievers: []string{"tfidf", "bm25"}, Baseline: "bm25", Depth: 100,
		Measures: DefaultMeasures(), Rounds: 10000, Seed: 1}
}

// Result is the outcome of an evaluation; it is also the JSON written to table1.json.
type Result struct {
	Benchmark string   `json:"benchmark"`
	Split     string   `json:"split"`
	Depth     int      `json:"depth"`
	Measures  []string `json:"measures"`
	// IRMeasures names each measure of Measures as ir_measures and ranx do (RR, R@5, nDCG@10,
	// AP, P@5, Success@1), in the same order.
	IRMeasures []string `json:"ir_measures"`
	// TrecEval names each measure as trec_eval and pytrec_eval do (recip_rank, recall_5, map,
	// P_5), in the same order ("" where trec_eval has none).
	TrecEval []string `json:"trec_eval"`
	Baseline string   `json:"baseline,omitempty"`
	Rounds   int      `json:"randomisation_rounds"`
	Seed     uint64   `json:"seed"`
	// Queries are the evaluated query ids, in queries.jsonl order.
	Queries []string `json:"queries"`
	// SampledFrom is the number of queries with a relevant tool the sample was drawn from (0: no
	// sample, every one is evaluated).
	SampledFrom int `json:"sampled_from,omitempty"`
	// NoRelevant are the query ids of the split whose qrels hold no relevant tool (not evaluated).
	NoRelevant []string `json:"queries_without_relevant"`
	Systems    []System `json:"systems"`
	// Warnings are the benchmark reader's non-fatal findings.
	Warnings []string `json:"warnings,omitempty"`
	// Provenance is the rated build and asset home of the run (set by the caller); each system
	// records its own encoder.
	Provenance provenance.Record `json:"provenance"`

	qrels    bench.Qrels
	measures []metrics.Measure
}

// System is one retriever's results.
type System struct {
	// Name is the registry name (also the run file name and the TREC run tag).
	Name string `json:"name"`
	// Label is the retriever's own name, shown in the table.
	Label string `json:"label"`
	// Mean is the mean of each measure over the evaluated queries.
	Mean map[string]float64 `json:"mean"`
	// EmptyRuns counts the evaluated queries for which the retriever returned nothing.
	EmptyRuns int `json:"empty_runs"`
	// Encoder identifies the encoder behind a dense retriever (model folder and file digests, or
	// endpoint); absent for lexical retrievers.
	Encoder *provenance.Encoder `json:"encoder,omitempty"`
	// Latency is the time per query of a retriever that measures it (the LLM reranker).
	Latency *Latency `json:"latency,omitempty"`
	// Tests are the paired tests against the baseline, by measure (absent for the baseline).
	Tests map[string]Significance `json:"tests,omitempty"`
	// PerQuery holds each evaluated query's measures, in Result.Queries order.
	PerQuery []QueryScores `json:"per_query"`

	runs [][]metrics.ScoredDoc // per evaluated query, in trec_eval order
}

// QueryScores are one query's measures for one retriever.
type QueryScores struct {
	QueryID string             `json:"query_id"`
	Values  map[string]float64 `json:"values"`
	// Returned is how many tools the retriever returned (at most Depth).
	Returned int `json:"returned"`
}

// Significance holds the two paired tests of one measure against the baseline. Values that are
// undefined (identical per-query scores) are null in JSON.
type Significance struct {
	MeanDiff   float64  `json:"mean_diff"`
	T          *float64 `json:"t"`
	PTTest     *float64 `json:"p_ttest"`
	PRandomise *float64 `json:"p_randomisation"`
}

// finite returns &x, or nil for NaN and ±Inf (which JSON cannot hold).
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// sample keeps n of the queries, drawn by a PCG(seed, 0x5a3b1e) permutation, in their order.
func sample(ids, texts []string, n int, seed uint64) ([]string, []string) {
	keep := rand.New(rand.NewPCG(seed, 0x5a3b1e)).Perm(len(ids))[:n]
	slices.Sort(keep)
	outIDs, outTexts := make([]string, n), make([]string, n)
	for i, j := range keep {
		outIDs[i], outTexts[i] = ids[j], texts[j]
	}
	return outIDs, outTexts
}

// searchAll runs every query through r, batched when r supports it.
func searchAll(r retrieve.Retriever, queries []string, k int) ([][]retrieve.Candidate, error) {
	return retrieve.SearchAll(r, queries, k)
}

// Check refuses numbers that cannot run (named by their `rated eval offline` flags); validate
// calls it, and the command calls it before reading the benchmark.
func (c Config) Check() error {
	switch {
	case c.Depth <= 0:
		return fmt.Errorf("--depth %d: the run depth must be positive", c.Depth)
	case c.Rounds < 0 || (c.Baseline != "" && c.Rounds < 1):
		return fmt.Errorf("--rounds %d: the randomisation test against the baseline needs at least 1 round", c.Rounds)
	case c.Rounds > MaxRounds:
		// The test runs without a context check: a bound keeps an interrupt within seconds.
		return fmt.Errorf("--rounds %d: at most %d (p-values resolve to 1e-7 there)", c.Rounds, MaxRounds)
	}
	// A cutoff beyond the run depth would be computed on the first Depth tools and mislabelled;
	// a measure listed twice would be summed into one column twice.
	seen := map[string]bool{}
	for _, m := range c.Measures {
		if seen[m.String()] {
			return fmt.Errorf("--measures: %s listed twice", m)
		}
		seen[m.String()] = true
		if m.K > c.Depth {
			return fmt.Errorf("--measures %s: cutoff %d is above --depth %d (each run holds at most %d tools): raise --depth or lower the cutoff", m, m.K, c.Depth, c.Depth)
		}
	}
	return nil
}

// validate checks cfg against the registry and the benchmark before any retriever is built.
func validate(cfg Config, reg *Registry, env Env) error {
	b := env.Bench
	if len(cfg.Retrievers) == 0 {
		return errors.New("no retriever to evaluate")
	}
	seen, files := map[string]bool{}, map[string]string{}
	for _, name := range cfg.Retrievers {
		if seen[name] {
			return fmt.Errorf("retriever %q listed twice", name)
		}
		seen[name] = true
		// Two names whose run files would be one (dense:col/x/y and dense:col/x_y).
		if other, ok := files[RunFileName(name)]; ok {
			return fmt.Errorf("retrievers %q and %q would both write runs/%s: name one of their folders otherwise", other, name, RunFileName(name))
		}
		files[RunFileName(name)] = name
		if err := reg.Check(name, env); err != nil {
			return err
		}
	}
	if cfg.Baseline != "" && !seen[cfg.Baseline] {
		return fmt.Errorf("baseline %q is not among the evaluated retrievers %v", cfg.Baseline, cfg.Retrievers)
	}
	if err := cfg.Check(); err != nil {
		return err
	}
	if cfg.Sample < 0 {
		return fmt.Errorf("query sample %d: must be positive (0: every query)", cfg.Sample)
	}
	if len(cfg.Measures) == 0 {
		return errors.New("no measure to report")
	}
	if _, ok := b.Splits[cfg.Split]; !ok {
		var have []string
		for s := range b.Splits {
			have = append(have, s)
		}
		slices.Sort(have)
		return fmt.Errorf("split %q: no qrels/%s.tsv (have %s)", cfg.Split, cfg.Split, strings.Join(have, ", "))
	}
	for _, d := range b.Corpus {
		if hasSpace(d.ID) {
			return fmt.Errorf("corpus.jsonl: tool id %q contains white space and cannot be written to a TREC run file", d.ID)
		}
	}
	for _, q := range b.Queries {
		if hasSpace(q.ID) {
			return fmt.Errorf("queries.jsonl: query id %q contains white space and cannot be written to a TREC run file", q.ID)
		}
	}
	return nil
}

func hasSpace(s string) bool { return strings.IndexFunc(s, unicode.IsSpace) >= 0 }

// Run evaluates every retriever of cfg on split cfg.Split of env.Bench; benchName labels the
// outputs. Retrievers are built through reg one at a time and closed (when io.Closer) after use.
func Run(env Env, benchName string, reg *Registry, cfg Config) (*Result, error) {
	b := env.Bench
	if env.Log == nil {
		env.Log = io.Discard
	}
	if err := validate(cfg, reg, env); err != nil {
		return nil, err
	}
	qrels := b.Splits[cfg.Split]
	res := &Result{Benchmark: benchName, Split: cfg.Split, Depth: cfg.Depth, Baseline: cfg.Baseline,
		Rounds: cfg.Rounds, Seed: cfg.Seed, Warnings: b.Warnings, qrels: qrels, measures: cfg.Measures,
		Queries: []string{}, NoRelevant: []string{}}
	for _, m := range cfg.Measures {
		res.Measures = append(res.Measures, m.String())
		res.IRMeasures = append(res.IRMeasures, m.IRMeasuresName())
		res.TrecEval = append(res.TrecEval, m.TrecEvalName())
	}
	var texts []string
	for _, q := range b.Queries {
		rel, inSplit := qrels[q.ID]
		if !inSplit {
			continue
		}
		relevant := false
		for _, g := range rel {
			relevant = relevant || g > 0
		}
		if !relevant {
			res.NoRelevant = append(res.NoRelevant, q.ID)
			continue
		}
		res.Queries = append(res.Queries, q.ID)
		texts = append(texts, q.Text)
	}
	if len(res.Queries) == 0 {
		return nil, fmt.Errorf("split %q: no query has a relevant tool in qrels/%s.tsv", cfg.Split, cfg.Split)
	}
	switch {
	case cfg.Sample > 0 && cfg.Sample < len(res.Queries):
		res.SampledFrom = len(res.Queries)
		res.Queries, texts = sample(res.Queries, texts, cfg.Sample, cfg.Seed)
	case cfg.Sample > 0:
		fmt.Fprintf(env.Log, "eval offline: a sample of %d is not smaller than the %d queries with a relevant tool: every query is evaluated\n", cfg.Sample, len(res.Queries))
	}
	fmt.Fprintf(env.Log, "eval offline: %s, split %s: %d queries with a relevant tool (%d without, not evaluated), %d tools\n",
		benchName, cfg.Split, len(res.Queries), len(res.NoRelevant), len(b.Corpus))
	for _, name := range cfg.Retrievers {
		if env.Ctx != nil && env.Ctx.Err() != nil {
			return nil, env.Ctx.Err()
		}
		sys, err := evaluateOne(env, reg, name, texts, res, cfg)
		if err != nil {
			return nil, err
		}
		res.Systems = append(res.Systems, sys)
		fmt.Fprintf(env.Log, "eval offline: %s (%s): %s %.3f, %d empty runs\n", name, sys.Label,
			res.Measures[0], sys.Mean[res.Measures[0]], sys.EmptyRuns)
	}
	labelApart(res.Systems)
	if cfg.Baseline != "" {
		if err := addTests(res, cfg); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// labelApart adds the registry name to every label that two systems share: bm25:eps=0.1 and
// bm25:eps=0.5 are both "BM25 (k1=1.5, b=0.75)" (the label omits epsilon), and a table's rows
// are told apart by label.
func labelApart(systems []System) {
	count := map[string]int{}
	for _, s := range systems {
		count[s.Label]++
	}
	for i, s := range systems {
		if count[s.Label] > 1 {
			systems[i].Label = s.Label + " [" + s.Name + "]"
		}
	}
}

// evaluateOne builds, runs and scores one retriever.
func evaluateOne(env Env, reg *Registry, name string, texts []string, res *Result, cfg Config) (System, error) {
	r, err := reg.Build(name, env)
	if err != nil {
		return System{}, err
	}
	if c, ok := r.(io.Closer); ok {
		defer c.Close()
	}
	cands, err := searchAll(r, texts, cfg.Depth)
	if err != nil {
		return System{}, fmt.Errorf("retriever %s: %w", name, err)
	}
	if len(cands) != len(texts) {
		return System{}, fmt.Errorf("retriever %s: %d result lists for %d queries", name, len(cands), len(texts))
	}
	sys := System{Name: name, Label: r.Name(), Mean: map[string]float64{}, Encoder: provenance.EncoderOf(r), Latency: latencyOf(r)}
	for i, qid := range res.Queries {
		if len(cands[i]) > cfg.Depth {
			cands[i] = cands[i][:cfg.Depth]
		}
		run := make([]metrics.ScoredDoc, len(cands[i]))
		for j, c := range cands[i] {
			run[j] = metrics.ScoredDoc{ID: c.ID, Score: c.Score}
		}
		ordered := metrics.TrecOrderScored(run)
		ranking := make([]string, len(ordered))
		for j, d := range ordered {
			ranking[j] = d.ID
		}
		sys.runs = append(sys.runs, ordered)
		if len(ranking) == 0 {
			sys.EmptyRuns++
		}
		qs := QueryScores{QueryID: qid, Values: make(map[string]float64, len(res.measures)), Returned: len(ranking)}
		values := metrics.EvalAll(res.measures, ranking, metrics.Judgments(res.qrels[qid]))
		for mi, v := range values {
			qs.Values[res.Measures[mi]] = v
			sys.Mean[res.Measures[mi]] += v
		}
		sys.PerQuery = append(sys.PerQuery, qs)
	}
	for k := range sys.Mean {
		sys.Mean[k] /= float64(len(res.Queries))
	}
	return sys, nil
}

// addTests runs both paired tests of every measure for every system against the baseline.
func addTests(res *Result, cfg Config) error {
	var base *System
	for i := range res.Systems {
		if res.Systems[i].Name == cfg.Baseline {
			base = &res.Systems[i]
		}
	}
	for i := range res.Systems {
		sys := &res.Systems[i]
		if sys == base {
			continue
		}
		sys.Tests = map[string]Significance{}
		for _, m := range res.Measures {
			a, b := column(sys, m), column(base, m)
			tt, err := metrics.PairedTTest(a, b)
			if err != nil {
				return fmt.Errorf("%s vs %s, %s: %w", sys.Name, base.Name, m, err)
			}
			h := fnv.New64a()
			h.Write([]byte(sys.Name + "\x00" + base.Name + "\x00" + m))
			rt, err := metrics.PairedRandomization(a, b, cfg.Rounds, rand.New(rand.NewPCG(cfg.Seed, h.Sum64())))
			if err != nil {
				return fmt.Errorf("%s vs %s, %s: %w", sys.Name, base.Name, m, err)
			}
			sys.Tests[m] = Significance{MeanDiff: tt.MeanDiff, T: finite(tt.Statistic), PTTest: finite(tt.P), PRandomise: finite(rt.P)}
		}
	}
	return nil
}

// column returns one measure over the evaluated queries.
func column(s *System, measure string) []float64 {
	out := make([]float64, len(s.PerQuery))
	for i, q := range s.PerQuery {
		out[i] = q.Values[measure]
	}
	return out
}
