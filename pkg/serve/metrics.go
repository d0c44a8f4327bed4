package serve

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rated-dev/rated/pkg/router"
)

// metrics are the server's Prometheus series; router-level ones are read from the router when
// scraped, and the durable writer's are fed by router.Hooks (see Hooks).
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// Durable-writer series, shared by every server of a registry through RouterHooks.
type writerMetrics struct {
	commitSeconds   prometheus.Histogram
	commitRecords   prometheus.Histogram
	commitErrors    prometheus.Counter
	snapshotSeconds prometheus.Histogram
	snapshotBytes   prometheus.Gauge
	snapshotErrors  prometheus.Counter
}

func newMetrics(reg *prometheus.Registry, r *router.Router) *metrics {
	m := &metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rated_http_requests_total",
			Help: "HTTP requests by route and status code."}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rated_http_request_duration_seconds",
			Help:    "HTTP request latency by route.",
			Buckets: []float64{.0001, .00025, .0005, .001, .002, .005, .01, .025, .05, .1, .25, 1, 5}}, []string{"route"}),
	}
	reg.MustRegister(m.requests, m.latency, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	gauge := func(name, help string, f func(router.Info) float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return f(r.Info()) }))
	}
	gauge("rated_tools", "Tools in the live catalog.", func(i router.Info) float64 { return float64(i.Tools) })
	gauge("rated_pending_decisions", "Decisions accepting reports.", func(i router.Info) float64 { return float64(i.Pending) })
	gauge("rated_policy_step", "The policy's step clock.", func(i router.Info) float64 { return float64(i.Step) })
	gauge("rated_storage_degraded", "1 while the last durable write failed.", func(i router.Info) float64 {
		if i.Degraded != "" {
			return 1
		}
		return 0
	})
	gauge("rated_state_applied_seq", "Sequence number of the last record of the state's log applied.", func(i router.Info) float64 { return float64(i.Applied) })
	gauge("rated_replica_follow_age_seconds", "Replicas: age of the last complete read of the other replicas' records (the staleness bound now).",
		func(i router.Info) float64 { return i.FollowAge.Seconds() })
	gauge("rated_replica_unshared_decisions", "Replicas: selections the shared store did not take (reportable on this replica only).",
		func(i router.Info) float64 { return float64(i.UnsharedDecisions) })
	if c, ok := r.Frontend().(interface{ CacheStats() (uint64, uint64, int) }); ok {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rated_query_cache_hits_total", Help: "Query embeddings served from the cache."},
			func() float64 { h, _, _ := c.CacheStats(); return float64(h) }))
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rated_query_cache_misses_total", Help: "Query embeddings computed by the encoder."},
			func() float64 { _, m, _ := c.CacheStats(); return float64(m) }))
	}
	return m
}

func (m *metrics) observe(route string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// RouterHooks returns router hooks that record the durable writer's commits and snapshots in
// reg; pass them in router.Config.Hooks and the same registry in Options.Registry.
func RouterHooks(reg *prometheus.Registry) router.Hooks {
	w := &writerMetrics{
		commitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rated_store_commit_seconds",
			Help: "Durable commits (one fsync'd transaction per batch of records).", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
		commitRecords: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rated_store_commit_records",
			Help: "Records per durable commit (group commit).", Buckets: prometheus.ExponentialBuckets(1, 2, 13)}),
		commitErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "rated_store_commit_errors_total", Help: "Failed durable commits."}),
		snapshotSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rated_store_snapshot_seconds",
			Help: "Snapshots of the whole state.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}),
		snapshotBytes:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "rated_store_snapshot_bytes", Help: "Size of the last snapshot."}),
		snapshotErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "rated_store_snapshot_errors_total", Help: "Failed snapshots."}),
	}
	reg.MustRegister(w.commitSeconds, w.commitRecords, w.commitErrors, w.snapshotSeconds, w.snapshotBytes, w.snapshotErrors)
	return router.Hooks{
		Commit: func(n int, took time.Duration, err error) {
			if err != nil {
				w.commitErrors.Inc()
				return
			}
			w.commitSeconds.Observe(took.Seconds())
			w.commitRecords.Observe(float64(n))
		},
		Snapshot: func(size int, took time.Duration, err error) {
			if err != nil {
				w.snapshotErrors.Inc()
				return
			}
			w.snapshotSeconds.Observe(took.Seconds())
			w.snapshotBytes.Set(float64(size))
		},
	}
}
