package evaloffline

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/bench"
)

// speedBench is a synthetic benchmark of 5,000 tools and 10,000 test queries (the same Zipf(1.1)
// vocabulary recipe as pkg/retrieve's BM25 speed benchmark), each query judged relevant to one to
// three tools.
func speedBench() *bench.Bench {
	rng := rand.New(rand.NewPCG(42, 5000))
	zipf := rand.NewZipf(rng, 1.1, 1, 29999)
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = fmt.Sprintf("w%d", zipf.Uint64())
		}
		return strings.Join(w, " ")
	}
	b := &bench.Bench{Splits: map[string]bench.Qrels{"test": {}}}
	for i := range 5000 {
		b.Corpus = append(b.Corpus, bench.Doc{ID: fmt.Sprintf("tool%05d", i), Title: words(2), Text: words(10 + rng.IntN(51))})
	}
	for i := range 10000 {
		id := fmt.Sprintf("q%05d", i)
		b.Queries = append(b.Queries, bench.Query{ID: id, Text: words(8 + rng.IntN(33))})
		rel := map[string]int{}
		for range 1 + rng.IntN(3) {
			rel[b.Corpus[rng.IntN(5000)].ID] = 1
		}
		b.Splits["test"][id] = rel
	}
	return b
}

// BenchmarkEvalOfflineBM25 measures the whole evaluation of BM25 over 10,000 queries × 5,000
// tools: index build, search at depth 100, trec_eval ordering and the seven default measures
// (use -cpu 2 for the 2-core figure).
func BenchmarkEvalOfflineBM25(b *testing.B) {
	bn := speedBench()
	cfg := DefaultConfig()
	cfg.Retrievers, cfg.Baseline = []string{"bm25"}, ""
	reg := NewLexicalRegistry()
	for b.Loop() {
		if _, err := Run(Env{Bench: bn}, "speed", reg, cfg); err != nil {
			b.Fatal(err)
		}
	}
}
