package router_test

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/redistest"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/router"
	"github.com/rated-dev/rated/pkg/state"
)

// reportLoad opens enough decisions on r for n reports and returns (decision, tool) pairs.
func reportLoad(b *testing.B, r *router.Router, n int) [][2]string {
	b.Helper()
	bench, _ := defaultbench.Load()
	var pairs [][2]string
	for i := 0; len(pairs) < n; i++ {
		sel, err := r.Select(context.Background(), bench.Queries[i%len(bench.Queries)].Text, router.SelectOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range sel.Tools {
			pairs = append(pairs, [2]string{sel.DecisionID, t.ID})
		}
	}
	return pairs
}

// reportParallel reports every pair once from 128 × GOMAXPROCS goroutines (many agents at once).
func reportParallel(b *testing.B, r *router.Router, pairs [][2]string) {
	var next atomic.Int64
	b.SetParallelism(128)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p := pairs[next.Add(1)-1]
			if _, err := r.Report(context.Background(), p[0], p[1], router.Outcome{Executed: true}, time.Millisecond); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReportShared is BenchmarkReportDurable on Redis (appendonly yes, appendfsync always):
// b.N reports from 256 goroutines, each acknowledged once Redis has it on disk; the router's
// single writer sends every report waiting as one script (group commit and pipelining in one).
// The bbolt figure of BenchmarkReportDurable in the same run is the reference.
func BenchmarkReportShared(b *testing.B) {
	srv := redistest.Start(b)
	st, err := state.OpenRedis(context.Background(), srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	benchReports(b, st, time.Second)
}

// benchReports times b.N reports from 256 goroutines on a router over store, with the default
// catalog and d = 384 contexts, and reports the batches the single writer committed.
func benchReports(b *testing.B, store state.Store, stepEvery time.Duration) {
	tools, _, cal := load(b)
	front, _ := router.NewLexicalFrontend(384)
	var commits, records, commitTime atomic.Int64
	hooks := router.Hooks{Commit: func(n int, took time.Duration, err error) {
		commits.Add(1)
		records.Add(int64(n))
		commitTime.Add(int64(took))
	}}
	r, err := router.New(context.Background(), router.Config{Frontend: front, Tools: tools, Calibrator: cal, Store: store, Hooks: hooks, StepEvery: stepEvery})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	pairs := reportLoad(b, r, b.N)
	commits.Store(0)
	records.Store(0)
	commitTime.Store(0)
	b.ResetTimer()
	reportParallel(b, r, pairs)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reports/s")
	if c := commits.Load(); c > 0 {
		b.ReportMetric(float64(records.Load())/float64(c), "records/commit")
		b.ReportMetric(float64(commitTime.Load())/float64(c)/1e6, "ms/commit")
	}
}

// BenchmarkFollowLag measures the staleness of a replica: while replica A takes b.N reports
// from 256 goroutines, a probe notes every 5 ms the last record A applied and the time, and
// waits until replica B (following every 50 ms, the default) has applied it. The lag
// percentiles are the time from a report's acknowledgement on A to its application on B.
func BenchmarkFollowLag(b *testing.B) {
	srv := redistest.Start(b)
	url := srv.URL()
	tools, _, cal := load(b)
	front, _ := router.NewLexicalFrontend(384)
	open := func() *router.Router {
		st, err := state.OpenRedis(context.Background(), url)
		if err != nil {
			b.Fatal(err)
		}
		r, err := router.New(context.Background(), router.Config{Frontend: front, Tools: tools, Calibrator: cal, Store: st, StepEvery: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	a, rb := open(), open()
	defer a.Close()
	defer rb.Close()
	pairs := reportLoad(b, a, b.N)
	var lags []time.Duration
	var mu sync.Mutex
	stop := make(chan struct{})
	var probes sync.WaitGroup
	probes.Add(1)
	go func() {
		defer probes.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			seq, start := a.Info().Applied, time.Now()
			probes.Add(1)
			go func() {
				defer probes.Done()
				for rb.Info().Applied < seq {
					time.Sleep(200 * time.Microsecond)
				}
				mu.Lock()
				lags = append(lags, time.Since(start))
				mu.Unlock()
			}()
		}
	}()
	b.ResetTimer()
	reportParallel(b, a, pairs)
	b.StopTimer()
	close(stop)
	probes.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reports/s")
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	if len(lags) > 0 {
		q := func(p float64) float64 { return float64(lags[int(p*float64(len(lags)-1))]) / 1e6 }
		b.ReportMetric(q(0.5), "lag-p50-ms")
		b.ReportMetric(q(0.99), "lag-p99-ms")
		b.ReportMetric(q(1), "lag-max-ms")
	}
}
