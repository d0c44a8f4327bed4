package evaloffline

import (
	"context"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/llmrerank"
	"github.com/rated-dev/rated/pkg/synth"
)

// reversingLLM answers every listwise prompt with its identifiers in reverse order.
func reversingLLM(t *testing.T) synth.Generator {
	t.Helper()
	ids := regexp.MustCompile(`(?m)^\[(\d+)\] `)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []synth.Message `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		m := ids.FindAllStringSubmatch(req.Messages[0].Content, -1)
		var parts []string
		for i := len(m) - 1; i >= 0; i-- {
			parts = append(parts, "["+m[i][1]+"]")
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"content": strings.Join(parts, " > ")}}}})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	c, err := synth.NewClient(synth.ClientConfig{BaseURL: srv.URL + "/v1", Model: "reverser", Timeout: 5 * time.Second}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLLMRerankRowMatchesPytrecEval evaluates an llm-rerank row (over BM25, with a fake model that
// reverses each top 20) on a seeded sample of the default benchmark and recomputes it with
// pytrec_eval from the written files; the reversed lists must be the first stage's top 20
// reversed.
func TestLLMRerankRowMatchesPytrecEval(t *testing.T) {
	python := testassets.Python(t)
	b, err := defaultbench.Load()
	if err != nil {
		t.Fatal(err)
	}
	reg := NewLexicalRegistry()
	if err := RegisterLLMRerank(reg, reversingLLM(t), filepath.Join(t.TempDir(), "rerank", "j.jsonl"), llmrerank.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Retrievers, cfg.Baseline, cfg.Sample, cfg.Rounds = []string{"bm25", "llm-rerank:bm25"}, "bm25", 40, 200
	res, err := Run(Env{Ctx: context.Background(), Bench: b}, "default", reg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Queries) != 40 || res.SampledFrom != 1044 {
		t.Fatalf("%d queries sampled from %d, want 40 of 1044", len(res.Queries), res.SampledFrom)
	}
	first, _ := reg.Build("bm25", Env{Bench: b})
	text := map[string]string{}
	for _, q := range b.Queries {
		text[q.ID] = q.Text
	}
	for qi, qid := range res.Queries {
		base, _ := first.Search(text[qid], 20)
		re := res.Systems[1].runs[qi]
		if len(re) != len(base) {
			t.Fatalf("query %d: %d reranked, want %d", qi, len(re), len(base))
		}
		for p := range base {
			if re[p].ID != base[len(base)-1-p].ID {
				t.Fatalf("query %d position %d: %s, want %s (the top %d reversed)", qi, p, re[p].ID, base[len(base)-1-p].ID, len(base))
			}
		}
	}
	if l := res.Systems[1].Latency; l == nil || l.Queries != 40 || l.Fresh != 40 {
		t.Errorf("latency %+v", l)
	}
	out := t.TempDir()
	if err := WriteOutputs(out, res); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "table1.md"))
	for _, s := range []string{"a sample of 40 (seed 1) of the 1044 queries", "ms per query on average", "Runs shorter than the depth 100"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("table1.md lacks %q", s)
		}
	}
	name := strings.TrimSuffix(RunFileName("llm-rerank:bm25"), ".trec")
	ref := checkOutputs(t, python, out, "bm25", name)
	for mi, m := range cfg.Measures {
		got, want := res.Systems[1].Mean[res.Measures[mi]], ref[name].Mean[m.TrecEvalName()]
		if math.Abs(got-want) > 1e-6 {
			t.Errorf("%s = %v, pytrec_eval %v", res.Measures[mi], got, want)
		}
	}
}

// A rerank depth or concurrency that could never work is refused by the names' check, before
// any retriever runs (the depth used to be refused only once bm25 had been evaluated).
func TestLLMRerankSettingsCheckedBeforeAnyRuns(t *testing.T) {
	for _, c := range []struct {
		depth, concurrency int
		want               string
	}{
		{0, 1, "--rerank-depth 0: need at least 2"},
		{1, 1, "--rerank-depth 1: need at least 2"},
		{20, 0, "--rerank-concurrency 0: need at least 1"},
	} {
		reg := NewLexicalRegistry()
		built := 0
		registerSpy(t, reg, &built)
		rc := llmrerank.DefaultConfig()
		rc.Depth, rc.Concurrency = c.depth, c.concurrency
		if err := RegisterLLMRerank(reg, reversingLLM(t), filepath.Join(t.TempDir(), "j.jsonl"), rc); err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.Retrievers, cfg.Baseline = []string{"spy", "llm-rerank:bm25"}, ""
		_, err := Run(Env{Ctx: context.Background(), Bench: tinyBench()}, "tiny", reg, cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || built != 0 {
			t.Errorf("depth %d concurrency %d: %v after %d builds, want %q before any", c.depth, c.concurrency, err, built, c.want)
		}
	}
}
