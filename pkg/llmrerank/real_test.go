package llmrerank

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/retrieve"
	"github.com/rated-dev/rated/pkg/synth"
)

// TestRealLLMReranks reranks the BM25 top 5 of two default-benchmark queries with the EcoAgent
// generator (configs/llm-candidates/qwen2.5-coder-1.5b.yaml, the reranker's default) that `rated
// setup llm` installs, started with scripts/llm-up on that configuration when it is not running. It skips (fails under RATED_REQUIRE_ASSETS=1) only when the server or the weights are
// not installed, and checks what a real model's answers must give: each list is a reordering of
// the first stage's head, every answer is journalled with its time, and a rerun asks nothing.
func TestRealLLMReranks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real local LLM")
	}
	root, assets := testassets.Root(t), testassets.Dir(t)
	cfgPath := filepath.Join(root, "configs", "llm-candidates", "qwen2.5-coder-1.5b.yaml")
	lc, err := synth.LoadLLMConfig(cfgPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	testassets.Need(t, "Ollama server (rated setup llm)", filepath.Join(assets, "llm", "bin", "ollama"))
	testassets.Need(t, "LLM weights (rated setup llm, 45-llm-generator.sh)", filepath.Join(assets, lc.GGUF))
	if resp, err := (&http.Client{Timeout: 3 * time.Second}).Get(lc.ResolvedBaseURL() + "/models"); err == nil {
		resp.Body.Close()
	} else {
		script := func(name string) *exec.Cmd {
			c := exec.Command(filepath.Join(root, "scripts", name))
			c.Env = append(os.Environ(), "RATED_HOME="+assets, "RATED_LLM_CONFIG="+cfgPath)
			return c
		}
		if out, err := script("llm-up").CombinedOutput(); err != nil {
			t.Fatalf("scripts/llm-up: %v\n%s", err, out)
		}
		t.Cleanup(func() {
			if out, err := script("llm-down").CombinedOutput(); err != nil {
				t.Errorf("scripts/llm-down: %v\n%s", err, out)
			}
		})
	}
	cc := lc.ClientConfig()
	cc.Temperature = 0
	gen, err := synth.NewClient(cc, &http.Client{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := defaultbench.Load()
	if err != nil {
		t.Fatal(err)
	}
	first := retrieve.NewBM25(b.Corpus, retrieve.DefaultBM25Params())
	queries := []string{b.Queries[0].Text, b.Queries[500].Text}
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := synth.OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Depth = 5
	r, err := New(context.Background(), first, b.Corpus, gen, j, cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.SearchBatch(queries, 10)
	if err != nil {
		t.Fatalf("%s: %v", lc.Model, err)
	}
	for qi, q := range queries {
		head, _ := first.Search(q, 5)
		if len(got[qi]) != len(head) {
			t.Fatalf("query %d: %d reranked of %d", qi, len(got[qi]), len(head))
		}
		seen := map[string]bool{}
		for _, c := range head {
			seen[c.ID] = true
		}
		for _, c := range got[qi] {
			if !seen[c.ID] {
				t.Fatalf("query %d: %s is not in the head", qi, c.ID)
			}
			delete(seen, c.ID)
		}
	}
	lat, fresh := r.Latencies()
	if fresh != 2 || lat[0] <= 0 || lat[1] <= 0 {
		t.Errorf("latencies %v, %d fresh", lat, fresh)
	}
	for _, rec := range j.Records() {
		t.Logf("%s answered %q in %d ms", lc.Model, rec.Raw, rec.ElapsedMS)
	}
	if _, err := r.SearchBatch(queries, 10); err != nil {
		t.Fatal(err)
	}
	if _, fresh := r.Latencies(); fresh != 2 {
		t.Errorf("the rerun asked the model again (%d answers in all)", fresh)
	}
}
