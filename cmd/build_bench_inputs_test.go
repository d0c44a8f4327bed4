package cmd

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// serveLoopback serves h on 127.0.0.1 and returns the API root (…/v1).
func serveLoopback(t *testing.T, h http.Handler) string {
	t.Helper()
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

// llmYAML writes an llm.yaml for baseURL with extra lines appended.
func llmYAML(t *testing.T, baseURL, extra string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "llm.yaml")
	body := fmt.Sprintf("host: 127.0.0.1\nport: 1\nmodel: fake\nbase_url: %q\ntemperature: 0.5\nmax_tokens: 64\nseed: 3\nconcurrency: 2\ntimeout_s: 5\nretries: 1\nbackoff_ms: 1\n%s", baseURL, extra)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func synArgs(cfg, out string, extra ...string) []string {
	return append([]string{"build-bench", "--config", cfg, "--catalog", filepath.Join("..", "pkg", "synth", "testdata", "catalog.jsonl"),
		"--out", out, "--tools", "3", "--queries-per-tool", "3", "--no-real", "--retriever", "bm25"}, extra...)
}

func readStats(t *testing.T, out string) map[string]map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, "stats.json"))
	if err != nil {
		t.Fatal(err)
	}
	stats := map[string]map[string]any{}
	if err := json.Unmarshal(data, &stats); err != nil {
		t.Fatal(err)
	}
	return stats
}

// TestBuildBenchFailsWhenTheLLMFails (issue 16 item 11): with every request failing, build-bench
// exited 0 with a complete-looking benchmark of 0 queries. It now fails, says why, and leaves
// --out as it was.
func TestBuildBenchFailsWhenTheLLMFails(t *testing.T) {
	down := serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "model not loaded", http.StatusServiceUnavailable)
	}))
	out := filepath.Join(t.TempDir(), "out")
	_, stderr, err := runRated(synArgs(llmYAML(t, down, ""), out)...)
	if err == nil {
		t.Fatal("build-bench succeeded with every request failing")
	}
	for _, want := range []string{"0 of 3 tools", "--min-success 0.5", "http_5xx"} {
		if !strings.Contains(err.Error()+stderr, want) {
			t.Errorf("error and stderr lack %q:\n%v\n%s", want, err, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "syn")); err == nil {
		t.Error("a benchmark was written")
	}
	if _, err := os.Stat(filepath.Join(out, "journal", "syn.jsonl")); err != nil {
		t.Errorf("the journal of the failed requests is gone: %v", err)
	}
}

// countingLLM is fakeOpenAI's handler with a count of generation requests.
func countingLLM(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	inner := fakeOpenAI(t)
	target := strings.TrimSuffix(inner, "/v1")
	proxy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r) // GET /models: this endpoint reports no digest
			return
		}
		n.Add(1)
		resp, err := http.Post(target+r.URL.Path, "application/json", r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		var body json.RawMessage
		json.NewDecoder(resp.Body).Decode(&body)
		w.Write(body)
	})
	return serveLoopback(t, proxy), &n
}

// TestBuildBenchSeedIsPartOfTheJournalKey (issue 16 item 12): a rerun with another --seed
// reused the first seed's answers; every setting that changes an answer is now in the journal
// key, and the seed is in stats.json.
func TestBuildBenchSeedIsPartOfTheJournalKey(t *testing.T) {
	url, requests := countingLLM(t)
	cfg := llmYAML(t, url, "")
	out := filepath.Join(t.TempDir(), "out")
	for i, c := range []struct {
		seed string
		want int64 // requests made by this run
	}{{"3", 3}, {"4", 3}, {"4", 0}, {"3", 0}} {
		before := requests.Load()
		if _, stderr, err := runRated(synArgs(cfg, out, "--seed", c.seed)...); err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, stderr)
		}
		if got := requests.Load() - before; got != c.want {
			t.Errorf("run %d (--seed %s): %d requests, want %d", i, c.seed, got, c.want)
		}
		stats := readStats(t, out)
		if stats["run"]["seed"] != json.Number(c.seed) && fmt.Sprint(stats["run"]["seed"]) != c.seed {
			t.Errorf("run %d: stats.json run.seed = %v, want %s", i, stats["run"]["seed"], c.seed)
		}
	}
	// Another temperature is another setting.
	before := requests.Load()
	cfg2 := llmYAML(t, url, "")
	os.WriteFile(cfg2, []byte(strings.Replace(mustRead(t, cfg2), "temperature: 0.5", "temperature: 0.9", 1)), 0o644)
	if _, stderr, err := runRated(synArgs(cfg2, out, "--seed", "3")...); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if got := requests.Load() - before; got != 3 {
		t.Errorf("another temperature: %d requests, want 3", got)
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestBuildBenchDigestOfAnotherEndpoint (issue 16 item 13): with base_url pointing at another
// server, stats.json recorded the local GGUF's sha256 as the model digest; it now records what
// the endpoint reports, or "unknown".
func TestBuildBenchDigestOfAnotherEndpoint(t *testing.T) {
	gen := fakeOpenAI(t)
	target := strings.TrimSuffix(gen, "/v1")
	for _, c := range []struct {
		models string // the endpoint's GET /v1/models answer
		want   string
	}{
		{`{"object":"list","data":[{"id":"fake","object":"model","owned_by":"me"}]}`, "unknown"},
		{`{"object":"list","data":[{"id":"other","digest":"sha256:0000"},{"id":"fake","digest":"sha256:abcd"}]}`, "sha256:abcd"},
	} {
		url := serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
				w.Write([]byte(c.models))
				return
			}
			resp, err := http.Post(target+r.URL.Path, "application/json", r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			var body json.RawMessage
			json.NewDecoder(resp.Body).Decode(&body)
			w.Write(body)
		}))
		declared := strings.Repeat("a", 64)
		cfg := llmYAML(t, url, "gguf: llm/models/local.gguf\ngguf_sha256: "+declared+"\n")
		out := filepath.Join(t.TempDir(), "out")
		if _, stderr, err := runRated(synArgs(cfg, out)...); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		run := readStats(t, out)["run"]
		if run["model_digest"] != c.want || !strings.Contains(fmt.Sprint(run["model_digest_source"]), url) {
			t.Errorf("model_digest %v (%v), want %q reported by %s", run["model_digest"], run["model_digest_source"], c.want, url)
		}
	}
}

// TestBuildBenchKeepsAuditJournals: build-bench audit-syn journals its judge under <out>/audit/;
// a later build-bench into the same --out keeps them (they are resume state, not foreign files).
func TestBuildBenchKeepsAuditJournals(t *testing.T) {
	url, _ := countingLLM(t)
	cfg := llmYAML(t, url, "")
	out := filepath.Join(t.TempDir(), "out")
	if _, stderr, err := runRated(synArgs(cfg, out)...); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	judge := filepath.Join(out, "audit", "judge-fake.jsonl")
	os.MkdirAll(filepath.Dir(judge), 0o755)
	os.WriteFile(judge, []byte(`{"key":"real/q/t","ok":true,"score":0.9,"attempts":1,"seed":1,"elapsed_ms":1}`+"\n"), 0o644)
	if _, stderr, err := runRated(synArgs(cfg, out, "--seed", "5")...); err != nil {
		t.Fatalf("rerun with audit/ in --out: %v\n%s", err, stderr)
	}
	if got := mustRead(t, judge); !strings.Contains(got, `"real/q/t"`) {
		t.Fatalf("judge journal after the rerun: %q", got)
	}
}

// TestBuildBenchAuditSamplesTaggedJournal: the audit samples the Real pairs of a journal written
// by the current build (keys "real@<settings tag>/…"), and a journal with none is an error naming
// it rather than an empty CSV.
func TestBuildBenchAuditSamplesTaggedJournal(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "journal"), 0o755)
	os.MkdirAll(filepath.Join(dir, "real"), 0o755)
	os.WriteFile(filepath.Join(dir, "real", "catalog.jsonl"), []byte(`{"id":"t1","name":"one","description":"does one thing","platform":"n8n"}`+"\n"), 0o644)
	journal := filepath.Join(dir, "journal", "real.jsonl")
	os.WriteFile(journal, []byte(`{"key":"syn@abc/n10/t1","ok":true,"tool_id":"t1","attempts":1,"seed":1,"elapsed_ms":1}`+"\n"), 0o644)
	csvPath := filepath.Join(dir, "audit.csv")
	_, _, err := runRated("build-bench", "audit", "--dir", dir, "--out-csv", csvPath)
	if err == nil || !strings.Contains(err.Error(), journal) || !strings.Contains(err.Error(), "no validated Real pairs") {
		t.Fatalf("a journal without Real pairs: %v", err)
	}
	os.WriteFile(journal, []byte(`{"key":"real@abc/q1/t1","ok":true,"tool_id":"t1","query_id":"q1","query":"do one thing","score":0.9,"attempts":1,"seed":1,"elapsed_ms":1}`+"\n"), 0o644)
	if _, stderr, err := runRated("build-bench", "audit", "--dir", dir, "--out-csv", csvPath); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if got := mustRead(t, csvPath); !strings.Contains(got, "q1") || strings.Count(got, "\n") != 2 {
		t.Fatalf("audit CSV:\n%s", got)
	}
}

// TestBuildBenchRealQueriesReadFirst: a malformed --real-queries file was read only after the
// whole Syn generation had run (hours on a CPU); it is refused, naming the file and line, before
// the LLM is asked anything or --out is made.
func TestBuildBenchRealQueriesReadFirst(t *testing.T) {
	var asked atomic.Int64
	base := serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Error(w, "not expected", http.StatusInternalServerError)
	}))
	bad := filepath.Join(t.TempDir(), "real.jsonl")
	os.WriteFile(bad, []byte(`{"query_id":"q1","query":"find a flight"}`+"\n"+`{"query_id":"q2"}`+"\n"), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	args := synArgs(llmYAML(t, base, ""), out, "--real-queries", bad)
	args = slices.DeleteFunc(args, func(a string) bool { return a == "--no-real" })
	_, stderr, err := runRated(args...)
	if err == nil || !strings.Contains(err.Error(), bad+":2: want query_id and query") {
		t.Fatalf("error %v, want it to name %s:2", err, bad)
	}
	if asked.Load() != 0 || strings.Contains(stderr, "retriever:") {
		t.Errorf("work started before the refusal (%d requests):\n%s", asked.Load(), stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was created", out)
	}
}

// TestBuildBenchAuditSamplesTheBuildsTag: a journal shared by runs under other settings (another
// model or seed) held their verdicts too, and the audit sampled them all as this build's. It
// samples the tag stats.json records, refuses to guess between several without it, and takes
// --tag.
func TestBuildBenchAuditSamplesTheBuildsTag(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "journal"), 0o755)
	os.MkdirAll(filepath.Join(dir, "real"), 0o755)
	os.WriteFile(filepath.Join(dir, "real", "catalog.jsonl"), []byte(`{"id":"t1","name":"one","description":"does one thing","platform":"n8n"}`+"\n"), 0o644)
	journal := filepath.Join(dir, "journal", "real.jsonl")
	os.WriteFile(journal, []byte(`{"key":"real@old.p1/q1/t1","ok":true,"tool_id":"t1","query_id":"q1","query":"from the old model","score":0.9,"attempts":1,"seed":1,"elapsed_ms":1}
{"key":"real@new.p2/q2/t1","ok":true,"tool_id":"t1","query_id":"q2","query":"from the new model","score":0.2,"attempts":1,"seed":1,"elapsed_ms":1}
`), 0o644)
	csvPath := filepath.Join(dir, "audit.csv")
	audit := func(extra ...string) (string, error) {
		_, stderr, err := runRated(append([]string{"build-bench", "audit", "--dir", dir, "--out-csv", csvPath}, extra...)...)
		if err != nil {
			return "", fmt.Errorf("%w\n%s", err, stderr)
		}
		return mustRead(t, csvPath), nil
	}
	if _, err := audit(); err == nil || !strings.Contains(err.Error(), `holds Real verdicts under 2 settings tags, "new" (1 records), "old" (1 records)`) || !strings.Contains(err.Error(), "pass --tag") {
		t.Fatalf("two tags without stats.json: %v", err)
	}
	if got, err := audit("--tag", "old"); err != nil || !strings.Contains(got, "q1") || strings.Contains(got, "q2") {
		t.Fatalf("--tag old: %v\n%s", err, got)
	}
	os.WriteFile(filepath.Join(dir, "stats.json"), []byte(`{"run": {"real_config": {"JournalTag": "new"}}}`), 0o644)
	if got, err := audit(); err != nil || !strings.Contains(got, "q2") || strings.Contains(got, "q1") {
		t.Fatalf("the tag of stats.json: %v\n%s", err, got)
	}
}

// TestBuildBenchUnknownPlatformRefused: a misspelled --platforms value beside a good one was
// dropped by the sampling, and the benchmark was built without that platform.
func TestBuildBenchUnknownPlatformRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	args := synArgs(llmYAML(t, "http://127.0.0.1:1/v1", ""), out, "--platforms", "n8n,langchian")
	_, stderr, err := runRated(args...)
	if err == nil || !strings.Contains(err.Error(), `catalog.jsonl: --platforms "langchian": no tool of the catalog is on that platform (platforms: `) {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(stderr, "retriever:") {
		t.Errorf("work started before the refusal:\n%s", stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was created", out)
	}
}

// TestBuildBenchSkippedPartIsNotDeleted: --no-real into an --out that held an earlier run's
// real/ replaced the whole set and deleted real/ without a word.
func TestBuildBenchSkippedPartIsNotDeleted(t *testing.T) {
	out := t.TempDir()
	os.MkdirAll(filepath.Join(out, "real"), 0o755)
	os.WriteFile(filepath.Join(out, "real", "corpus.jsonl"), []byte("{}\n"), 0o644)
	_, _, err := runRated(synArgs(llmYAML(t, "http://127.0.0.1:1/v1", ""), out)...)
	if err == nil || !strings.Contains(err.Error(), "--no-real: --out "+out+" holds real/ of an earlier run") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "real", "corpus.jsonl")); err != nil {
		t.Fatalf("real/ was touched: %v", err)
	}
}
