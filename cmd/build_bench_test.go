package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/bench"
)

var fakeToolRE = regexp.MustCompile(`Tool: (\w+)\n`)

// fakeOpenAI answers build-bench's two kinds of prompts: query generation (three queries made of
// words of the tool's name) and validation (0.9 when the request names the tool's first word, else 0.2).
func fakeOpenAI(t *testing.T) string {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		p := req.Messages[0].Content
		var text string
		if strings.HasSuffix(p, "Score:") {
			text = "0.2"
			lines := strings.Split(p, "\n")
			reqLine, toolLine := lines[len(lines)-3], lines[len(lines)-2]
			name := strings.SplitN(strings.TrimPrefix(toolLine, "Tool: "), ":", 2)[0]
			if strings.Contains(strings.ToLower(reqLine), strings.Split(name, "_")[0]) {
				text = "0.9"
			}
		} else {
			ms := fakeToolRE.FindAllStringSubmatch(p, -1)
			n := ms[len(ms)-1][1]
			// Words of the tool's own (n1 … n4) keep the queries of two tools apart under the
			// near-duplicate filter.
			m := strings.ReplaceAll(n, "_", "")
			u := fmt.Sprintf("%[1]s1 %[1]s2 %[1]s3 %[1]s4", m)
			text = fmt.Sprintf("I need %s for my work today\n2. please use %s at once\n3. could %s sort out the task", u, u, u)
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"message": map[string]string{"content": text}}}})
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewUnstartedServer(h)
	s.Listener.Close()
	s.Listener = l
	s.Start()
	t.Cleanup(s.Close)
	return s.URL + "/v1"
}

func TestBuildBenchCommand(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "llm.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("host: 127.0.0.1\nport: 1\nmodel: fake\nbase_url: %q\ntemperature: 0.5\nmax_tokens: 64\nseed: 3\nconcurrency: 2\ntimeout_s: 5\nretries: 1\nbackoff_ms: 1\ngguf_sha256: \"\"\n", fakeOpenAI(t))), 0o644)
	queries := filepath.Join(dir, "q.jsonl")
	os.WriteFile(queries, []byte(`{"query_id": 1, "group": "g", "query": "What does wikipedia say about the history of Rome?"}
{"query_id": 2, "group": "g", "query": "Send a gmail message to my team about the weather forecast"}
`), 0o644)
	out := filepath.Join(dir, "out")
	args := []string{"build-bench", "--config", cfg, "--catalog", filepath.Join("..", "pkg", "synth", "testdata", "catalog.jsonl"),
		"--out", out, "--tools", "6", "--queries-per-tool", "3", "--real-queries", queries, "--top-k", "3", "--model-file", cfg, "--retriever", "bm25"}
	run := func() string {
		cmd := newRootCmd()
		var so, se bytes.Buffer
		cmd.SetOut(&so)
		cmd.SetErr(&se)
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("build-bench: %v\n%s", err, se.String())
		}
		return so.String() + se.String()
	}
	first := run()
	// 6 tools × 3 distinct queries; one random negative each, and a hard one where BM25 scores
	// some other tool above zero.
	var nq, npos, nneg int
	at := strings.Index(first, "syn: 6/6 tools generated (0 failed), ")
	if at < 0 {
		t.Fatalf("no syn summary; output:\n%s", first)
	}
	if _, err := fmt.Sscanf(first[at:], "syn: 6/6 tools generated (0 failed), %d queries, %d positive and %d negative pairs", &nq, &npos, &nneg); err != nil || nq != 18 || npos != 18 || nneg < 18 || nneg > 36 {
		t.Fatalf("%v; output:\n%s", err, first)
	}
	syn, err := bench.ReadDir(filepath.Join(out, "syn"))
	if err != nil {
		t.Fatal(err)
	}
	if len(syn.Queries) != 18 || len(syn.Corpus) != 6 || len(syn.Tools) != 6 {
		t.Fatalf("syn: %d queries, %d docs, %d tools", len(syn.Queries), len(syn.Corpus), len(syn.Tools))
	}
	real, err := bench.ReadDir(filepath.Join(out, "real"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range real.Queries {
		for _, id := range append(real.Relevant("dev", q.ID), real.Relevant("test", q.ID)...) {
			if !strings.Contains(strings.ToLower(q.Text), strings.Split(id[strings.LastIndex(id, "/")+1:], "_")[0]) {
				t.Fatalf("kept pair %s / %s that the fake validator scored 0.2", q.Text, id)
			}
		}
	}
	var stats map[string]json.RawMessage
	data, _ := os.ReadFile(filepath.Join(out, "stats.json"))
	if err := json.Unmarshal(data, &stats); err != nil || stats["syn"] == nil || stats["real"] == nil || stats["run"] == nil {
		t.Fatalf("stats.json: %v\n%s", err, data)
	}
	// --model-file is hashed into the datasheet.
	ds, _ := os.ReadFile(filepath.Join(out, "DATASHEET.md"))
	if !strings.Contains(string(ds), "sha256 of "+cfg) {
		t.Fatalf("datasheet does not name the hashed file:\n%s", ds)
	}
	// A rerun resumes from the journals: nothing left to do, same benchmark.
	second := run()
	if !strings.Contains(second, "6 items, 6 already done") {
		t.Fatalf("rerun did not resume:\n%s", second)
	}
	again, _ := bench.ReadDir(filepath.Join(out, "syn"))
	if len(again.Queries) != 18 {
		t.Fatalf("rerun changed the benchmark: %d queries", len(again.Queries))
	}
}

// buildBenchRetrieverRun runs build-bench against the fake LLM with the given extra flags and
// returns the command's output (or error) and the decoded stats.json.
func buildBenchRetrieverRun(t *testing.T, extra ...string) (string, map[string]map[string]any, error) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "llm.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("host: 127.0.0.1\nport: 1\nmodel: fake\nbase_url: %q\ntemperature: 0.5\nmax_tokens: 64\nseed: 3\nconcurrency: 2\ntimeout_s: 5\nretries: 1\nbackoff_ms: 1\ngguf_sha256: \"\"\n", fakeOpenAI(t))), 0o644)
	queries := filepath.Join(dir, "q.jsonl")
	os.WriteFile(queries, []byte(`{"query_id": 1, "group": "g", "query": "What does wikipedia say about the history of Rome?"}
{"query_id": 2, "group": "g", "query": "Send a gmail message to my team about the weather forecast"}
{"query_id": 3, "group": "g", "query": "Translate this paragraph into German with google translate"}
`), 0o644)
	out := filepath.Join(dir, "out")
	args := append([]string{"build-bench", "--config", cfg, "--catalog", filepath.Join("..", "pkg", "synth", "testdata", "catalog.jsonl"),
		"--out", out, "--queries-per-tool", "3", "--real-queries", queries, "--top-k", "3", "--model-file", cfg}, extra...)
	cmd := newRootCmd()
	var so bytes.Buffer
	cmd.SetOut(&so)
	cmd.SetErr(&so)
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		return so.String(), nil, err
	}
	stats := map[string]map[string]any{}
	data, err := os.ReadFile(filepath.Join(out, "stats.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &stats); err != nil {
		t.Fatalf("stats.json: %v", err)
	}
	ds, _ := os.ReadFile(filepath.Join(out, "DATASHEET.md"))
	return so.String() + "\n" + string(ds), stats, nil
}

// TestBuildBenchRetrieverNoSilentFallback: with no encoder installed, auto and dense fail naming
// the asset home and `rated setup models`; BM25 runs only when asked for, and keeps the BM25
// threshold 0 (every top-k candidate goes to the validator).
func TestBuildBenchRetrieverNoSilentFallback(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("RATED_HOME", empty)
	for _, spec := range []string{"auto", "dense"} {
		_, _, err := buildBenchRetrieverRun(t, "--retriever", spec)
		if err == nil || !strings.Contains(err.Error(), "rated setup models") || !strings.Contains(err.Error(), empty+" (RATED_HOME)") ||
			!strings.Contains(err.Error(), "--retriever bm25") {
			t.Fatalf("--retriever %s without an encoder: got %v", spec, err)
		}
	}
	out, stats, err := buildBenchRetrieverRun(t, "--retriever", "bm25")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "retriever: BM25 (requested)") {
		t.Fatalf("the run does not say BM25 was requested:\n%s", out)
	}
	run, real := stats["run"], stats["real"]
	if run["retriever"] != "BM25" || run["retriever_requested"] != "bm25" || real["min_retrieval_score"] != 0.0 ||
		real["retrieval_score_scale"] != "unscaled" || real["dropped_below_retrieval_threshold"] != 0.0 {
		t.Fatalf("run %v\nreal %v", run, real)
	}
	if _, _, err := buildBenchRetrieverRun(t, "--retriever", "tfidf"); err == nil || !strings.Contains(err.Error(), "unknown retriever") {
		t.Fatalf("--retriever tfidf: got %v", err)
	}
}

// TestBuildBenchDenseRetriever runs build-bench with the installed bge-small: the candidates are
// cosines, the default threshold is the paper's 0.7, the journal holds only pairs at or above it,
// and stats.json and the datasheet name the encoder.
func TestBuildBenchDenseRetriever(t *testing.T) {
	testassets.ORTLibrary(t)
	testassets.Model(t, "bge-small-en-v1.5")
	t.Setenv("RATED_HOME", testassets.Dir(t))
	out, stats, err := buildBenchRetrieverRun(t, "--retriever", "dense:bge-small-en-v1.5")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	run, real, syn := stats["run"], stats["real"], stats["syn"]
	if run["retriever"] != "dense:bge-small-en-v1.5" || real["retrieval_score_scale"] != "cosine" || real["min_retrieval_score"] != 0.7 ||
		syn["hard_negative_retriever"] != "dense:bge-small-en-v1.5" {
		t.Fatalf("run %v\nreal %v", run, real)
	}
	if !strings.Contains(out, "candidate pairs score below 0.7 under dense:bge-small-en-v1.5 (cosine scores") ||
		!strings.Contains(out, "pairs scoring below 0.7 dropped (the paper: cosine 0.7 with GTE-Large)") {
		t.Fatalf("the run or the datasheet does not report the cosine threshold:\n%s", out)
	}
	if !strings.Contains(out, "Retriever for hard negatives and Real candidates: dense:bge-small-en-v1.5 (model folder") {
		t.Fatalf("datasheet does not name the encoder:\n%s", out)
	}
	// 3 queries × top 3 = 9 candidates; every one is either below 0.7 or went to the validator.
	cand, low, val, failed := real["candidate_pairs"].(float64), real["dropped_below_retrieval_threshold"].(float64), real["validated_pairs"].(float64), real["validation_failed"].(float64)
	if cand != 9 || low+val+failed != cand {
		t.Fatalf("candidates %v, below threshold %v, validated %v, failed %v", cand, low, val, failed)
	}
	dist := real["retrieval_score_distribution"].(map[string]any)
	if dist["n"] != 9.0 || dist["max"].(float64) > 1+1e-6 || dist["min"].(float64) < -1-1e-6 {
		t.Fatalf("distribution %v", dist)
	}
	var below float64
	for _, s := range real["retrieval_threshold_sweep"].([]any) {
		step := s.(map[string]any)
		if step["threshold"] == 0.7 {
			below = step["removed"].(float64)
		}
	}
	if below != low {
		t.Fatalf("the sweep at 0.7 removes %v pairs, the run dropped %v", below, low)
	}
	// --min-retrieval-score given explicitly wins over the dense default.
	_, stats, err = buildBenchRetrieverRun(t, "--retriever", "dense:bge-small-en-v1.5", "--min-retrieval-score", "0", "--no-syn")
	if err != nil {
		t.Fatal(err)
	}
	if r := stats["real"]; r["min_retrieval_score"] != 0.0 || r["dropped_below_retrieval_threshold"] != 0.0 {
		t.Fatalf("explicit threshold 0: %v", r)
	}
}

// Counts that cannot build a benchmark are refused before anything is read or asked (the run
// would otherwise retrieve with --retrieval-only, no LLM needed), naming the flag; no --out is
// created.
func TestBuildBenchRefusesBadCounts(t *testing.T) {
	t.Setenv("RATED_HOME", t.TempDir())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--top-k", "0"}, "--top-k 0: each real query needs at least 1 candidate tool"},
		{[]string{"--top-k", "-3"}, "--top-k -3: each real query needs at least 1 candidate tool"},
		{[]string{"--tools", "-1"}, "--tools -1: must be >= 0"},
		{[]string{"--per-platform", "-2"}, "--per-platform -2: must be >= 0"},
		{[]string{"--real-limit", "-5"}, "--real-limit -5: must be >= 0"},
		{[]string{"--hard-negatives", "-1"}, "--hard-negatives -1: must be >= 0"},
		// These panicked or failed only after the LLM had generated everything.
		{[]string{"--queries-per-tool", "-2"}, "--queries-per-tool -2: must be at least 1"},
		{[]string{"--queries-per-tool", "0"}, "--queries-per-tool 0: must be at least 1"},
		{[]string{"--min-words", "10", "--max-words", "5"}, "--max-words 5: below --min-words 10"},
		{[]string{"--dedupe", "2"}, "--dedupe 2: must be in (0, 1)"},
		{[]string{"--dedupe", "1"}, "--dedupe 1: must be in (0, 1)"},
		{[]string{"--dedupe", "0"}, "--dedupe 0: must be in (0, 1)"},
		{[]string{"--keep-score", "-1"}, "--keep-score -1: must be in [0, 1]"},
		{[]string{"--min-success", "1.5"}, "--min-success 1.5: must be in [0, 1]"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		_, _, err := runRated(append([]string{"build-bench", "--out", out, "--retrieval-only", "--retriever", "bm25"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: --out exists after a refused run (%v)", c.args, err)
		}
	}
}

// TestBuildBenchRefusesAnEmptyReal: when no candidate pair passes --min-retrieval-score, the run
// stops before the validator is asked, naming the flag, instead of writing an empty Real set and
// exiting 0.
func TestBuildBenchRefusesAnEmptyReal(t *testing.T) {
	_, _, err := buildBenchRetrieverRun(t, "--retriever", "bm25", "--no-syn", "--min-retrieval-score", "1e9")
	if err == nil || !strings.Contains(err.Error(), "no candidate pair of the 3 queries scores at least --min-retrieval-score 1e+09") {
		t.Fatalf("error %v, want the refusal naming --min-retrieval-score", err)
	}
}
