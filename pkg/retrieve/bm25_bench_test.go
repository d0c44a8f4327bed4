package retrieve

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/bench"
)

// Synthetic catalog for the speed benchmarks: a Zipf(1.1) vocabulary of 30,000 words, tool
// descriptions of 10-60 words and queries of 8-40 words (ToolBench requests average about 35
// words), generated from a fixed seed so the Python comparison (testdata/bm25_speed.py) reads the
// very same data through TestWriteBM25SpeedData.
const (
	speedTools   = 5000
	speedQueries = 10000
)

func speedData() ([]bench.Doc, []string) {
	rng := rand.New(rand.NewPCG(42, 5000))
	zipf := rand.NewZipf(rng, 1.1, 1, 29999)
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = fmt.Sprintf("w%d", zipf.Uint64())
		}
		return strings.Join(w, " ")
	}
	docs := make([]bench.Doc, speedTools)
	for i := range docs {
		docs[i] = bench.Doc{ID: fmt.Sprintf("tool%05d", i), Title: words(2), Text: words(10 + rng.IntN(51))}
	}
	queries := make([]string, speedQueries)
	for i := range queries {
		queries[i] = words(8 + rng.IntN(33))
	}
	return docs, queries
}

// BenchmarkBM25Index measures building the index over 5,000 tools.
func BenchmarkBM25Index(b *testing.B) {
	docs, _ := speedData()
	for b.Loop() {
		NewBM25(docs, DefaultBM25Params())
	}
}

// BenchmarkBM25Search10kQueries5kTools measures one pass of 10,000 queries (top 100 each, in
// parallel on GOMAXPROCS goroutines: use -cpu 2) over 5,000 tools.
func BenchmarkBM25Search10kQueries5kTools(b *testing.B) {
	docs, queries := speedData()
	m := NewBM25(docs, DefaultBM25Params())
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.SearchBatch(queries, 100); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(queries)), "µs/query")
}

// BenchmarkBM25SearchOne measures a single query (no parallelism), allocations included.
func BenchmarkBM25SearchOne(b *testing.B) {
	docs, queries := speedData()
	m := NewBM25(docs, DefaultBM25Params())
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Search(queries[i%len(queries)], 100); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// TestWriteBM25SpeedData writes the benchmark data as JSON to $RATED_BM25_SPEED_DATA, for
// testdata/bm25_speed.py (the rank-bm25 side of docs/BENCHMARKS.md, offline section); skipped otherwise.
func TestWriteBM25SpeedData(t *testing.T) {
	path := os.Getenv("RATED_BM25_SPEED_DATA")
	if path == "" {
		t.Skip("set RATED_BM25_SPEED_DATA=FILE to write the speed benchmark data")
	}
	docs, queries := speedData()
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = DocText(d)
	}
	raw, err := json.Marshal(map[string]any{"docs": texts, "queries": queries})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}
