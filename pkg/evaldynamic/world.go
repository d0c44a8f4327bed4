package evaldynamic

import (
	"fmt"
	"math"
	"sort"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/retrieve"
	"github.com/rated-dev/rated/pkg/sim"
)

// Resources are the parts a dynamic evaluation runs on; the caller chooses them (BM25 and hashed
// contexts, or a dense encoder for both).
type Resources struct {
	Bench      *bench.Bench
	BenchName  string
	Retriever  retrieve.Retriever
	Vectorizer retrieve.QueryVectorizer
	// Dense says the retriever's scores are cosines (no normalisation needed under "auto").
	Dense bool
	// Similarity scores name–description consistency for the prior (nil: lexical fallback).
	Similarity catalog.Similarity
}

// WorldInfo describes the prepared world for the outputs.
type WorldInfo struct {
	Bench       string  `json:"bench"`
	Tools       int     `json:"tools"`
	Queries     int     `json:"queries"`
	Split       string  `json:"split"`
	Retriever   string  `json:"retriever"`
	Context     string  `json:"context"`
	ContextDim  int     `json:"context_dim"`
	PriorMethod string  `json:"prior_consistency_method"`
	MeanPrior   float64 `json:"mean_prior"`
	HighPrior   int     `json:"tools_prior_at_least_0_8"`
	Depth       int     `json:"ranking_depth"`
	// ContextCentering says where the mean subtracted from the contexts came from ("" = none).
	ContextCentering string `json:"context_centering,omitempty"`
	// RecallAtK is the share of queries with a relevant tool in the top K: the ceiling on SR.
	RecallAtK float64 `json:"hit_at_k"`
	// Providers counts the providers (endpoint hosts, n8n nodes) and how many tools share one.
	Providers       int `json:"providers"`
	SharedProviders int `json:"tools_sharing_a_provider"`
	// Calibration describes the fit of P(relevant | retrieval features) ("" when none).
	Calibration string             `json:"calibration,omitempty"`
	Calibrator  *bandit.Calibrator `json:"calibrator,omitempty"`
}

// BuildWorld retrieves the ranking and the context of every evaluation query once, and computes
// the static prior of every tool from its catalog fields.
func BuildWorld(res Resources, cfg *Config) (*sim.World, WorldInfo, error) {
	b := res.Bench
	info := WorldInfo{Bench: res.BenchName, Tools: len(b.Corpus), Split: cfg.Dynamic.Split,
		Retriever: res.Retriever.Name(), Context: res.Vectorizer.Name(), ContextDim: res.Vectorizer.Dim()}
	toolIndex := make(map[string]int, len(b.Corpus))
	for i, d := range b.Corpus {
		toolIndex[d.ID] = i
	}
	tools, method, err := toolPriors(b, cfg.Prior, res.Similarity)
	if err != nil {
		return nil, info, err
	}
	priors := make([]float64, len(tools))
	for i := range tools {
		priors[i] = tools[i].Prior.Value
	}
	info.PriorMethod = method
	for _, p := range priors {
		info.MeanPrior += p / float64(len(priors))
		if p >= 0.8 {
			info.HighPrior++
		}
	}
	if err := CheckBench(b, res.BenchName, cfg); err != nil {
		return nil, info, err
	}
	// A query without a relevant tool can never succeed: it would only lower every policy's SR.
	queries := b.RelevantQueries(cfg.Dynamic.Split)
	// Rank deeper than K when tools can be hidden (cold start), so K existing ones remain.
	depth := cfg.Retrieval.K
	for _, sc := range cfg.Scenarios {
		for _, e := range sc.Events {
			if e.Kind == sim.EventNewTools {
				depth = max(depth, cfg.Retrieval.K+int(float64(len(b.Corpus))*e.Select.Fraction)+1)
			}
		}
	}
	depth = min(depth, len(b.Corpus))
	info.Depth = depth
	norm := cfg.Retrieval.SemanticNorm
	if norm == "auto" {
		norm = "max"
		if res.Dense {
			norm = "none"
		}
	}
	w := &sim.World{NumTools: len(b.Corpus), Dim: res.Vectorizer.Dim()}
	w.Providers, w.ProviderNames = providers(tools)
	info.Providers = len(w.ProviderNames)
	count := make([]int, len(w.ProviderNames))
	for _, p := range w.Providers {
		count[p]++
	}
	for _, p := range w.Providers {
		if count[p] > 1 {
			info.SharedProviders++
		}
	}
	if w.Calibrator, info.Calibration, err = calibrate(b, cfg, res, toolIndex, norm); err != nil {
		return nil, info, err
	}
	info.Calibrator = w.Calibrator
	rankings, err := rankAll(res.Retriever, queries, depth)
	if err != nil {
		return nil, info, err
	}
	hits := 0
	for qi, q := range queries {
		cands := rankings[qi]
		ctx, err := res.Vectorizer.QueryVector(q.Text)
		if err != nil {
			return nil, info, fmt.Errorf("context of query %s: %w", q.ID, err)
		}
		sq := sim.Query{ID: q.ID, Context: ctx}
		for _, id := range b.Relevant(cfg.Dynamic.Split, q.ID) {
			sq.Relevant = append(sq.Relevant, toolIndex[id])
		}
		top := 1.0
		if norm == "max" && len(cands) > 0 && cands[0].Score > 0 {
			top = cands[0].Score
		}
		for _, c := range cands {
			tool, ok := toolIndex[c.ID]
			if !ok {
				return nil, info, fmt.Errorf("retriever %s returned unknown tool %q", res.Retriever.Name(), c.ID)
			}
			sq.Ranked = append(sq.Ranked, bandit.Candidate{Tool: tool, Sem: c.Score / top, Prior: priors[tool]})
		}
		for _, c := range sq.Ranked[:min(cfg.Retrieval.K, len(sq.Ranked))] {
			if containsInt(sq.Relevant, c.Tool) {
				hits++
				break
			}
		}
		w.Queries = append(w.Queries, sq)
	}
	if cfg.Retrieval.ContextCenter {
		mu, from, err := contextMean(b, cfg, res.Vectorizer, w)
		if err != nil {
			return nil, info, err
		}
		for _, q := range w.Queries {
			centerAndNormalize(q.Context, mu)
		}
		info.ContextCentering = from
	}
	info.Queries = len(w.Queries)
	info.RecallAtK = float64(hits) / float64(len(w.Queries))
	return w, info, nil
}

// CheckBench refuses a benchmark the configuration cannot run on: dynamic.split without a query
// that has a relevant tool, or a calibration split (dynamic.calibration) that a policy needs and
// the benchmark lacks or that is the evaluated split. It reads nothing but b, so callers run it
// right after loading the benchmark, before the catalog is encoded (which takes seconds to
// minutes); BuildWorld runs it again.
func CheckBench(b *bench.Bench, name string, cfg *Config) error {
	split := cfg.Dynamic.Split
	if len(b.SplitQueries(split)) == 0 {
		return fmt.Errorf("benchmark %s: split %q (--split, dynamic.split) has no queries with qrels (splits: %v)", name, split, splitNames(b))
	}
	if len(b.RelevantQueries(split)) == 0 {
		return fmt.Errorf("benchmark %s: split %q: no query has a relevant tool (grade > 0) in qrels/%s.tsv", name, split, split)
	}
	_, err := calibrationQueries(b, cfg)
	if err != nil {
		return fmt.Errorf("benchmark %s: %w", name, err)
	}
	return nil
}

// calibrationQueries returns the queries of the calibration split dynamic.calibration, or none
// (and no error) when the benchmark has no such split and no policy needs one.
func calibrationQueries(b *bench.Bench, cfg *Config) ([]bench.Query, error) {
	split := cfg.Dynamic.Calibration
	needed := ""
	for _, p := range cfg.Policies {
		if p.NeedsCalibration() {
			needed = p.Name
			break
		}
	}
	queries := b.SplitQueries(split)
	if split == "" || len(queries) == 0 {
		if needed != "" {
			return nil, fmt.Errorf("policy %q needs a calibration split, but dynamic.calibration = %q has no queries with qrels (splits: %v)", needed, split, splitNames(b))
		}
		return nil, nil
	}
	if split == cfg.Dynamic.Split && split != "dev" {
		return nil, fmt.Errorf("dynamic.calibration = %q is the evaluated split: calibrate on dev (or train), never on the split you report", split)
	}
	return queries, nil
}

// toolPriors returns one catalog record per corpus document with r_static computed: from the
// catalog when the benchmark has one, else from the corpus fields alone.
func toolPriors(b *bench.Bench, cfg catalog.PriorConfig, sim catalog.Similarity) ([]catalog.Tool, string, error) {
	if len(b.Corpus) == 0 {
		return nil, "", fmt.Errorf("benchmark has an empty corpus")
	}
	tools := b.CorpusTools()
	if err := catalog.ComputePriors(tools, cfg, sim); err != nil {
		return nil, "", err
	}
	return tools, tools[0].Prior.ConsistencyMethod, nil
}

// providers indexes each tool's catalog.ProviderKey.
func providers(tools []catalog.Tool) ([]int, []string) {
	index := map[string]int{}
	var names []string
	out := make([]int, len(tools))
	for i := range tools {
		key := catalog.ProviderKey(&tools[i])
		p, ok := index[key]
		if !ok {
			p = len(names)
			index[key] = p
			names = append(names, key)
		}
		out[i] = p
	}
	return out, names
}

// calibrate fits P(relevant | retrieval features) on the labelled split dynamic.calibration
// (dev by default): the retriever ranks its queries K deep, and every candidate is an example.
// It returns nil with no error when the benchmark has no such split and no policy needs one.
func calibrate(b *bench.Bench, cfg *Config, res Resources, toolIndex map[string]int, norm string) (*bandit.Calibrator, string, error) {
	split := cfg.Dynamic.Calibration
	queries, err := calibrationQueries(b, cfg)
	if err != nil || len(queries) == 0 {
		return nil, "", err
	}
	rankings, err := rankAll(res.Retriever, queries, cfg.Retrieval.K)
	if err != nil {
		return nil, "", err
	}
	ids := make([]string, len(b.Corpus)) // tool index -> id, as toolIndex numbers them
	for i, d := range b.Corpus {
		ids[i] = d.ID
	}
	lists := make([]bandit.CalibrationList, len(queries))
	hub := cfg.Dynamic.Hubness.offer(ids, cfg.Retrieval.K)
	for qi, q := range queries {
		rel := map[int]bool{}
		for _, id := range b.Relevant(split, q.ID) {
			rel[toolIndex[id]] = true
		}
		cands := rankings[qi]
		top := 1.0
		if norm == "max" && len(cands) > 0 && cands[0].Score > 0 {
			top = cands[0].Score
		}
		for _, c := range cands {
			lists[qi].Sem = append(lists[qi].Sem, c.Score/top)
			lists[qi].Relevant = append(lists[qi].Relevant, rel[toolIndex[c.ID]])
			lists[qi].Tools = append(lists[qi].Tools, c.ID)
		}
	}
	cal, err := bandit.FitCalibrator(lists, 1e-6, hub)
	if err != nil {
		return nil, "", fmt.Errorf("calibration on split %s: %w", split, err)
	}
	return cal.ForTools(ids), fmt.Sprintf("%s on the %d %s-split queries' top %d (%d examples, %d relevant)",
		cal.Describe(), len(queries), split, cfg.Retrieval.K, cal.Examples, cal.Positives), nil
}

func splitNames(b *bench.Bench) []string {
	var s []string
	for k := range b.Splits {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// contextMean is the mean query vector that contexts are centred on: over the dev split's
// queries when the benchmark has one other than the evaluated split (no labels are used), else
// over the evaluated queries themselves.
func contextMean(b *bench.Bench, cfg *Config, vec retrieve.QueryVectorizer, w *sim.World) ([]float64, string, error) {
	mu := make([]float64, vec.Dim())
	if cfg.Dynamic.Split != "dev" {
		if dev := b.SplitQueries("dev"); len(dev) > 0 {
			for _, q := range dev {
				v, err := vec.QueryVector(q.Text)
				if err != nil {
					return nil, "", fmt.Errorf("context of dev query %s: %w", q.ID, err)
				}
				for i, x := range v {
					mu[i] += x / float64(len(dev))
				}
			}
			return mu, fmt.Sprintf("mean of %d dev-split query vectors", len(dev)), nil
		}
	}
	for _, q := range w.Queries {
		for i, x := range q.Context {
			mu[i] += x / float64(len(w.Queries))
		}
	}
	return mu, fmt.Sprintf("mean of the %d evaluated query vectors (no dev split)", len(w.Queries)), nil
}

// centerAndNormalize subtracts mu from v in place and rescales it to unit length (a zero result
// stays zero).
func centerAndNormalize(v, mu []float64) {
	n := 0.0
	for i := range v {
		v[i] -= mu[i]
		n += v[i] * v[i]
	}
	if n > 0 {
		inv := 1 / math.Sqrt(n)
		for i := range v {
			v[i] *= inv
		}
	}
}

// batchSearcher is implemented by retrievers that rank many queries in one call (a dense
// retriever embeds them in batches instead of one ONNX Runtime call per query).
type batchSearcher interface {
	SearchBatch(queries []string, k int) ([][]retrieve.Candidate, error)
}

// rankAll retrieves the top depth tools of every query, in one batch when the retriever can.
func rankAll(r retrieve.Retriever, queries []bench.Query, depth int) ([][]retrieve.Candidate, error) {
	if bs, ok := r.(batchSearcher); ok {
		texts := make([]string, len(queries))
		for i, q := range queries {
			texts[i] = q.Text
		}
		out, err := bs.SearchBatch(texts, depth)
		if err != nil {
			return nil, fmt.Errorf("retrieve %d queries with %s: %w", len(queries), r.Name(), err)
		}
		return out, nil
	}
	out := make([][]retrieve.Candidate, len(queries))
	for i, q := range queries {
		cands, err := r.Search(q.Text, depth)
		if err != nil {
			return nil, fmt.Errorf("retrieve query %s: %w", q.ID, err)
		}
		out[i] = cands
	}
	return out, nil
}
