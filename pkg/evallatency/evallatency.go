// Package evallatency is the latency evaluation of RATED (the paper's Table 3): the per-query
// cost of the first stage (query encoding and top-K search, "encoding only") and of that stage
// followed by each selection policy, at batch size 1, as mean and 95th percentile over
// Config.Queries measured queries (the command's default: 1,000) after Config.Warmup unmeasured
// ones; plus the cost of exact top-K search alone as the catalog grows
// (synthetic unit vectors).
package evallatency

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/metrics"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// Frontend is the first stage timed as "encoding": a query becomes the bandit's context vector
// and the top-K candidates.
type Frontend interface {
	// Name describes the stage in the table (for example "dense:bge-small-en-v1.5").
	Name() string
	// Prepare returns the unit-norm context vector and the top k candidates of query.
	Prepare(query string, k int) ([]float64, []retrieve.Candidate, error)
}

// DenseFrontend embeds the query once with the encoder's query tower, uses the embedding as the
// context and searches the dense index with it.
type DenseFrontend struct {
	Encoder encode.Encoder
	Index   *retrieve.Dense
}

// Name is the dense retriever's name.
func (f DenseFrontend) Name() string { return f.Index.Name() }

// Prepare implements Frontend.
func (f DenseFrontend) Prepare(query string, k int) ([]float64, []retrieve.Candidate, error) {
	qs, err := f.Encoder.EncodeQueries([]string{query})
	if err != nil {
		return nil, nil, err
	}
	cands, err := f.Index.SearchVector(qs[0], k)
	if err != nil {
		return nil, nil, err
	}
	ctx := make([]float64, len(qs[0]))
	norm := 0.0
	for i, v := range qs[0] {
		ctx[i] = float64(v)
		norm += ctx[i] * ctx[i]
	}
	if norm > 0 {
		norm = math.Sqrt(norm)
		for i := range ctx {
			ctx[i] /= norm
		}
	}
	return ctx, cands, nil
}

// LexicalFrontend is the fallback without an encoder: BM25 search and a hashed bag-of-words
// context.
type LexicalFrontend struct {
	Index   retrieve.Retriever
	Context retrieve.QueryVectorizer
}

// Name describes both parts.
func (f LexicalFrontend) Name() string { return f.Index.Name() + " + " + f.Context.Name() }

// Prepare implements Frontend.
func (f LexicalFrontend) Prepare(query string, k int) ([]float64, []retrieve.Candidate, error) {
	cands, err := f.Index.Search(query, k)
	if err != nil {
		return nil, nil, err
	}
	ctx, err := f.Context.QueryVector(query)
	return ctx, cands, err
}

// Config selects what is measured.
type Config struct {
	// Queries is the number of measured queries (the query texts are cycled when fewer).
	Queries int
	// Warmup queries run first and are not measured.
	Warmup int
	// K is the number of candidates handed to a policy.
	K int
	// Policies are measured after the front end, each on the same queries.
	Policies []bandit.Spec
	// Weights are the fusion weights (w1 semantic, w2 bandit, w3 prior).
	Weights bandit.FusionWeights
	// FailureRate is the share of simulated failed executions fed back to the policies, so
	// their updates run as in the dynamic experiment.
	FailureRate float64
	// Seed seeds the simulated outcomes and the policies.
	Seed uint64
	// Now is the clock (time.Now).
	Now func() time.Time
}

// Validate refuses settings that cannot be measured, naming them by their `rated eval latency`
// flags, so the command can check them before it encodes anything.
func (c Config) Validate() error {
	switch {
	case c.Queries < 1:
		return fmt.Errorf("--queries %d: must be at least 1", c.Queries)
	case c.Warmup < 0:
		return fmt.Errorf("--warmup %d: must be >= 0", c.Warmup)
	case c.K < 1:
		return fmt.Errorf("--k %d: must be at least 1", c.K)
	case !(c.FailureRate >= 0 && c.FailureRate <= 1):
		return fmt.Errorf("--failure-rate %v: a share of failed executions must be in [0, 1]", c.FailureRate)
	}
	for i, s := range c.Policies {
		if err := s.Validate(fmt.Sprintf("policies[%d]", i)); err != nil {
			return err
		}
	}
	return c.Weights.Validate("fusion")
}

// ValidateSweep refuses a catalog-size sweep that cannot run (flags --sizes, --sweep-dim,
// --sweep-queries); dim 0 means "the encoder's", resolved later.
func ValidateSweep(sizes []int, dim, queries int) error {
	for _, n := range sizes {
		if n <= 0 {
			return fmt.Errorf("--sizes %d: a catalog size must be positive", n)
		}
	}
	switch {
	case dim < 0:
		return fmt.Errorf("--sweep-dim %d: must be positive (0: the encoder's)", dim)
	case queries < 1:
		return fmt.Errorf("--sweep-queries %d: must be at least 1", queries)
	}
	return nil
}

// Row is one measured line: per-query latency of the front end plus the policy (Total) and of
// the policy alone (Overhead), in milliseconds.
type Row struct {
	Name     string  `json:"name"`
	MeanMS   float64 `json:"mean_ms"`
	P95MS    float64 `json:"p95_ms"`
	OverMean float64 `json:"overhead_mean_ms"`
	OverP95  float64 `json:"overhead_p95_ms"`
}

// Result is the pipeline part of Table 3.
type Result struct {
	Frontend string  `json:"frontend"`
	Tools    int     `json:"tools"`
	Queries  int     `json:"queries"`
	Warmup   int     `json:"warmup"`
	K        int     `json:"k"`
	Rows     []Row   `json:"rows"`
	Failure  float64 `json:"simulated_failure_rate"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// summarize returns the mean and the 95th percentile of xs.
func summarize(xs []float64) (float64, float64) {
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	return mean / float64(len(xs)), metrics.Percentile(xs, 95)
}

// MeasurePipeline times, for every query (batch size 1), the front end and then each policy's
// Choose and Observe calls on the front end's candidates (with simulated outcomes), after
// cfg.Warmup unmeasured queries. priors gives r_static per corpus index. The total of a policy
// row is, per query, the front end's time plus that policy's time on the same query. It stops
// with ctx's error between queries once ctx ends.
func MeasurePipeline(ctx context.Context, front Frontend, queries []string, priors []float64, cfg Config, log io.Writer) (*Result, error) {
	if len(queries) == 0 {
		return nil, errors.New("latency: no queries")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("latency: %w", err)
	}
	if cfg.Now == nil {
		return nil, errors.New("latency: no clock")
	}
	if log == nil {
		log = io.Discard
	}
	policies := make([]bandit.Policy, len(cfg.Policies))
	budgets := make([]int, len(cfg.Policies))
	dim := 0
	for i, spec := range cfg.Policies {
		if dim == 0 {
			ctx, _, err := front.Prepare(queries[0], cfg.K)
			if err != nil {
				return nil, fmt.Errorf("latency: %s: %w", front.Name(), err)
			}
			dim = len(ctx)
		}
		p, err := bandit.New(spec, bandit.Env{NumTools: len(priors), Dim: dim, Weights: cfg.Weights, Seed: cfg.Seed + uint64(i)})
		if err != nil {
			return nil, err
		}
		policies[i], budgets[i] = p, spec.AttemptBudget()
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x1a7e))
	front0 := make([]float64, 0, cfg.Queries)
	pol := make([][]float64, len(policies))
	total := cfg.Warmup + cfg.Queries
	for i := range total {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("latency: stopped after %d of %d queries: %w", i, total, err)
		}
		q := queries[i%len(queries)]
		t0 := cfg.Now()
		qctx, cands, err := front.Prepare(q, cfg.K)
		if err != nil {
			return nil, fmt.Errorf("latency: %s, query %d: %w", front.Name(), i%len(queries), err)
		}
		frontMS := ms(cfg.Now().Sub(t0))
		step := bandit.Step{T: i, Context: qctx}
		top := 1.0
		if len(cands) > 0 && cands[0].Score > 0 {
			top = cands[0].Score
		}
		for _, c := range cands {
			step.Candidates = append(step.Candidates, bandit.Candidate{Tool: c.Index, Sem: c.Score / top, Prior: priors[c.Index]})
		}
		// One outcome per candidate for this query, shared by every policy.
		ok := make([]bool, len(step.Candidates))
		for j := range ok {
			ok[j] = rng.Float64() >= cfg.FailureRate
		}
		measured := i >= cfg.Warmup
		if measured {
			front0 = append(front0, frontMS)
		}
		for pi, p := range policies {
			s := step // policies must not see each other's changes
			s.Candidates = append([]bandit.Candidate(nil), step.Candidates...)
			t1 := cfg.Now()
			if n := len(s.Candidates); n > 0 {
				s.Excluded = make([]bool, n)
				for a := 0; a < min(budgets[pi], n); a++ {
					s.Attempt = a
					pos := p.Choose(&s)
					p.Observe(&s, pos, bandit.Feedback{Executed: ok[pos]})
					s.Excluded[pos] = true
					if ok[pos] {
						break
					}
				}
			}
			if measured {
				pol[pi] = append(pol[pi], ms(cfg.Now().Sub(t1)))
			}
		}
		if i == cfg.Warmup-1 {
			fmt.Fprintf(log, "eval latency: %d warm-up queries done\n", cfg.Warmup)
		}
	}
	res := &Result{Frontend: front.Name(), Tools: len(priors), Queries: cfg.Queries, Warmup: cfg.Warmup, K: cfg.K, Failure: cfg.FailureRate}
	mean, p95 := summarize(front0)
	res.Rows = append(res.Rows, Row{Name: "Encoding only (" + front.Name() + ", top-K search)", MeanMS: mean, P95MS: p95})
	for pi, p := range policies {
		tot := make([]float64, len(front0))
		for j := range tot {
			tot[j] = front0[j] + pol[pi][j]
		}
		mean, p95 := summarize(tot)
		om, op := summarize(pol[pi])
		res.Rows = append(res.Rows, Row{Name: "+ " + p.Name(), MeanMS: mean, P95MS: p95, OverMean: om, OverP95: op})
	}
	return res, nil
}

// SearchRow is the latency of one search method over a synthetic catalog.
type SearchRow struct {
	Tools   int    `json:"tools"`
	Dim     int    `json:"dim"`
	Method  string `json:"method"`
	Queries int    `json:"queries"`
	// Warmup is the number of unmeasured queries run first (the command caps the sweep's at 100).
	Warmup int `json:"warmup"`
	// Batch is the number of queries per call (1: one query at a time); MeanMS and P95MS are
	// per query.
	Batch  int     `json:"batch"`
	MeanMS float64 `json:"mean_ms"`
	P95MS  float64 `json:"p95_ms"`
	// MedianMS is steadier than the mean on a loaded machine, where a few queries wait for a core.
	MedianMS float64 `json:"median_ms"`
	// Recall is recall@k against exact float32 search on the same queries.
	Recall float64 `json:"recall"`
	// BuildS is the time to build the method's index from the float32 vectors (0 for exact).
	BuildS float64 `json:"build_s"`
	// IndexMB is the memory of the structure searched: the float32 matrix, the int8 codes, or the
	// growth of the Go heap while the graph was built.
	IndexMB float64 `json:"index_mb"`
	// Vectors names the synthetic data: "isotropic" or "mixture".
	Vectors string `json:"vectors"`
}

// SearchConfig selects the catalog-size sweep of MeasureSearch.
type SearchConfig struct {
	Sizes                   []int
	Dim, K, Warmup, Queries int
	// Batch is the query batch of the batched exact row (0 or 1: no batched row).
	Batch int
	// Rescore is the int8 shortlist re-scored in float32 (0: no int8 row).
	Rescore int
	// ANN configures the HNSW row, measured for sizes up to ANNMax (0: no HNSW row).
	ANN    retrieve.HNSWParams
	ANNMax int
	// IVF configures the inverted-file index, measured for sizes up to IVFMax (0: no IVF rows)
	// with one row per entry of IVFProbes (lists scanned per query; IVF.Probes when empty).
	IVF       retrieve.IVFParams
	IVFProbes []int
	IVFMax    int
	// IndexDir, when set, keeps built graphs and lists (retrieve.OpenHNSW, OpenIVF) so a rerun
	// loads them.
	IndexDir string
	// Vectors, when set, draws the catalogs and the queries from this fitted mixture; otherwise
	// they are isotropic unit vectors of Dim values.
	Vectors *Mixture
	Seed    uint64
	Now     func() time.Time
}

// syntheticEncoder satisfies encode.Encoder for an index of synthetic vectors; searches use
// SearchVector, so it never encodes.
type syntheticEncoder struct{ dim int }

func (s syntheticEncoder) Name() string { return fmt.Sprintf("synthetic-%d", s.dim) }
func (s syntheticEncoder) Dim() int     { return s.dim }
func (s syntheticEncoder) EncodeQueries([]string) ([][]float32, error) {
	return nil, errors.New("synthetic encoder: no text encoding")
}
func (s syntheticEncoder) EncodeDocs([]string) ([][]float32, error) {
	return nil, errors.New("synthetic encoder: no text encoding")
}

// unitVectors returns n seeded random unit vectors of dim values, sharing one backing array.
func unitVectors(rng *rand.Rand, n, dim int) [][]float32 {
	data := make([]float32, n*dim)
	out := make([][]float32, n)
	for i := range out {
		v := data[i*dim : (i+1)*dim]
		norm := 0.0
		for j := range v {
			x := rng.NormFloat64()
			v[j] = float32(x)
			norm += x * x
		}
		inv := float32(1 / math.Sqrt(norm))
		for j := range v {
			v[j] *= inv
		}
		out[i] = v
	}
	return out
}

// MeasureSearch times top-k search over synthetic catalogs of each size (seeded isotropic unit
// vectors, or draws from cfg.Vectors): exact float32 one query at a time
// (retrieve.Dense.SearchVector) and in batches (SearchVectors), the int8 scan with float32
// re-scoring, the HNSW graph and the inverted file; each after cfg.Warmup unmeasured queries, on
// the same cfg.Queries queries drawn like the catalog, with recall@k against exact search. It stops
// with ctx's error between catalog sizes and methods once ctx ends.
func MeasureSearch(ctx context.Context, cfg SearchConfig, log io.Writer) ([]SearchRow, error) {
	if log == nil {
		log = io.Discard
	}
	if cfg.Now == nil {
		return nil, errors.New("latency: no clock")
	}
	if err := ValidateSweep(cfg.Sizes, cfg.Dim, cfg.Queries); err != nil {
		return nil, fmt.Errorf("latency: %w", err)
	}
	if cfg.Dim == 0 || cfg.K <= 0 {
		return nil, fmt.Errorf("latency: search sweep: dim %d and k %d must be positive", cfg.Dim, cfg.K)
	}
	if cfg.Vectors != nil && cfg.Vectors.dim != cfg.Dim {
		return nil, fmt.Errorf("latency: the fitted vectors have %d values, the sweep %d", cfg.Vectors.dim, cfg.Dim)
	}
	var out []SearchRow
	for _, n := range cfg.Sizes {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("latency: search sweep stopped before %d tools: %w", n, err)
		}
		rows, err := measureSize(ctx, n, cfg, log)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

func measureSize(ctx context.Context, n int, cfg SearchConfig, log io.Writer) ([]SearchRow, error) {
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(n)))
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("t%d", i)
	}
	kind, draw := "isotropic", func(m int) [][]float32 { return unitVectors(rng, m, cfg.Dim) }
	if cfg.Vectors != nil {
		kind, draw = "mixture", func(m int) [][]float32 { return cfg.Vectors.Sample(rng, m) }
	}
	fmt.Fprintf(log, "eval latency: search sweep, %d tools x %d dims (%.0f MB of %s vectors)\n", n, cfg.Dim, float64(n*cfg.Dim*4)/1e6, kind)
	idx, err := retrieve.NewDenseFromVectors(syntheticEncoder{cfg.Dim}, ids, draw(n))
	if err != nil {
		return nil, err
	}
	total := cfg.Warmup + cfg.Queries
	qs := draw(total)
	truth, err := idx.SearchVectors(qs[cfg.Warmup:], cfg.K)
	if err != nil {
		return nil, err
	}
	row := func(method string, batch int, times []float64, got [][]retrieve.Candidate, build time.Duration, mb float64) SearchRow {
		mean, p95 := summarize(times)
		return SearchRow{Tools: n, Dim: cfg.Dim, Method: method, Queries: cfg.Queries, Warmup: cfg.Warmup, Batch: batch, MeanMS: mean, P95MS: p95, MedianMS: metrics.Percentile(times, 50),
			Recall: recallAt(truth, got), BuildS: build.Seconds(), IndexMB: mb, Vectors: kind}
	}
	one := func(search func([]float32, int) ([]retrieve.Candidate, error)) ([]float64, [][]retrieve.Candidate, error) {
		times := make([]float64, 0, cfg.Queries)
		got := make([][]retrieve.Candidate, 0, cfg.Queries)
		for i, q := range qs {
			if err := ctx.Err(); err != nil {
				return nil, nil, fmt.Errorf("latency: search sweep at %d tools stopped: %w", n, err)
			}
			t0 := cfg.Now()
			c, err := search(q, cfg.K)
			if err != nil {
				return nil, nil, err
			}
			if i >= cfg.Warmup {
				times = append(times, ms(cfg.Now().Sub(t0)))
				got = append(got, c)
			}
		}
		return times, got, nil
	}
	floatMB := float64(n*cfg.Dim*4) / 1e6
	var rows []SearchRow
	times, got, err := one(idx.SearchVector)
	if err != nil {
		return nil, err
	}
	rows = append(rows, row("exact float32", 1, times, got, 0, floatMB))
	if cfg.Batch > 1 {
		var times []float64
		var got [][]retrieve.Candidate
		// The warm-up queries run in calls of their own, untimed: cut from query 0, the first
		// timed call mixed warm-up and measured queries.
		for start := 0; start < cfg.Warmup; start += cfg.Batch {
			if _, err := idx.SearchVectors(qs[start:min(cfg.Warmup, start+cfg.Batch)], cfg.K); err != nil {
				return nil, err
			}
		}
		used := 0 // the largest call made: fewer queries than a batch make one smaller call
		for start := cfg.Warmup; start < total; start += cfg.Batch {
			batch := qs[start:min(total, start+cfg.Batch)]
			used = max(used, len(batch))
			t0 := cfg.Now()
			res, err := idx.SearchVectors(batch, cfg.K)
			if err != nil {
				return nil, err
			}
			per := ms(cfg.Now().Sub(t0)) / float64(len(batch))
			for j := range batch {
				times = append(times, per)
				got = append(got, res[j])
			}
		}
		rows = append(rows, row("exact float32, blocked batch", used, times, got, 0, floatMB))
	}
	if cfg.Rescore > 0 {
		t0 := cfg.Now()
		q8, err := retrieve.NewInt8Dense(idx, cfg.Rescore)
		if err != nil {
			return nil, err
		}
		build := cfg.Now().Sub(t0)
		times, got, err := one(q8.SearchVector)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row(fmt.Sprintf("exact int8 + float32 re-score of %d", cfg.Rescore), 1, times, got, build, float64(n*cfg.Dim)/1e6))
	}
	if err := ctx.Err(); err != nil { // before the index builds, which do not watch it
		return nil, fmt.Errorf("latency: search sweep at %d tools stopped: %w", n, err)
	}
	if cfg.ANNMax > 0 && n <= cfg.ANNMax {
		fmt.Fprintf(log, "eval latency: building the HNSW graph over %d tools\n", n)
		before := heapMB()
		t0 := cfg.Now()
		var h *retrieve.HNSW
		var built bool
		if cfg.IndexDir != "" {
			h, built, err = retrieve.OpenHNSW(idx, cfg.ANN, cfg.IndexDir, nil)
		} else {
			h, err = retrieve.NewHNSW(idx, cfg.ANN, nil)
			built = true
		}
		if err != nil {
			return nil, err
		}
		build := cfg.Now().Sub(t0)
		if !built {
			build = 0 // loaded from IndexDir: the build time is that of the earlier run
		}
		mb := heapMB() - before
		times, got, err := one(h.SearchVector)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row(fmt.Sprintf("HNSW (coder/hnsw, M=%d, ef_construction=%d, %d candidates re-scored)", cfg.ANN.M, cfg.ANN.EfConstruction, cfg.ANN.Candidates), 1, times, got, build, mb))
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("latency: search sweep at %d tools stopped: %w", n, err)
	}
	if cfg.IVFMax > 0 && n <= cfg.IVFMax {
		fmt.Fprintf(log, "eval latency: building the inverted file over %d tools\n", n)
		t0 := cfg.Now()
		var v *retrieve.IVF
		built := true
		if cfg.IndexDir != "" {
			v, built, err = retrieve.OpenIVF(idx, cfg.IVF, cfg.IndexDir, nil)
		} else {
			v, err = retrieve.NewIVF(idx, cfg.IVF, nil)
		}
		if err != nil {
			return nil, err
		}
		build := cfg.Now().Sub(t0)
		if !built {
			build = 0 // loaded from IndexDir: the build time is that of the earlier run
		}
		probes := cfg.IVFProbes
		if len(probes) == 0 {
			probes = []int{cfg.IVF.Probes}
		}
		for _, pr := range probes {
			view, err := v.WithSearch(pr, cfg.IVF.Rescore)
			if err != nil {
				return nil, err
			}
			times, got, err := one(view.SearchVector)
			if err != nil {
				return nil, err
			}
			p := view.Params()
			rows = append(rows, row(fmt.Sprintf("IVF (%d lists, %d probed, int8 lists, %d re-scored)", p.Lists, min(pr, p.Lists), p.Rescore),
				1, times, got, build, float64(v.MemoryBytes())/1e6))
		}
	}
	return rows, nil
}

// recallAt is the share of the exact top-k found by got, over all queries.
func recallAt(truth, got [][]retrieve.Candidate) float64 {
	hits, all := 0, 0
	for i := range truth {
		want := map[int]bool{}
		for _, c := range truth[i] {
			want[c.Index] = true
		}
		all += len(want)
		for _, c := range got[i] {
			if want[c.Index] {
				hits++
			}
		}
	}
	if all == 0 {
		return 0
	}
	return float64(hits) / float64(all)
}

// heapMB is the live Go heap after a collection, in MB.
func heapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / 1e6
}
