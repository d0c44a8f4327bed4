// Package llmrerank reranks a first-stage retriever's candidates with an instruction-tuned LLM
// behind an OpenAI-compatible chat-completions endpoint (synth.Generator): the paper's
// cross-encoder reranker row, for which no cross-encoder weights are available here. It is
// listwise, as RankGPT: one prompt per query lists the first stage's top Depth tools with
// numbered identifiers, and the model answers with the identifiers in order of usefulness
// ("[3] > [1] > [7]"). Identifiers the answer leaves out follow in first-stage order. Every answer
// is kept in a journal (synth.Journal) keyed by the model and the prompt, so a rerun, or a run
// that was interrupted, asks the model only what it has not answered yet.
package llmrerank

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/retrieve"
	"github.com/rated-dev/rated/pkg/synth"
)

// Config sets how the reranker asks the model.
type Config struct {
	// Depth is how many first-stage candidates are reranked (20); the reranked list holds no
	// more.
	Depth int
	// MaxTokens bounds the answer (Depth identifiers fit in about 5 tokens each); 0 leaves the
	// client's limit.
	MaxTokens int
	// Seed is sent with every request (attempt i uses Seed+i).
	Seed int64
	// Concurrency is how many requests are in flight at once (the server's parallel slots).
	Concurrency int
	// MaxDocChars truncates each tool's text in the prompt (0: no limit).
	MaxDocChars int
}

// ConfigError is a Config field that cannot work: Field is its Go name ("Depth"), so a command
// can name its own flag for it.
type ConfigError struct {
	Field  string
	Value  int
	Reason string
}

// Error says "llm rerank: Depth 1: need at least 2 candidates to rerank".
func (e *ConfigError) Error() string {
	return fmt.Sprintf("llm rerank: %s %d: %s", e.Field, e.Value, e.Reason)
}

// Check refuses a configuration that cannot rerank: fewer than 2 candidates, no request in
// flight, a negative answer bound or text limit. The error is a *ConfigError.
func (c Config) Check() error {
	switch {
	case c.Depth < 2:
		return &ConfigError{"Depth", c.Depth, "need at least 2 candidates to rerank"}
	case c.Concurrency < 1:
		return &ConfigError{"Concurrency", c.Concurrency, "need at least 1 request in flight"}
	case c.MaxTokens < 0:
		return &ConfigError{"MaxTokens", c.MaxTokens, "must be >= 0 (0: the client's limit)"}
	case c.MaxDocChars < 0:
		return &ConfigError{"MaxDocChars", c.MaxDocChars, "must be >= 0 (0: no limit)"}
	}
	return nil
}

// DefaultConfig reranks the top 20 with answers of at most 160 tokens, seed 1, one request at a
// time, tool texts cut at 300 characters.
func DefaultConfig() Config {
	return Config{Depth: 20, MaxTokens: 160, Seed: 1, Concurrency: 1, MaxDocChars: 300}
}

// Reranker is the listwise LLM reranker over a first stage. It is a retrieve.Retriever.
type Reranker struct {
	first   retrieve.Retriever
	corpus  []bench.Doc
	gen     synth.Generator
	journal *synth.Journal
	cfg     Config
	ctx     context.Context
	// Progress, when set, receives (queries answered, total) during SearchBatch.
	Progress func(done, total int)

	mu        sync.Mutex
	latencies []time.Duration // one per answered query of the last search, in query order
	fresh     int             // answers asked of the model (not read from the journal)
}

// New returns a reranker of first's candidates; corpus is the corpus first indexes (candidates
// are looked up by their Index), journal keeps the answers. cfg must pass Check.
func New(ctx context.Context, first retrieve.Retriever, corpus []bench.Doc, gen synth.Generator, journal *synth.Journal, cfg Config) (*Reranker, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if gen == nil || journal == nil {
		return nil, errors.New("llm rerank: no generator or journal")
	}
	return &Reranker{first: first, corpus: corpus, gen: gen, journal: journal, cfg: cfg, ctx: ctx}, nil
}

// Name is "LLM rerank (MODEL, top N) of FIRST".
func (r *Reranker) Name() string {
	return fmt.Sprintf("LLM rerank (%s, top %d) of %s", r.gen.Model(), r.cfg.Depth, r.first.Name())
}

// Search reranks one query.
func (r *Reranker) Search(query string, k int) ([]retrieve.Candidate, error) {
	out, err := r.SearchBatch([]string{query}, k)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// SearchBatch runs the first stage over all queries (batched where it can), then asks the model
// about each query, Concurrency at a time. A candidate's score is 1/position in the reranked list
// (the model gives an order, not scores), so the list holds at most Depth candidates.
func (r *Reranker) SearchBatch(queries []string, k int) ([][]retrieve.Candidate, error) {
	heads, err := retrieve.SearchAll(r.first, queries, r.cfg.Depth)
	if err != nil {
		return nil, fmt.Errorf("llm rerank: first stage %s: %w", r.first.Name(), err)
	}
	out := make([][]retrieve.Candidate, len(queries))
	lat := make([]time.Duration, len(queries))
	errs := make([]error, len(queries))
	var next, done int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range min(r.cfg.Concurrency, len(queries)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(queries) {
					return
				}
				out[i], lat[i], errs[i] = r.rerank(queries[i], heads[i], k)
				mu.Lock()
				done++
				if r.Progress != nil {
					r.Progress(done, len(queries))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("llm rerank: query %d: %w", i, err)
		}
	}
	r.mu.Lock()
	r.latencies = lat
	r.mu.Unlock()
	return out, nil
}

// rerank orders one query's head by the model's answer.
func (r *Reranker) rerank(query string, head []retrieve.Candidate, k int) ([]retrieve.Candidate, time.Duration, error) {
	if len(head) < 2 {
		return head[:min(k, len(head))], 0, nil
	}
	docs := make([]bench.Doc, len(head))
	for i, c := range head {
		if c.Index < 0 || c.Index >= len(r.corpus) || r.corpus[c.Index].ID != c.ID {
			return nil, 0, fmt.Errorf("candidate %q (position %d) is not in the corpus", c.ID, c.Index)
		}
		docs[i] = r.corpus[c.Index]
	}
	prompt := Prompt(query, docs, r.cfg.MaxDocChars)
	key := journalKey(r.gen.Model(), prompt)
	rec, ok := r.journal.Get(key)
	if !ok || !rec.OK {
		start := time.Now()
		c, err := r.gen.Complete(r.ctx, synth.Request{
			Messages:  []synth.Message{{Role: "user", Content: prompt}},
			Seed:      r.cfg.Seed,
			MaxTokens: r.cfg.MaxTokens,
			Accept: func(answer string) error {
				if len(ParseRanking(answer, len(docs))) == 0 {
					return fmt.Errorf("no identifier [1]..[%d] in the answer %.80q", len(docs), answer)
				}
				return nil
			},
		})
		rec = synth.Record{Key: key, OK: err == nil, Query: query, Raw: c.Text, Attempts: c.Attempts, Faults: c.Faults, Seed: c.Seed,
			ElapsedMS: time.Since(start).Milliseconds()}
		if err != nil {
			rec.Error = err.Error()
		}
		if jerr := r.journal.Append(rec); jerr != nil {
			return nil, 0, jerr
		}
		if err != nil {
			return nil, 0, err
		}
		r.mu.Lock()
		r.fresh++
		r.mu.Unlock()
	}
	order := ParseRanking(rec.Raw, len(docs))
	for i := range docs {
		if !slices.Contains(order, i) {
			order = append(order, i) // left out by the model: first-stage order
		}
	}
	ranked := make([]retrieve.Candidate, 0, min(k, len(order)))
	for p, i := range order[:min(k, len(order))] {
		c := head[i]
		c.Score = 1 / float64(p+1)
		ranked = append(ranked, c)
	}
	return ranked, time.Duration(rec.ElapsedMS) * time.Millisecond, nil
}

// Latencies returns the time the model took to answer each query of the last SearchBatch, in
// query order (for an answer read from the journal, the time recorded when it was asked), and
// how many of them were asked of the model in this process.
func (r *Reranker) Latencies() ([]time.Duration, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.latencies), r.fresh
}

// journalKey identifies an answer by the model and the exact prompt.
func journalKey(model, prompt string) string {
	h := sha256.Sum256([]byte(model + "\x00" + prompt))
	return "rerank/" + hex.EncodeToString(h[:16])
}

// Prompt is the listwise prompt: the tools numbered [1]..[n] (title: text, each cut at maxChars
// characters when maxChars > 0), the request, and the answer format.
func Prompt(query string, docs []bench.Doc, maxChars int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "I will give you %d tools, each with an identifier in brackets, and a user request. Rank the tools by how well each one serves the request.\n\n", len(docs))
	for i, d := range docs {
		text := strings.Join(strings.Fields(retrieve.DocText(d)), " ")
		if r := []rune(text); maxChars > 0 && len(r) > maxChars {
			text = string(r[:maxChars]) + "…"
		}
		fmt.Fprintf(&b, "[%d] %s\n", i+1, text)
	}
	fmt.Fprintf(&b, "\nRequest: %s\n\nRank all %d tools, most useful first. Answer only with the identifiers, in the form [2] > [5] > [1], and nothing else.",
		strings.Join(strings.Fields(query), " "), len(docs))
	return b.String()
}

var identifier = regexp.MustCompile(`\[\s*(\d{1,4})\s*\]`)

// ParseRanking reads a listwise answer: the bracketed identifiers [i] with 1 <= i <= n, in the
// order they appear, each at its first appearance, as 0-based positions. Anything else (text,
// out-of-range or repeated identifiers) is ignored; an answer without one gives nil.
func ParseRanking(answer string, n int) []int {
	var out []int
	seen := map[int]bool{}
	for _, m := range identifier.FindAllStringSubmatch(answer, -1) {
		i, err := strconv.Atoi(m[1])
		if err != nil || i < 1 || i > n || seen[i] {
			continue
		}
		seen[i] = true
		out = append(out, i-1)
	}
	return out
}
