package crawl

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rated-dev/rated/pkg/catalog"
)

// fakeClock is an injected clock whose Sleep advances time instead of waiting.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	if d > 0 {
		c.now = c.now.Add(d)
	}
	return nil
}

func newTestProber(clock *fakeClock) *Prober {
	return &Prober{
		Client:      &http.Client{Timeout: 5 * time.Second},
		Now:         clock.Now,
		Sleep:       clock.Sleep,
		Concurrency: 4,
		Timeout:     300 * time.Millisecond,
		Retries:     2,
		Backoff:     100 * time.Millisecond,
	}
}

// Every server below listens on 127.0.0.1; nothing else is ever probed by the tests.
func TestProbeURLClasses(t *testing.T) {
	var flakyHits, errorHits, rateHits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	mux.HandleFunc("/unauthorized", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) })
	mux.HandleFunc("/forbidden", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(403) })
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(410) })
	mux.HandleFunc("/bad-request", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(400) })
	mux.HandleFunc("/error", func(w http.ResponseWriter, r *http.Request) { errorHits.Add(1); w.WriteHeader(500) })
	mux.HandleFunc("/flaky", func(w http.ResponseWriter, r *http.Request) {
		if flakyHits.Add(1) == 1 {
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(200)
	})
	mux.HandleFunc("/ratelimited", func(w http.ResponseWriter, r *http.Request) {
		if rateHits.Add(1) == 1 {
			w.WriteHeader(429)
			return
		}
		w.WriteHeader(204)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/redirect-ok", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/redirect-missing", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/nowhere", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tlsSrv := httptest.NewUnstartedServer(mux) // its certificate is not trusted by the prober's client
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/"
	ln.Close()

	cases := []struct {
		url    string
		status string
		code   int
	}{
		{srv.URL + "/ok", catalog.ProbeReachable, 200},
		{srv.URL + "/unauthorized", catalog.ProbeNeedsAuth, 401},
		{srv.URL + "/forbidden", catalog.ProbeNeedsAuth, 403},
		{srv.URL + "/nowhere", catalog.ProbeBroken, 404},
		{srv.URL + "/gone", catalog.ProbeBroken, 410},
		{srv.URL + "/bad-request", catalog.ProbeReachable, 400},
		{srv.URL + "/error", catalog.ProbeServerError, 500},
		{srv.URL + "/flaky", catalog.ProbeReachable, 200},
		{srv.URL + "/ratelimited", catalog.ProbeReachable, 204},
		{srv.URL + "/slow", catalog.ProbeTimeout, 0},
		{srv.URL + "/redirect-ok", catalog.ProbeReachable, 200},
		{srv.URL + "/redirect-missing", catalog.ProbeBroken, 404},
		{srv.URL + "/loop", catalog.ProbeBroken, 0},
		{tlsSrv.URL + "/ok", catalog.ProbeBroken, 0},
		{refused, catalog.ProbeBroken, 0},
		{srv.URL + "/ok?id={id}", catalog.ProbeReachable, 200}, // probed up to the placeholder
		{"ftp://127.0.0.1/x", catalog.ProbeBroken, 0},
	}
	for _, c := range cases {
		clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		p := newTestProber(clock)
		r := p.ProbeURL(context.Background(), c.url)
		if r.Status != c.status || r.HTTPCode != c.code {
			t.Errorf("%s: status %s code %d (%s), want %s %d", c.url, r.Status, r.HTTPCode, r.Error, c.status, c.code)
		}
		if r.URL != c.url || !r.CheckedAt.Equal(clock.Now()) {
			t.Errorf("%s: url %q checked %v", c.url, r.URL, r.CheckedAt)
		}
	}
	// Retries: 500 is tried 1+2 times; the flaky and rate-limited endpoints twice.
	if errorHits.Load() != 3 || flakyHits.Load() != 2 || rateHits.Load() != 2 {
		t.Errorf("hits: error %d flaky %d ratelimited %d, want 3 2 2", errorHits.Load(), flakyHits.Load(), rateHits.Load())
	}
}

func TestProbeBackoffAndHostInterval(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	defer srv.Close()
	clock := &fakeClock{now: time.Unix(0, 0)}
	p := newTestProber(clock)
	p.PerHostInterval = time.Second
	p.ProbeURL(context.Background(), srv.URL)
	// Host slots at 0 s, then after backoff 0.1 s the next slot is at 1 s (wait 0.9 s), after
	// backoff 0.2 s (t = 1.2 s) the next slot is at 2 s (wait 0.8 s).
	want := []time.Duration{0, 100 * time.Millisecond, 900 * time.Millisecond, 200 * time.Millisecond, 800 * time.Millisecond}
	if len(clock.sleeps) != len(want) {
		t.Fatalf("sleeps = %v, want %v", clock.sleeps, want)
	}
	for i := range want {
		if clock.sleeps[i] != want[i] {
			t.Errorf("sleep %d = %v, want %v", i, clock.sleeps[i], want[i])
		}
	}
}

// TestProbeHonoursRetryAfter: a 429 with Retry-After: 3 is retried after 3 s, not after the
// 0.1 s backoff, and one asking for an hour is not retried at all (it counts as reachable).
func TestProbeHonoursRetryAfter(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hour" {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(429)
			return
		}
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(429)
			return
		}
		w.WriteHeader(200)
	}))
	defer srv.Close()
	clock := &fakeClock{now: time.Unix(0, 0)}
	p := newTestProber(clock)
	res := p.ProbeURL(context.Background(), srv.URL+"/x")
	if res.HTTPCode != 200 || len(clock.sleeps) != 1 || clock.sleeps[0] != 3*time.Second {
		t.Fatalf("result %+v, sleeps %v; want 200 after one 3 s wait", res, clock.sleeps)
	}
	clock.sleeps = nil
	res = p.ProbeURL(context.Background(), srv.URL+"/hour")
	if res.HTTPCode != 429 || res.Status != catalog.ProbeReachable || len(clock.sleeps) != 0 {
		t.Fatalf("result %+v, sleeps %v; want 429 reachable and no retry", res, clock.sleeps)
	}
}

func TestProbeToolsSummaryAndDedupe(t *testing.T) {
	var hits sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := hits.LoadOrStore(r.URL.Path, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		switch r.URL.Path {
		case "/ok":
			w.WriteHeader(200)
		case "/auth":
			w.WriteHeader(401)
		default:
			w.WriteHeader(404)
		}
	}))
	defer srv.Close()
	tools := []catalog.Tool{
		{ID: "a", Endpoints: []catalog.Endpoint{{URL: srv.URL + "/missing"}, {URL: srv.URL + "/ok"}}},
		{ID: "b", Endpoints: []catalog.Endpoint{{URL: srv.URL + "/auth"}, {URL: srv.URL + "/missing"}}},
		{ID: "c", Endpoints: []catalog.Endpoint{{URL: "https://{tenant}.acme.test", Templated: true}}},
		{ID: "d"},
		{ID: "e", Endpoints: []catalog.Endpoint{{URL: srv.URL + "/missing"}}},
		// The same request as /ok: a placeholder after it cannot be filled, so the GET is /ok's.
		{ID: "f", Endpoints: []catalog.Endpoint{{URL: srv.URL + "/ok{path}"}}},
	}
	clock := &fakeClock{now: time.Unix(100, 0)}
	p := newTestProber(clock)
	if err := p.ProbeTools(context.Background(), tools); err != nil {
		t.Fatal(err)
	}
	want := []string{catalog.ProbeReachable, catalog.ProbeNeedsAuth, catalog.ProbeTemplated, catalog.ProbeNoEndpoint, catalog.ProbeBroken, catalog.ProbeReachable}
	for i, w := range want {
		if tools[i].Probe == nil || tools[i].Probe.Status != w {
			t.Errorf("tool %s: probe %+v, want %s", tools[i].ID, tools[i].Probe, w)
		}
	}
	for _, path := range []string{"/missing", "/ok"} {
		if n, _ := hits.Load(path); n.(*atomic.Int32).Load() != 1 {
			t.Errorf("%s probed %d times, want once", path, n.(*atomic.Int32).Load())
		}
	}
	if got := tools[5].Probe.URL; got != srv.URL+"/ok{path}" {
		t.Errorf("tool f's probe names %s, want its own endpoint", got)
	}
}
