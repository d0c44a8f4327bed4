package router_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/router"
)

// BenchmarkSelect is the in-process cost of one Select with the recommended policy on the
// embedded default catalog (316 tools, K = 10), the query's embedding already cached: the
// reference for rated serve's HTTP figures (docs/BENCHMARKS.md).
func BenchmarkSelect(b *testing.B) {
	bench, err := defaultbench.Load()
	if err != nil {
		b.Fatal(err)
	}
	var queries []string
	for _, q := range bench.SplitQueries("test") {
		queries = append(queries, q.Text)
	}
	run := func(b *testing.B, front router.Frontend) {
		cal, note, err := router.FitCalibration(front, bench, "dev", 10, bandit.DefaultHubnessDepth, bandit.DefaultHubnessStrength)
		if err != nil {
			b.Fatal(err)
		}
		r, err := router.New(context.Background(), router.Config{Frontend: front, Tools: bench.Tools, Calibrator: cal, CalibrationNote: note})
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		for _, q := range queries { // warm the query cache
			r.Select(context.Background(), q, router.SelectOptions{})
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := r.Select(context.Background(), queries[i%len(queries)], router.SelectOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("bm25", func(b *testing.B) {
		front, _ := router.NewLexicalFrontend(384)
		run(b, front)
	})
	b.Run("bge-small-en-v1.5", func(b *testing.B) {
		assets := testassets.Dir(b)
		dir := testassets.Model(b, "bge-small-en-v1.5")
		model, err := encode.Open(dir, encode.Options{Runtime: encode.NewRuntime(testassets.ORTLibrary(b)), CacheDir: filepath.Join(assets, "cache", "embeddings")})
		if err != nil {
			b.Fatal(err)
		}
		defer model.Close()
		run(b, router.NewDenseFrontend(model, 0))
	})
}

// BenchmarkReportDurable is the durable feedback path alone: b.N reports from 64 goroutines,
// each acknowledged only once on disk (bbolt, group commit), on the default catalog with
// d = 384 contexts (a report record holds the decision's context and candidates).
func BenchmarkReportDurable(b *testing.B) {
	benchReports(b, openBolt(b, b.TempDir()), 0)
}
