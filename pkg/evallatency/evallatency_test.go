package evallatency

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// steppingClock advances by the next duration of steps at every reading (cycling).
func steppingClock(steps ...time.Duration) func() time.Time {
	now := time.Unix(0, 0)
	i := 0
	return func() time.Time {
		now = now.Add(steps[i%len(steps)])
		i++
		return now
	}
}

func paperPolicies() []bandit.Spec {
	return []bandit.Spec{
		{Name: "RATED (Full)", Kind: "rated", Alpha: 0.1, Gamma: 0.95},
		{Name: "RATED (w/o Feedback)", Kind: "prior_only"},
		{Name: "RATED (w/ Global MAB)", Kind: "global_mab", Alpha: 0.1},
		{Name: "ToolRL-like Batch GRPO", Kind: "batch_grpo", Batch: 20, LearningRate: 20, Temperature: 0.05},
	}
}

func lexicalFront(t *testing.T) (Frontend, []float64) {
	t.Helper()
	docs := []bench.Doc{
		{ID: "slack", Text: "post a message to a slack channel"},
		{ID: "sms", Text: "send a text message to a phone"},
		{ID: "mail", Text: "send an email message"},
		{ID: "cal", Text: "create a calendar event"},
	}
	hv, err := retrieve.NewHashedBagOfWords(64)
	if err != nil {
		t.Fatal(err)
	}
	return LexicalFrontend{Index: retrieve.NewBM25(docs, retrieve.DefaultBM25Params()), Context: hv}, []float64{0.9, 0.8, 0.7, 0.6}
}

// With a clock that advances 1 ms per reading, every timed span is exactly 1 ms: the front end
// (two readings) and each policy (two readings).
func TestMeasurePipelineBookkeeping(t *testing.T) {
	front, priors := lexicalFront(t)
	queries := []string{"send a message", "post to slack", "calendar event", "email"}
	cfg := Config{Queries: 50, Warmup: 5, K: 3, Policies: paperPolicies(), Weights: bandit.FusionWeights{Semantic: 0.75, Bandit: 0.15, Prior: 0.10},
		FailureRate: 0.3, Seed: 1, Now: steppingClock(time.Millisecond)}
	res, err := MeasurePipeline(context.Background(), front, queries, priors, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1+len(cfg.Policies) {
		t.Fatalf("%d rows", len(res.Rows))
	}
	want := []Row{{MeanMS: 1, P95MS: 1}}
	for range cfg.Policies {
		want = append(want, Row{MeanMS: 2, P95MS: 2, OverMean: 1, OverP95: 1})
	}
	for i, r := range res.Rows {
		w := want[i]
		if math.Abs(r.MeanMS-w.MeanMS) > 1e-12 || math.Abs(r.P95MS-w.P95MS) > 1e-12 || math.Abs(r.OverMean-w.OverMean) > 1e-12 || math.Abs(r.OverP95-w.OverP95) > 1e-12 {
			t.Errorf("row %d %q = %+v, want %+v", i, r.Name, r, w)
		}
	}
	if !strings.HasPrefix(res.Rows[1].Name, "+ RATED (Full)") || !strings.Contains(res.Rows[0].Name, "BM25 + hashed-bow-64") {
		t.Errorf("row names %q, %q", res.Rows[0].Name, res.Rows[1].Name)
	}
}

// Front-end spans of 1, 2, ..., 100 ms (the clock alternates a 0 ms step before each query with
// the query's span; policies get 0 ms): mean 50.5, P95 by linear interpolation 95.05.
func TestMeasurePipelinePercentile(t *testing.T) {
	front, priors := lexicalFront(t)
	var steps []time.Duration
	for i := 1; i <= 100; i++ {
		steps = append(steps, 0, time.Duration(i)*time.Millisecond, 0, 0) // t0, t_front, policy t1, policy end
	}
	cfg := Config{Queries: 100, Warmup: 0, K: 2, Policies: paperPolicies()[1:2], Weights: bandit.FusionWeights{Semantic: 0.75, Bandit: 0.15, Prior: 0.10},
		Seed: 3, Now: steppingClock(steps...)}
	res, err := MeasurePipeline(context.Background(), front, []string{"send a message"}, priors, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Rows[0]; math.Abs(r.MeanMS-50.5) > 1e-9 || math.Abs(r.P95MS-95.05) > 1e-9 {
		t.Errorf("front end %+v, want mean 50.5 P95 95.05", r)
	}
	if r := res.Rows[1]; math.Abs(r.MeanMS-50.5) > 1e-9 || r.OverMean != 0 {
		t.Errorf("policy row %+v, want mean 50.5 and no overhead", r)
	}
}

func TestMeasureSearchAndOutputs(t *testing.T) {
	rows, err := MeasureSearch(context.Background(), SearchConfig{Sizes: []int{100, 1000}, Dim: 16, K: 10, Warmup: 2, Queries: 20, Batch: 8, Rescore: 50,
		ANN: retrieve.HNSWParams{M: 8, EfConstruction: 40, Candidates: 100, Seed: 1}, ANNMax: 100, Seed: 1, Now: steppingClock(time.Microsecond)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 100 tools: exact, batched, int8, HNSW; 1000 tools: no HNSW (ANNMax 100).
	if len(rows) != 7 || rows[4].Tools != 1000 || rows[4].Queries != 20 || math.Abs(rows[0].MeanMS-0.001) > 1e-12 || math.Abs(rows[0].MedianMS-0.001) > 1e-12 {
		t.Fatalf("rows %+v", rows)
	}
	for _, r := range rows {
		// Exact methods find the exact top 10 (the batched row is the ground truth's own code;
		// the single-query row sums in another order, so allow a near-tie swap).
		if strings.HasPrefix(r.Method, "exact float32") && r.Recall < 0.99 {
			t.Errorf("%d tools, %s: recall %v", r.Tools, r.Method, r.Recall)
		}
		if r.Recall < 0 || r.Recall > 1 {
			t.Errorf("%d tools, %s: recall %v out of [0, 1]", r.Tools, r.Method, r.Recall)
		}
	}
	// Per-query time of a batch is the batch's time (one 1 µs clock step) over its size: the 2
	// warm-up queries run in an untimed call of their own, the 20 measured ones as batches of 8,
	// 8 and 4: mean (16/8 + 4/4)/20 µs = 0.15 µs. (Cut from query 0, the first timed call held
	// the warm-up queries too.)
	if got := rows[1].MeanMS; math.Abs(got-0.00015) > 1e-12 {
		t.Errorf("batched row mean %v ms, want 0.00015", got)
	}
	front, priors := lexicalFront(t)
	cfg := Config{Queries: 10, Warmup: 1, K: 2, Policies: paperPolicies(), Weights: bandit.FusionWeights{Semantic: 0.75, Bandit: 0.15, Prior: 0.10},
		Seed: 1, Now: steppingClock(time.Millisecond)}
	res, err := MeasurePipeline(context.Background(), front, []string{"send a message"}, priors, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteOutputs(dir, &Report{Pipeline: res, Search: rows, Host: HostInfo{Device: "CPU", GOMAXPROCS: 2, CPUs: 2}}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"table3.md", "table3.csv", "table3.json", "table3.tex", "table3_search.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "table3.md"))
	for _, s := range []string{"P95 (ms)", "+ RATED (w/ Global MAB)", "+ ToolRL-like Batch GRPO", "10 queries measured after 1 warm-up"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("table3.md lacks %q:\n%s", s, md)
		}
	}
}

func TestMeasureErrors(t *testing.T) {
	front, priors := lexicalFront(t)
	base := Config{Queries: 10, K: 2, Now: time.Now, Weights: bandit.FusionWeights{Semantic: 1}}
	if _, err := MeasurePipeline(context.Background(), front, nil, priors, base, nil); err == nil {
		t.Error("no queries accepted")
	}
	bad := base
	bad.Policies = []bandit.Spec{{Name: "x", Kind: "nope"}}
	if _, err := MeasurePipeline(context.Background(), front, []string{"q"}, priors, bad, nil); err == nil || !strings.Contains(err.Error(), "unknown policy") {
		t.Errorf("unknown policy: %v", err)
	}
	if _, err := MeasureSearch(context.Background(), SearchConfig{Sizes: []int{0}, Dim: 8, K: 1, Queries: 1, Now: time.Now}, nil); err == nil {
		t.Error("catalog size 0 accepted")
	}
	// An ended context stops both measurements with its error; a clock that ends it at its
	// fifth reading stops the pipeline mid-run (two readings per query).
	ctx, cancel := context.WithCancel(context.Background())
	readings := 0
	stopping := base
	stopping.Now = func() time.Time {
		if readings++; readings == 5 {
			cancel()
		}
		return time.Unix(0, int64(readings))
	}
	if _, err := MeasurePipeline(ctx, front, []string{"q"}, priors, stopping, nil); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped after 3 of 10 queries") {
		t.Errorf("pipeline with its context ended at the third query: %v", err)
	}
	if _, err := MeasureSearch(ctx, SearchConfig{Sizes: []int{10}, Dim: 4, K: 1, Queries: 1, Now: time.Now}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("search sweep with an ended context: %v", err)
	}
}

// TestWarmupIsNotMeasured: warm-up queries that take 1 s each against 1 ms (pipeline) or 1 µs
// (search sweep) measured ones leave the means at exactly the measured time; a warm-up counted
// as measured would move them by orders of magnitude. The sweep rows record their warm-up.
func TestWarmupIsNotMeasured(t *testing.T) {
	front, priors := lexicalFront(t)
	var steps []time.Duration
	for range 3 {
		// t0, front end's end, policy t1 (a warm-up query's policy span is never read off), each
		// front end 1 s.
		steps = append(steps, 0, time.Second, 0)
	}
	for range 5 {
		steps = append(steps, 0, time.Millisecond, 0, time.Millisecond)
	}
	cfg := Config{Queries: 5, Warmup: 3, K: 2, Policies: paperPolicies()[1:2], Weights: bandit.FusionWeights{Semantic: 0.75, Bandit: 0.15, Prior: 0.10},
		Seed: 3, Now: steppingClock(steps...)}
	res, err := MeasurePipeline(context.Background(), front, []string{"send a message"}, priors, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Rows[0]; r.MeanMS != 1 || r.P95MS != 1 {
		t.Errorf("front end %+v, want 1 ms", r)
	}
	if r := res.Rows[1]; r.MeanMS != 2 || r.OverMean != 1 {
		t.Errorf("policy row %+v, want 2 ms in all, 1 ms over the front end", r)
	}

	const warm = 4
	readings := 0
	clock := func() time.Time {
		readings++
		// The exact row reads the clock at the start of every query, warm-up first, and at the
		// end of each measured one: each warm-up query ends 1 s after it started.
		if readings <= warm+1 {
			return time.Unix(0, 0).Add(time.Duration(readings) * time.Second)
		}
		return time.Unix(0, 0).Add(time.Duration(warm+1)*time.Second + time.Duration(readings-warm-1)*time.Microsecond)
	}
	rows, err := MeasureSearch(context.Background(), SearchConfig{Sizes: []int{100}, Dim: 8, K: 5, Warmup: warm, Queries: 6, Seed: 1, Now: clock}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].MeanMS != 0.001 || rows[0].Warmup != warm || rows[0].Queries != 6 {
		t.Fatalf("rows %+v, want one exact row at 0.001 ms after %d warm-up", rows, warm)
	}
	if notes := strings.Join(SearchTable(&Report{Search: rows}).Notes, " "); !strings.Contains(notes, "measured after 4 unmeasured warm-up queries") {
		t.Errorf("notes lack the warm-up: %s", notes)
	}
}
