package synth

import (
	"context"
	"github.com/rated-dev/rated/data"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// realLLM makes sure the local Gemma of configs/llm.yaml answers: it skips (or fails under
// RATED_REQUIRE_ASSETS=1) when the server or the weights are not installed, starts the server
// with scripts/llm-up when it is not running (and stops it again at the end of the test), and
// returns a client for it with the weights' digest.
func realLLM(t testing.TB) (*Client, LLMConfig, string) {
	t.Helper()
	root := testassets.Root(t)
	assets := testassets.Dir(t)
	cfg, err := LoadLLMConfig(filepath.Join(root, "configs", "llm.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	testassets.Need(t, "Ollama server (scripts/setup.d/40-llm.sh)", filepath.Join(assets, "llm", "bin", "ollama"))
	gguf := testassets.Need(t, "Gemma GGUF weights (scripts/setup.d/40-llm.sh)", filepath.Join(assets, cfg.GGUF))
	hc := &http.Client{Timeout: 3 * time.Second}
	if resp, err := hc.Get(cfg.ResolvedBaseURL() + "/models"); err == nil {
		resp.Body.Close()
	} else {
		// Registered first: llm-up can start the server and still fail (not ready in time on a
		// loaded machine), and the server must not outlive the test either way (llm-down is
		// idempotent).
		t.Cleanup(func() {
			down := exec.Command(filepath.Join(root, "scripts", "llm-down"))
			down.Env = append(os.Environ(), "RATED_HOME="+assets)
			if out, err := down.CombinedOutput(); err != nil {
				t.Errorf("scripts/llm-down: %v\n%s", err, out)
			}
		})
		up := exec.Command(filepath.Join(root, "scripts", "llm-up"))
		up.Env = append(os.Environ(), "RATED_HOME="+assets)
		if out, err := up.CombinedOutput(); err != nil {
			t.Fatalf("scripts/llm-up: %v\n%s", err, out)
		}
	}
	// Make sure llm-up also works when the server is already running (idempotent).
	again := exec.Command(filepath.Join(root, "scripts", "llm-up"))
	again.Env = append(os.Environ(), "RATED_HOME="+assets)
	if out, err := again.CombinedOutput(); err != nil || !strings.Contains(string(out), "ready") {
		t.Fatalf("second scripts/llm-up: %v\n%s", err, out)
	}
	digest, err := FileSHA256(gguf)
	if err != nil {
		t.Fatal(err)
	}
	if digest != cfg.GGUFSHA256 {
		t.Fatalf("weights digest %s, configs/llm.yaml declares %s", digest, cfg.GGUFSHA256)
	}
	cl, err := NewClient(cfg.ClientConfig(), &http.Client{})
	if err != nil {
		t.Fatal(err)
	}
	return cl, cfg, digest
}

// TestEndToEndRealGemma builds EcoAgent-Syn (5 tools × 3 queries) and EcoAgent-Real (10
// ToolBench queries × top 2 tools) with the real local Gemma, writes them, reads them back with
// pkg/bench and checks the invariants of the output.
func TestEndToEndRealGemma(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real local LLM")
	}
	cl, lc, digest := realLLM(t)
	all, err := catalog.ReadJSONL(filepath.Join("testdata", "catalog.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tools := SampleTools(all, 5, nil, 0, 1)
	ret := retrieve.NewBM25(bench.DocsFromTools(tools), retrieve.DefaultBM25Params())
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	syn := DefaultSynConfig()
	syn.QueriesPerTool, syn.Concurrency, syn.Seed = 3, lc.Concurrency, lc.Seed
	sj, err := OpenJournal(filepath.Join(out, "syn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer sj.Close()
	if err := GenerateSyn(ctx, cl, tools, syn, sj, nil, time.Now); err != nil {
		t.Fatal(err)
	}
	sres, err := AssembleSyn(tools, sj, ret, syn)
	if err != nil {
		t.Fatal(err)
	}
	st := sres.Stats
	t.Logf("syn stats: %+v", st)
	if st.ToolsOK+st.ToolsFailed != 5 || st.ToolsOK == 0 || st.Queries == 0 {
		t.Fatalf("syn: %d ok, %d failed, %d queries", st.ToolsOK, st.ToolsFailed, st.Queries)
	}
	if got := st.Queries + st.DroppedTooShort + st.DroppedTooLong + st.DroppedCopiedExample + st.DroppedNearDup; got != st.QueriesParsed {
		t.Fatalf("stage counts do not add up: kept %d + drops = %d, parsed %d", st.Queries, got, st.QueriesParsed)
	}
	if st.PositivePairs != st.Queries || st.NegativePairs > 2*st.PositivePairs || st.NegativePairs < st.PositivePairs {
		t.Fatalf("positives %d, negatives %d for %d queries", st.PositivePairs, st.NegativePairs, st.Queries)
	}

	queries, err := ParseRealQueries(data.ToolBenchQueriesName, data.ToolBenchQueries)
	if err != nil {
		t.Fatal(err)
	}
	queries = queries[:10]
	real := DefaultRealConfig()
	real.TopK, real.Concurrency, real.Seed = 2, lc.Concurrency, lc.Seed
	pairs, err := RealCandidates(ret, queries, tools, real.TopK)
	if err != nil {
		t.Fatal(err)
	}
	rj, err := OpenJournal(filepath.Join(out, "real.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer rj.Close()
	if err := ValidateReal(ctx, cl, pairs, tools, real, rj, nil, time.Now); err != nil {
		t.Fatal(err)
	}
	rres, err := AssembleReal(tools, queries, pairs, rj, ret.Name(), real)
	if err != nil {
		t.Fatal(err)
	}
	rs := rres.Stats
	t.Logf("real stats: %+v", rs)
	if rs.ValidatedPairs+rs.ValidationFailed+rs.DroppedLowScore != rs.CandidatePairs || rs.ValidatedPairs == 0 {
		t.Fatalf("real: %d candidates, %d validated, %d failed", rs.CandidatePairs, rs.ValidatedPairs, rs.ValidationFailed)
	}
	for _, r := range rj.Records() {
		if r.OK && (r.Score < 0 || r.Score > 1) {
			t.Fatalf("validator score %g out of [0, 1]", r.Score)
		}
	}

	o := Output{Info: RunInfo{Tool: "e2e test", StartedAt: time.Now(), FinishedAt: time.Now(), Model: cl.Model(), BaseURL: lc.ResolvedBaseURL(), ModelDigest: digest, DigestSource: "test", Retriever: ret.Name(), Syn: &syn, Real: &real}, Syn: sres, Real: rres}
	if err := o.Write(out); err != nil {
		t.Fatal(err)
	}
	b, err := bench.ReadDir(filepath.Join(out, "syn"))
	if err != nil {
		t.Fatal(err)
	}
	splitOf := map[string]string{}
	for split, q := range b.Splits {
		for qid, rel := range q {
			if len(rel) != 1 {
				t.Fatalf("syn query %s has %d positives", qid, len(rel))
			}
			splitOf[qid] = split
		}
	}
	for _, q := range b.Queries {
		if n := WordCount(q.Text); n < 5 || n > 120 {
			t.Fatalf("kept query of %d words: %q", n, q.Text)
		}
		if _, ok := splitOf[q.ID]; !ok {
			t.Fatalf("query %s in no split", q.ID)
		}
	}
	ds, _ := os.ReadFile(filepath.Join(out, "DATASHEET.md"))
	if !strings.Contains(string(ds), digest) {
		t.Fatal("DATASHEET.md does not record the model digest")
	}
	if _, err := bench.ReadDir(filepath.Join(out, "real")); err != nil && rs.Queries > 0 {
		t.Fatal(err)
	}
}
