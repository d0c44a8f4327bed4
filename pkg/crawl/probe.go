package crawl

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rated-dev/rated/internal/httpretry"
	"github.com/rated-dev/rated/pkg/catalog"
)

// Prober health-checks tool endpoints: one GET per distinct URL with bounded concurrency, a
// minimum interval between requests to the same host, a per-request timeout, and retries
// (internal/httpretry: doubling backoff, capped, never sooner than a Retry-After) for timeouts,
// 5xx, 429 and reset connections.
type Prober struct {
	// Client sends the requests (injected; tests use servers on 127.0.0.1).
	Client *http.Client
	// Now is the clock; Sleep waits (both injected so tests need not wait).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// Concurrency bounds requests in flight (default 8).
	Concurrency int
	// PerHostInterval is the minimum time between request starts to one host.
	PerHostInterval time.Duration
	// Timeout bounds one request (default 10 s).
	Timeout time.Duration
	// Retries is the number of extra attempts after a retryable outcome; Backoff the first wait
	// (doubling, capped at 16× Backoff; a longer Retry-After is waited instead, and one beyond
	// 5 minutes ends the retries).
	Retries int
	Backoff time.Duration
	// Progress reports probe batches (nil: silent).
	Progress Progress
	// Journal, when set, supplies the results of an interrupted earlier run (those URLs are not
	// probed again) and records each new result as it arrives.
	Journal *ProbeJournal
	// Resumed holds the results the journal already had by URL (OpenProbeJournal's second value).
	Resumed map[string]catalog.ProbeResult

	mu       sync.Mutex
	nextSlot map[string]time.Time
}

func (p *Prober) defaults() {
	if p.Client == nil {
		p.Client = http.DefaultClient
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Sleep == nil {
		p.Sleep = httpretry.Sleep
	}
	if p.Concurrency <= 0 {
		p.Concurrency = 8
	}
	if p.Timeout <= 0 {
		p.Timeout = 10 * time.Second
	}
	if p.Backoff <= 0 {
		p.Backoff = 500 * time.Millisecond
	}
}

// waitHost reserves the next request slot of a host and sleeps until it comes.
func (p *Prober) waitHost(ctx context.Context, host string) error {
	if p.PerHostInterval <= 0 {
		return nil
	}
	p.mu.Lock()
	if p.nextSlot == nil {
		p.nextSlot = map[string]time.Time{}
	}
	now := p.Now()
	slot := p.nextSlot[host]
	if slot.Before(now) {
		slot = now
	}
	p.nextSlot[host] = slot.Add(p.PerHostInterval)
	p.mu.Unlock()
	return p.Sleep(ctx, slot.Sub(now))
}

// probeTarget is the URL actually requested for an endpoint: the part before the first path
// placeholder ({id}), since a placeholder cannot be filled in.
func probeTarget(raw string) string {
	if i := strings.Index(raw, "{"); i >= 0 {
		raw = raw[:i]
	}
	return raw
}

// ProbeURL checks one URL and classifies the outcome.
func (p *Prober) ProbeURL(ctx context.Context, rawURL string) catalog.ProbeResult {
	p.defaults()
	target := probeTarget(rawURL)
	res := catalog.ProbeResult{URL: rawURL}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		res.Status, res.Error, res.CheckedAt = catalog.ProbeBroken, fmt.Sprintf("not a probeable URL: %q", target), p.Now()
		return res
	}
	policy := httpretry.Policy{Retries: p.Retries, Backoff: p.Backoff}
	policy.Do(ctx, p.Sleep, func(int) httpretry.Verdict {
		if err := p.waitHost(ctx, u.Host); err != nil {
			res.Status, res.Error, res.CheckedAt = catalog.ProbeTimeout, err.Error(), p.Now()
			return httpretry.Verdict{}
		}
		start := p.Now()
		status, code, msg, retry, after := p.once(ctx, target)
		res.Status, res.HTTPCode, res.Error = status, code, msg
		res.LatencyMS = float64(p.Now().Sub(start).Microseconds()) / 1000
		res.CheckedAt = p.Now()
		return httpretry.Verdict{Retry: retry, RetryAfter: after}
	})
	return res
}

// once sends one request and classifies it; retry says whether another attempt may help, after
// the server's Retry-After if it gave one.
func (p *Prober) once(ctx context.Context, target string) (status string, code int, msg string, retry bool, after time.Duration) {
	rctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, target, nil)
	if err != nil {
		return catalog.ProbeBroken, 0, err.Error(), false, 0
	}
	req.Header.Set("User-Agent", "rated-crawl-probe/1 (+health check)")
	resp, err := p.Client.Do(req)
	if err != nil {
		status, code, msg, retry = classifyError(err)
		return status, code, msg, retry, 0
	}
	defer resp.Body.Close()
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	status, code, msg, retry = classifyStatus(resp.StatusCode)
	return status, code, msg, retry, httpretry.FromResponse(resp, p.Now())
}

// classifyStatus maps an HTTP status to a probe class: 401/403 need auth, 404/410 are broken,
// 5xx are server errors (retried), 429 is retried and otherwise counts as reachable, any other
// answer means the endpoint exists.
func classifyStatus(code int) (string, int, string, bool) {
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return catalog.ProbeNeedsAuth, code, "", false
	case code == http.StatusNotFound || code == http.StatusGone:
		return catalog.ProbeBroken, code, "", false
	case code >= 500:
		return catalog.ProbeServerError, code, "", true
	case code == http.StatusTooManyRequests:
		return catalog.ProbeReachable, code, "", true
	default:
		return catalog.ProbeReachable, code, "", false
	}
}

// classifyError maps a transport error: timeouts (retried), DNS failures, refused connections,
// TLS errors and redirect loops are broken; reset connections are retried.
func classifyError(err error) (string, int, string, bool) {
	msg := err.Error()
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recErr tls.RecordHeaderError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return catalog.ProbeTimeout, 0, msg, true
	case errors.As(err, &dnsErr):
		return catalog.ProbeBroken, 0, msg, dnsErr.IsTemporary
	case errors.Is(err, syscall.ECONNREFUSED):
		return catalog.ProbeBroken, 0, msg, false
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr), errors.As(err, &recErr),
		strings.Contains(msg, "tls:") || strings.Contains(msg, "x509:"):
		return catalog.ProbeBroken, 0, msg, false
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return catalog.ProbeBroken, 0, msg, true
	default:
		return catalog.ProbeBroken, 0, msg, false
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// statusRank orders probe classes from best to worst, to summarise a tool with several endpoints.
var statusRank = map[string]int{catalog.ProbeReachable: 0, catalog.ProbeNeedsAuth: 1, catalog.ProbeServerError: 2,
	catalog.ProbeTimeout: 3, catalog.ProbeBroken: 4}

// ProbeTools probes every distinct non-templated endpoint of the tools once (one request per
// distinct probe target, probeTarget) and sets each tool's
// Probe to its best endpoint's result; tools without endpoints get no_endpoint, tools whose
// endpoints are all templated get templated.
func (p *Prober) ProbeTools(ctx context.Context, tools []catalog.Tool) error {
	p.defaults()
	var urls []string
	seen := map[string]bool{}
	for _, t := range tools {
		for _, e := range t.Endpoints {
			if !e.Templated && !seen[e.URL] {
				seen[e.URL] = true
				urls = append(urls, e.URL)
			}
		}
	}
	prog := p.Progress
	if prog == nil {
		prog = NopProgress{}
	}
	results := make(map[string]catalog.ProbeResult, len(urls))
	todo := urls[:0:0]
	for _, u := range urls {
		if r, ok := p.Resumed[u]; ok {
			results[u] = r
		} else {
			todo = append(todo, u)
		}
	}
	// One request per target: endpoints that differ only after a path placeholder
	// ("api.intercom.io" and "api.intercom.io{endpoint}") send the same GET; each URL still gets
	// (and journals) its result.
	var targets []string
	sameTarget := map[string][]string{}
	for _, u := range todo {
		tg := probeTarget(u)
		if _, ok := sameTarget[tg]; !ok {
			targets = append(targets, tg)
		}
		sameTarget[tg] = append(sameTarget[tg], u)
	}
	urls = targets
	var mu sync.Mutex
	var journalErr error
	const batch = 200
	for start := 0; start < len(urls); start += batch {
		end := min(start+batch, len(urls))
		prog.Start(fmt.Sprintf("probe %d-%d of %d", start+1, end, len(urls)), end-start, 0)
		sem := make(chan struct{}, p.Concurrency)
		var wg sync.WaitGroup
		for _, u := range urls[start:end] {
			if ctx.Err() != nil {
				break
			}
			sem <- struct{}{}
			wg.Add(1)
			go func(u string) {
				defer wg.Done()
				defer func() { <-sem }()
				group := sameTarget[u]
				r := p.ProbeURL(ctx, group[0])
				if ctx.Err() != nil {
					return // cut short: not a result to keep
				}
				mu.Lock()
				for _, each := range group {
					r.URL = each
					results[each] = r
					if p.Journal != nil && journalErr == nil {
						journalErr = p.Journal.Append(r)
					}
				}
				mu.Unlock()
				prog.Add(1)
			}(u)
		}
		wg.Wait()
		prog.Finish()
		if err := ctx.Err(); err != nil {
			if p.Journal != nil {
				return fmt.Errorf("probe interrupted (%d results kept in the journal; run again to resume): %w", len(results), err)
			}
			return fmt.Errorf("probe interrupted: %w", err)
		}
		if journalErr != nil {
			return journalErr
		}
	}
	for i := range tools {
		t := &tools[i]
		var best *catalog.ProbeResult
		for _, e := range t.Endpoints {
			r, ok := results[e.URL]
			if !ok {
				continue
			}
			if best == nil || statusRank[r.Status] < statusRank[best.Status] {
				rc := r
				best = &rc
			}
		}
		switch {
		case best != nil:
			t.Probe = best
		case len(t.Endpoints) > 0:
			t.Probe = &catalog.ProbeResult{Status: catalog.ProbeTemplated, URL: t.Endpoints[0].URL, CheckedAt: p.Now()}
		default:
			t.Probe = &catalog.ProbeResult{Status: catalog.ProbeNoEndpoint, CheckedAt: p.Now()}
		}
	}
	return nil
}
