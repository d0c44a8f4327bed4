package synth

import (
	"context"
	"fmt"
	"github.com/rated-dev/rated/data"
	"path/filepath"
	"testing"
	"time"

	"github.com/rated-dev/rated/pkg/catalog"
)

// BenchmarkSynGenerateRealGemma measures EcoAgent-Syn generation against the real local Gemma:
// each iteration asks for 10 queries for one tool of testdata/catalog.jsonl (a fresh journal per
// run, so nothing is skipped), at the configured concurrency. It reports kept-format queries per
// minute (parsed, at most 10 per tool) and seconds per tool.
func BenchmarkSynGenerateRealGemma(b *testing.B) {
	cl, lc, _ := realLLM(b)
	all, err := catalog.ReadJSONL(filepath.Join("testdata", "catalog.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	tools := make([]catalog.Tool, b.N)
	for i := range tools {
		tools[i] = all[i%len(all)]
		tools[i].ID = fmt.Sprintf("%s#%d", tools[i].ID, i)
	}
	cfg := DefaultSynConfig()
	cfg.Concurrency, cfg.Seed = lc.Concurrency, lc.Seed+int64(b.N)
	j, err := OpenJournal(filepath.Join(b.TempDir(), "syn.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	b.ResetTimer()
	start := time.Now()
	if err := GenerateSyn(context.Background(), cl, tools, cfg, j, nil, time.Now); err != nil {
		b.Fatal(err)
	}
	el := time.Since(start)
	b.StopTimer()
	queries := 0
	for _, r := range j.Records() {
		queries += min(len(ParseQueries(r.Raw)), cfg.QueriesPerTool)
	}
	b.ReportMetric(float64(queries)/el.Minutes(), "queries/min")
	b.ReportMetric(el.Seconds()/float64(b.N), "s/tool")
}

// BenchmarkValidateRealGemma measures EcoAgent-Real validation: each iteration scores one
// (ToolBench query, tool) pair with the real local Gemma.
func BenchmarkValidateRealGemma(b *testing.B) {
	cl, lc, _ := realLLM(b)
	queries, err := ParseRealQueries(data.ToolBenchQueriesName, data.ToolBenchQueries)
	if err != nil {
		b.Skip(err)
	}
	tools, err := catalog.ReadJSONL(filepath.Join("testdata", "catalog.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	pairs := make([]RealPair, b.N)
	for i := range pairs {
		q := queries[i%len(queries)]
		q.ID = fmt.Sprintf("%s#%d", q.ID, i)
		pairs[i] = RealPair{Query: q, ToolID: tools[i%len(tools)].ID, RetrievalScore: 1}
	}
	cfg := DefaultRealConfig()
	cfg.Concurrency, cfg.Seed = lc.Concurrency, lc.Seed
	j, err := OpenJournal(filepath.Join(b.TempDir(), "real.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	b.ResetTimer()
	start := time.Now()
	if err := ValidateReal(context.Background(), cl, pairs, tools, cfg, j, nil, time.Now); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Minutes(), "pairs/min")
}

// BenchmarkDeduper measures near-duplicate removal at catalog scale: 70,000 synthetic queries
// of 8-20 words over a 5,000-word vocabulary (the paper's Syn has 69,501 queries).
func BenchmarkDeduper(b *testing.B) {
	texts := make([]string, 70000)
	for i := range texts {
		n := 8 + i%13
		s := ""
		for k := 0; k < n; k++ {
			s += fmt.Sprintf("w%d ", (i*7919+k*104729)%5000)
		}
		texts[i] = s
	}
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		d, _ := NewDeduper(0.7)
		for _, t := range texts {
			d.Add(t)
		}
	}
}
