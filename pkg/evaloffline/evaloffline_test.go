package evaloffline

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/metrics"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// tinyBench: four tools; q1 and q2 name their tool's unique words, q3 matches nothing, q4 has
// only a grade-0 judgment, q5 is in the dev split only.
func tinyBench() *bench.Bench {
	return &bench.Bench{
		Corpus: []bench.Doc{
			{ID: "slack", Title: "slack", Text: "post a message to a channel"},
			{ID: "sms", Title: "sms", Text: "send a text message to a phone"},
			{ID: "mail", Title: "mail", Text: "send an email"},
			{ID: "calendar", Title: "calendar", Text: "create an event"},
		},
		Queries: []bench.Query{
			{ID: "q1", Text: "post to a slack channel"},
			{ID: "q2", Text: "text my phone"},
			{ID: "q3", Text: "zzz qqq"},
			{ID: "q4", Text: "create an event"},
			{ID: "q5", Text: "send email"},
		},
		Splits: map[string]bench.Qrels{
			"test": {"q1": {"slack": 1}, "q2": {"sms": 1, "mail": 1}, "q3": {"calendar": 1}, "q4": {"calendar": 0}},
			"dev":  {"q5": {"mail": 1}},
		},
	}
}

func TestRunTinyBench(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Measures = []metrics.Measure{{Kind: metrics.RR}, {Kind: metrics.Recall, K: 1}, {Kind: metrics.Hit, K: 1}, {Kind: metrics.Recall, K: 5}}
	res, err := Run(Env{Bench: tinyBench()}, "tiny", NewLexicalRegistry(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Queries, ",") != "q1,q2,q3" || strings.Join(res.NoRelevant, ",") != "q4" {
		t.Fatalf("evaluated %v, without relevant %v; want q1,q2,q3 and q4", res.Queries, res.NoRelevant)
	}
	// For both retrievers: q1 ranks slack first (the only tool with "post", "slack", "channel");
	// q2 ranks sms first ("text", "phone" only there) and never mail (no shared term); q3 returns
	// nothing. RR = (1 + 1 + 0)/3; Recall@1 = (1 + 1/2 + 0)/3; Hit@1 = 2/3; Recall@5 = (1+1/2+0)/3.
	want := map[string]float64{"MRR": 2.0 / 3, "Recall@1": 0.5, "Hit@1": 2.0 / 3, "Recall@5": 0.5}
	for _, sys := range res.Systems {
		for m, w := range want {
			if math.Abs(sys.Mean[m]-w) > 1e-12 {
				t.Errorf("%s %s = %v, want %v", sys.Name, m, sys.Mean[m], w)
			}
		}
		if sys.EmptyRuns != 1 {
			t.Errorf("%s: %d empty runs, want 1 (q3)", sys.Name, sys.EmptyRuns)
		}
	}
	tf := res.Systems[0]
	st, ok := tf.Tests["MRR"]
	if tf.Name != "tfidf" || !ok || st.PTTest != nil || st.MeanDiff != 0 || st.PRandomise == nil || *st.PRandomise != 1 {
		t.Errorf("tfidf vs bm25 on identical MRR: %+v (want undefined t-test, randomisation p = 1)", st)
	}
	if res.Systems[1].Tests != nil {
		t.Errorf("the baseline has tests: %+v", res.Systems[1].Tests)
	}

	out := t.TempDir()
	if err := WriteOutputs(out, res); err != nil {
		t.Fatal(err)
	}
	qrels, _ := os.ReadFile(filepath.Join(out, "qrels.test.trec"))
	if string(qrels) != "q1 0 slack 1\nq2 0 mail 1\nq2 0 sms 1\nq3 0 calendar 1\n" {
		t.Errorf("qrels.test.trec:\n%s", qrels)
	}
	run, _ := os.ReadFile(filepath.Join(out, "runs", "bm25.trec"))
	lines := strings.Split(strings.TrimSpace(string(run)), "\n")
	if f := strings.Fields(lines[0]); len(f) != 6 || f[0] != "q1" || f[1] != "Q0" || f[2] != "slack" || f[3] != "1" || f[5] != "bm25" {
		t.Errorf("runs/bm25.trec first line %q", lines[0])
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "q3 ") || strings.Contains(l, " mail ") && strings.HasPrefix(l, "q2 ") {
			t.Errorf("unexpected run line %q", l)
		}
	}
	for _, f := range []string{"table1.md", "table1.csv", "table1.json", "table1.tex", "per_query.csv", "runs/tfidf.trec"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing output %s", f)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "table1.md"))
	for _, s := range []string{"| Retriever", "Recall@1", "Hit@1", "fraction of the query's relevant tools", "at least one relevant tool", "1 queries whose qrels list no relevant tool", "BM25 1", "trec_eval -c -m recip_rank -m recall.1,5 -m success.1"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("table1.md lacks %q:\n%s", s, md)
		}
	}
	var back map[string]any
	raw, _ := os.ReadFile(filepath.Join(out, "table1.json"))
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatalf("table1.json: %v", err)
	}
}

func TestRunErrors(t *testing.T) {
	reg := NewLexicalRegistry()
	cases := []struct {
		mutate func(*Config, *bench.Bench)
		want   string
	}{
		{func(c *Config, _ *bench.Bench) { c.Retrievers = []string{"bm25", "nope"} }, `unknown retriever "nope"`},
		{func(c *Config, _ *bench.Bench) { c.Retrievers = []string{"bm25", "bm25"} }, "listed twice"},
		{func(c *Config, _ *bench.Bench) { c.Baseline = "tfidf-sublinear" }, "not among the evaluated"},
		{func(c *Config, _ *bench.Bench) { c.Split = "train" }, `split "train": no qrels/train.tsv (have dev, test)`},
		{func(c *Config, _ *bench.Bench) { c.Depth = 0 }, "run depth"},
		// The default measures reach Recall@10 and nDCG@10: a depth of 5 cannot hold them.
		{func(c *Config, _ *bench.Bench) { c.Depth = 5 }, "--measures Recall@10: cutoff 10 is above --depth 5"},
		{func(c *Config, _ *bench.Bench) {
			c.Depth, c.Measures = 5, []metrics.Measure{{Kind: metrics.RR}, {Kind: metrics.Recall, K: 5}, {Kind: metrics.Recall, K: 50}}
		}, "--measures Recall@50: cutoff 50 is above --depth 5"},
		{func(c *Config, _ *bench.Bench) { c.Retrievers = []string{"bm25:k1=x"}; c.Baseline = "" }, `bm25:k1=x: parameter "k1=x"`},
		{func(c *Config, _ *bench.Bench) { c.Rounds = MaxRounds + 1 }, "--rounds 10000001: at most 10000000"},
		// Summed into one column twice, MRR came out doubled.
		{func(c *Config, _ *bench.Bench) {
			c.Measures = []metrics.Measure{{Kind: metrics.RR}, {Kind: metrics.Recall, K: 5}, {Kind: metrics.RR}}
		}, "--measures: MRR listed twice"},
		{func(_ *Config, b *bench.Bench) { b.Corpus[0].ID = "two words" }, "white space"},
		{func(_ *Config, b *bench.Bench) { b.Splits["test"] = bench.Qrels{"q4": {"calendar": 0}} }, "no query has a relevant tool"},
	}
	for _, c := range cases {
		cfg, b := DefaultConfig(), tinyBench()
		c.mutate(&cfg, b)
		_, err := Run(Env{Bench: b}, "tiny", reg, cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got error %v, want one containing %q", err, c.want)
		}
	}
	// A cutoff equal to the depth is fine.
	cfg := DefaultConfig()
	cfg.Depth, cfg.Measures = 5, []metrics.Measure{{Kind: metrics.RR}, {Kind: metrics.Recall, K: 5}}
	if err := cfg.Check(); err != nil {
		t.Errorf("Recall@5 at depth 5: %v", err)
	}
	// A cancelled context (SIGINT, SIGTERM) stops the run before the next retriever.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(Env{Ctx: ctx, Bench: tinyBench()}, "tiny", reg, DefaultConfig()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: error %v, want context.Canceled", err)
	}
}

func TestRegistryFamilies(t *testing.T) {
	reg := NewLexicalRegistry()
	r, err := reg.Build("bm25:k1=1.2,b=0.5", Env{Bench: tinyBench()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Name() != "BM25 (k1=1.2, b=0.5)" {
		t.Errorf("name %q", r.Name())
	}
	if _, ok := r.(retrieve.BatchSearcher); !ok {
		t.Error("wrapped BM25 lost its batch search")
	}
	if reg.Has("bm25:") || reg.Has("dense:x") || !reg.Has("tfidf-sublinear") {
		t.Error("Has resolves the wrong names")
	}
	if err := reg.Register("bm25", "again", nil); err == nil {
		t.Error("duplicate registration accepted")
	}
}

func TestTrecEvalArgs(t *testing.T) {
	got := TrecEvalArgs(DefaultMeasures())
	want := "-m recip_rank -m recall.1,5,10 -m success.1,5 -m ndcg_cut.10 -m map -m P.5"
	if got != want {
		t.Errorf("TrecEvalArgs = %q, want %q", got, want)
	}
}

// TestDefaultBenchMatchesPytrecEval runs the evaluation on the embedded default benchmark, then
// recomputes every per-query value and mean from the written qrels and run files with
// pytrec_eval, and the MRR t-test p-value with scipy.
func TestDefaultBenchMatchesPytrecEval(t *testing.T) {
	python := testassets.Python(t)
	b, err := defaultbench.Load()
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	// rrf's fused scores tie often (1/61 + 1/63 from either side): the written float32 scores and
	// trec_eval's tie order must give pytrec_eval the same ranking.
	cfg.Retrievers = []string{"bm25", "tfidf", "tfidf-sublinear", "bm25-en", "rrf:bm25-en+tfidf"}
	cfg.Rounds = 2000
	reg := NewLexicalRegistry()
	if err := RegisterFusion(reg); err != nil {
		t.Fatal(err)
	}
	res, err := Run(Env{Bench: b}, "default", reg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := WriteOutputs(out, res); err != nil {
		t.Fatal(err)
	}
	names := []string{"bm25"}
	for _, r := range cfg.Retrievers[1:] {
		names = append(names, strings.TrimSuffix(RunFileName(r), ".trec"))
	}
	ref := checkOutputs(t, python, out, names...)
	for _, sys := range res.Systems {
		r := ref[strings.TrimSuffix(RunFileName(sys.Name), ".trec")]
		if len(r.PerQuery) != len(res.Queries) {
			t.Fatalf("%s: pytrec_eval saw %d queries, rated %d", sys.Name, len(r.PerQuery), len(res.Queries))
		}
		for mi, m := range cfg.Measures {
			name := res.Measures[mi]
			if math.Abs(sys.Mean[name]-r.Mean[m.TrecEvalName()]) > 1e-6 {
				t.Errorf("%s mean %s = %v, pytrec_eval %v", sys.Name, name, sys.Mean[name], r.Mean[m.TrecEvalName()])
			}
			for _, q := range sys.PerQuery {
				if math.Abs(q.Values[name]-r.PerQuery[q.QueryID][m.TrecEvalName()]) > 1e-6 {
					t.Fatalf("%s %s %s = %v, pytrec_eval %v", sys.Name, q.QueryID, name, q.Values[name], r.PerQuery[q.QueryID][m.TrecEvalName()])
				}
			}
		}
		if sys.Name != "bm25" {
			got, want := sys.Tests["MRR"].PTTest, r.PTTestRR
			if (got == nil) != (want == nil) || got != nil && math.Abs(*got-*want) > 1e-9 {
				t.Errorf("%s MRR t-test p = %v, scipy %v", sys.Name, deref(got), deref(want))
			}
		}
		t.Logf("%s: MRR %.3f, Recall@1 %.3f, Recall@5 %.3f, nDCG@10 %.3f", sys.Label, sys.Mean["MRR"], sys.Mean["Recall@1"], sys.Mean["Recall@5"], sys.Mean["nDCG@10"])
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestEnglishBM25Registry(t *testing.T) {
	reg := NewLexicalRegistry()
	r, err := reg.Build("bm25-en", Env{Bench: tinyBench()})
	if err != nil || r.Name() != "BM25 (English, k1=0.9, b=0.4)" {
		t.Fatalf("bm25-en: %v, %v", r, err)
	}
	if r, err = reg.Build("bm25-en:b=0.75", Env{Bench: tinyBench()}); err != nil || r.Name() != "BM25 (English, k1=0.9, b=0.75)" {
		t.Fatalf("bm25-en:b=0.75: %v, %v", r, err)
	}
	if _, err := reg.Build("bm25-en:eps=0.2", Env{Bench: tinyBench()}); err == nil {
		t.Error("bm25-en accepted eps")
	}
	// "posts" and "posting" stem to the tool's "post"; "channels" to "channel".
	c, _ := r.Search("postings to slack channels", 2)
	if len(c) == 0 || c[0].ID != "slack" {
		t.Errorf("stemmed search ranked %+v first, want slack", c)
	}
}

// pytrecRef is one system's figures recomputed by testdata/check_outputs.py.
type pytrecRef struct {
	Mean     map[string]float64            `json:"mean"`
	PerQuery map[string]map[string]float64 `json:"per_query"`
	PTTestRR *float64                      `json:"p_ttest_rr"`
}

// checkOutputs runs testdata/check_outputs.py on the files written to out for the run files
// names (the first is the t-test baseline) and returns its figures by name.
func checkOutputs(t *testing.T, python, out string, names ...string) map[string]pytrecRef {
	t.Helper()
	cmd := exec.Command(python, append([]string{filepath.Join("testdata", "check_outputs.py"), out, "test"}, names...)...)
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("check_outputs.py: %v", err)
	}
	var ref map[string]pytrecRef
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// TestRetrieverNamesCheckedBeforeAnyRuns: a retriever whose argument is wrong is refused before
// the ones listed before it are built (it once failed after they had run), through every family
// that nests names (rrf:, llm-rerank:).
func TestRetrieverNamesCheckedBeforeAnyRuns(t *testing.T) {
	reg := NewLexicalRegistry()
	if err := RegisterFusion(reg); err != nil {
		t.Fatal(err)
	}
	built := 0
	registerSpy(t, reg, &built)
	for _, c := range []struct {
		second, want string
	}{
		{"bm25:k1=x", `retriever bm25:k1=x: parameter "k1=x"`},
		// NaN passed v < 0 and scored every query 0; Inf likewise.
		{"bm25:k1=NaN", `parameter "k1=NaN": want a finite non-negative number`},
		{"bm25:b=NaN", `parameter "b=NaN": want a finite non-negative number`},
		{"bm25:eps=Inf", `parameter "eps=Inf": want a finite non-negative number`},
		{"bm25-en:k1=+Inf", `parameter "k1=+Inf": want a finite non-negative number`},
		{"bm25-en:eps=0.2", "retriever bm25-en:eps=0.2: parameter eps: the English BM25 has no IDF floor"},
		{"rrf:bm25+bm25:b=oops", `part "bm25:b=oops": retriever bm25:b=oops: parameter "b=oops"`},
		{"rrf:bm25+nosuch", `part "nosuch": unknown retriever "nosuch"`},
	} {
		cfg := DefaultConfig()
		cfg.Retrievers, cfg.Baseline = []string{"spy", c.second}, ""
		_, err := Run(Env{Bench: tinyBench()}, "tiny", reg, cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.second, err, c.want)
		}
	}
	if built != 0 {
		t.Errorf("the first retriever was built %d times before the refusal", built)
	}
}

// TestJoinParameters: the pieces a comma-split list flag makes of parameterised names are joined
// back, and plain names are left alone; two names that would share a run file are refused.
func TestJoinParameters(t *testing.T) {
	got := JoinParameters([]string{"tfidf", "bm25-en:k1=1.2", "b=0.75", "rrf:bm25+bm25:k1=1", "b=0.5", "eps=0.1", "dense:m"})
	want := []string{"tfidf", "bm25-en:k1=1.2,b=0.75", "rrf:bm25+bm25:k1=1,b=0.5,eps=0.1", "dense:m"}
	if !slices.Equal(got, want) {
		t.Errorf("JoinParameters = %q, want %q", got, want)
	}
	reg := NewLexicalRegistry()
	if err := reg.Register("dense:", "test", func(Env, string) (retrieve.Retriever, error) { return nil, errors.New("not built") }); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Retrievers, cfg.Baseline = []string{"dense:col/x/y", "dense:col/x_y"}, ""
	if _, err := Run(Env{Bench: tinyBench()}, "tiny", reg, cfg); err == nil || !strings.Contains(err.Error(), "would both write runs/dense_col_x_y.trec") {
		t.Errorf("two names, one run file: %v", err)
	}
}

// registerSpy adds the retriever "spy", a BM25 that counts its builds in *built.
func registerSpy(t *testing.T, reg *Registry, built *int) {
	t.Helper()
	if err := reg.Register("spy", "counts its builds", func(env Env, _ string) (retrieve.Retriever, error) {
		*built++
		return retrieve.NewBM25(env.Bench.Corpus, retrieve.DefaultBM25Params()), nil
	}); err != nil {
		t.Fatal(err)
	}
}

// Two retrievers of one display name (the BM25 label omits epsilon) get their registry names
// added, so Table 1's rows stay apart; a label of its own is left as it is.
func TestSharedLabelsAreToldApart(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Retrievers = []string{"tfidf", "bm25:eps=0.1", "bm25:eps=0.5"}
	cfg.Baseline = "tfidf"
	res, err := Run(Env{Bench: tinyBench()}, "tiny", NewLexicalRegistry(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range Table(res).Rows {
		rows = append(rows, r[0])
	}
	want := []string{"TF-IDF", "BM25 (k1=1.5, b=0.75) [bm25:eps=0.1]", "BM25 (k1=1.5, b=0.75) [bm25:eps=0.5]"}
	if !slices.Equal(rows[:3], want) {
		t.Errorf("rows %q, want %q first", rows, want)
	}
}

// The notes define exactly the measures of the table: a Recall-only table says nothing of
// nDCG or MAP, and MRR and MAP name the ranks they count.
func TestMeasureNotes(t *testing.T) {
	notes := strings.Join(measureNotes([]metrics.Measure{{Kind: metrics.Recall, K: 5}, {Kind: metrics.Recall, K: 10}}, 100), "\n")
	if notes != "Recall@5, Recall@10: fraction of the query's relevant tools found in the top k (trec_eval recall.k)." {
		t.Errorf("Recall-only notes: %q", notes)
	}
	notes = strings.Join(measureNotes([]metrics.Measure{{Kind: metrics.RR}, {Kind: metrics.AP, K: 10}, {Kind: metrics.Precision, K: 5}, {Kind: metrics.RR, K: 10}}, 50), "\n")
	for _, want := range []string{"MRR, MRR@10: mean reciprocal rank of the first relevant tool within the top 50, or the top k for MRR@k",
		"MAP@10: mean over queries of the average precision", "averaged over all the query's relevant tools, within the top k (trec_eval",
		"P@5: relevant tools in the top k divided by k"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "nDCG") || strings.Contains(notes, "Hit") {
		t.Errorf("notes describe measures not in the table:\n%s", notes)
	}
}

// A sample no smaller than the split evaluates every query and says so; a smaller one draws it.
func TestSampleOfWholeSplit(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Sample = 10
	var log strings.Builder
	res, err := Run(Env{Bench: tinyBench(), Log: &log}, "tiny", NewLexicalRegistry(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Queries) != 3 || res.SampledFrom != 0 || !strings.Contains(log.String(), "a sample of 10 is not smaller than the 3 queries with a relevant tool: every query is evaluated") {
		t.Errorf("queries %v, sampled from %d, log:\n%s", res.Queries, res.SampledFrom, log.String())
	}
	cfg.Sample = 2
	if res, err = Run(Env{Bench: tinyBench()}, "tiny", NewLexicalRegistry(), cfg); err != nil || len(res.Queries) != 2 || res.SampledFrom != 3 {
		t.Errorf("a sample of 2 of 3: %v, %v", res, err)
	}
}
