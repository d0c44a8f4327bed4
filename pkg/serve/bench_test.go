package serve_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/router"
	"github.com/rated-dev/rated/pkg/serve"
)

// BenchmarkSelectHTTP times POST /v1/select through the server's handler (request parsing,
// validation, metrics, the JSON answer) without a network, beside BenchmarkSelectRouter, the
// router's Select on the same queries: their difference is what the HTTP layer adds per
// selection. The embedded default benchmark's 316 tools and test queries, BM25 frontend, the
// recommended policy, in memory.
func BenchmarkSelectHTTP(b *testing.B) {
	r, queries := benchRouter(b)
	h := serve.New(r, serve.Options{}).Handler()
	bodies := make([]string, len(queries))
	for i, q := range queries {
		bodies[i] = fmt.Sprintf(`{"query": %q}`, q)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodPost, "/v1/select", strings.NewReader(bodies[i%len(bodies)]))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// BenchmarkSelectRouter is BenchmarkSelectHTTP's reference: Router.Select alone.
func BenchmarkSelectRouter(b *testing.B) {
	r, queries := benchRouter(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Select(context.Background(), queries[i%len(queries)], router.SelectOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchRouter(b *testing.B) (*router.Router, []string) {
	bench, err := defaultbench.Load()
	if err != nil {
		b.Fatal(err)
	}
	front, err := router.NewLexicalFrontend(384)
	if err != nil {
		b.Fatal(err)
	}
	cal, note, err := router.FitCalibration(front, bench, "dev", 10, bandit.DefaultHubnessDepth, bandit.DefaultHubnessStrength)
	if err != nil {
		b.Fatal(err)
	}
	r, err := router.New(context.Background(), router.Config{Frontend: front, Tools: bench.Tools, Calibrator: cal, CalibrationNote: note})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	var queries []string
	for _, q := range bench.SplitQueries("test") {
		queries = append(queries, q.Text)
	}
	return r, queries
}
