package evaloffline

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rated-dev/rated/pkg/llmrerank"
	"github.com/rated-dev/rated/pkg/metrics"
	"github.com/rated-dev/rated/pkg/retrieve"
	"github.com/rated-dev/rated/pkg/synth"
)

// RegisterLLMRerank adds the "llm-rerank:" family: "llm-rerank:FIRST" reranks the top cfg.Depth
// of the registry retriever FIRST (e.g. llm-rerank:dense:bge-small-en-v1.5) listwise with the
// model behind gen (llmrerank.Reranker). Answers are kept in the journal file journalPath
// (created with its folder), so a rerun or an interrupted run asks only what is missing.
func RegisterLLMRerank(reg *Registry, gen synth.Generator, journalPath string, cfg llmrerank.Config) error {
	if err := reg.Register("llm-rerank:", "listwise LLM reranking of a first stage's top 20 through an OpenAI-compatible endpoint (--rerank-llm), e.g. llm-rerank:dense:bge-small-en-v1.5", func(env Env, arg string) (retrieve.Retriever, error) {
		if !reg.Has(arg) {
			return nil, fmt.Errorf("first stage %q: unknown retriever", arg)
		}
		first, err := reg.Build(arg, env)
		if err != nil {
			return nil, err
		}
		closeFirst := func() {
			if c, ok := first.(io.Closer); ok {
				c.Close()
			}
		}
		if err := os.MkdirAll(filepath.Dir(journalPath), 0o755); err != nil {
			closeFirst()
			return nil, fmt.Errorf("rerank journal: %w", err)
		}
		j, err := synth.OpenJournal(journalPath)
		if err != nil {
			closeFirst()
			return nil, fmt.Errorf("rerank journal: %w", err)
		}
		r, err := llmrerank.New(env.Ctx, first, env.Bench.Corpus, gen, j, cfg)
		if err != nil {
			j.Close()
			closeFirst()
			return nil, err
		}
		r.Progress = env.Progress
		if env.Log != nil {
			fmt.Fprintf(env.Log, "eval offline: %s: answers kept in %s (%d already there)\n", r.Name(), journalPath, len(j.Records()))
		}
		return closingRerank{r, func() error { closeFirst(); return j.Close() }}, nil
	}); err != nil {
		return err
	}
	return reg.SetCheck("llm-rerank:", func(env Env, arg string) error {
		// Before any retriever runs: llmrerank.New would refuse these only after the first stage
		// was built (a dense one encodes the whole corpus first).
		if err := cfg.Check(); err != nil {
			return rerankFlagError(err)
		}
		if err := reg.Check(arg, env); err != nil {
			return fmt.Errorf("first stage: %w", err)
		}
		return nil
	})
}

// rerankFlags are the rated eval offline flags of llmrerank.Config's fields.
var rerankFlags = map[string]string{"Depth": "--rerank-depth", "Concurrency": "--rerank-concurrency"}

// rerankFlagError names the flag of a refused llmrerank.Config field ("--rerank-depth 1: need at
// least 2 candidates to rerank"); a field without a flag keeps the package's message.
func rerankFlagError(err error) error {
	var ce *llmrerank.ConfigError
	if errors.As(err, &ce) {
		if flag, ok := rerankFlags[ce.Field]; ok {
			return fmt.Errorf("%s %d: %s", flag, ce.Value, ce.Reason)
		}
	}
	return err
}

// closingRerank closes the reranker's journal and first stage after its evaluation.
type closingRerank struct {
	*llmrerank.Reranker
	close func() error
}

// Close closes the journal and the first stage.
func (c closingRerank) Close() error { return c.close() }

// Latency is the time a retriever took per query where it measures it (the LLM reranker: the
// model's answer).
type Latency struct {
	MeanMS float64 `json:"mean_ms"`
	P95MS  float64 `json:"p95_ms"`
	// Queries is how many queries were timed; Fresh how many were answered in this run (the
	// rest come from the journal of an earlier run, with the time recorded then).
	Queries int `json:"queries"`
	Fresh   int `json:"fresh"`
}

// latencyOf returns the latency a retriever reports, or nil.
func latencyOf(r retrieve.Retriever) *Latency {
	l, ok := r.(interface{ Latencies() ([]time.Duration, int) })
	if !ok {
		return nil
	}
	ds, fresh := l.Latencies()
	if len(ds) == 0 {
		return nil
	}
	ms := make([]float64, len(ds))
	sum := 0.0
	for i, d := range ds {
		ms[i] = float64(d) / float64(time.Millisecond)
		sum += ms[i]
	}
	return &Latency{MeanMS: sum / float64(len(ms)), P95MS: metrics.Percentile(ms, 95), Queries: len(ms), Fresh: fresh}
}
