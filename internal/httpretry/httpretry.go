// Package httpretry is the one retry schedule of the project's HTTP clients (the crawl's
// endpoint probe, the embeddings endpoint, the chat-completions client of build-bench): a
// doubling, capped backoff that never retries before a server's Retry-After, and gives up
// instead when the server asks for a wait longer than the caller will spend.
package httpretry

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Policy is a retry schedule.
type Policy struct {
	// Retries is how many times an attempt is repeated (at most Retries+1 attempts).
	Retries int
	// Backoff is the wait before the first retry; it doubles on each further one.
	Backoff time.Duration
	// MaxBackoff caps the doubling (0: 16× Backoff).
	MaxBackoff time.Duration
	// MaxRetryAfter is the longest Retry-After honoured (0: 5 minutes); a server asking for a
	// longer wait is not retried, since retrying sooner is what it asked clients not to do.
	MaxRetryAfter time.Duration
}

// Verdict is what one attempt says about retrying.
type Verdict struct {
	// Retry: the failure is transient and another attempt may succeed.
	Retry bool
	// RetryAfter is the wait the server asked for (ParseRetryAfter; 0: none).
	RetryAfter time.Duration
}

// Sleep waits d or until ctx ends, returning ctx's error then.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Wait is the wait before retry n (1 for the first retry) when the server asked for
// retryAfter: the larger of the backoff and retryAfter. ok is false when retryAfter is longer
// than MaxRetryAfter, and the caller should give up.
func (p Policy) Wait(n int, retryAfter time.Duration) (wait time.Duration, ok bool) {
	maxBackoff := p.MaxBackoff
	if maxBackoff <= 0 {
		maxBackoff = 16 * p.Backoff
	}
	maxAfter := p.MaxRetryAfter
	if maxAfter <= 0 {
		maxAfter = 5 * time.Minute
	}
	if retryAfter > maxAfter {
		return 0, false
	}
	wait = p.Backoff
	for i := 1; i < n && wait < maxBackoff; i++ {
		wait *= 2
	}
	wait = min(wait, maxBackoff)
	return max(wait, retryAfter), true
}

// Do calls attempt (n = 0, 1, …) until it needs no retry, the retries are spent, the server
// asks for a wait beyond MaxRetryAfter, or sleep fails (ctx ended). It returns the attempts
// made and sleep's error, if that ended the retries; the attempts' own results are the
// caller's, kept by attempt.
func (p Policy) Do(ctx context.Context, sleep func(context.Context, time.Duration) error, attempt func(n int) Verdict) (int, error) {
	if sleep == nil {
		sleep = Sleep
	}
	for n := 0; ; n++ {
		v := attempt(n)
		if !v.Retry || n >= p.Retries || ctx.Err() != nil {
			return n + 1, nil
		}
		wait, ok := p.Wait(n+1, v.RetryAfter)
		if !ok {
			return n + 1, nil
		}
		if err := sleep(ctx, wait); err != nil {
			return n + 1, err
		}
	}
}

// ParseRetryAfter reads a Retry-After value (RFC 9110 §10.2.3): delay-seconds, or an HTTP-date,
// taken relative to now. It returns 0 for an absent or malformed value or a date already past.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if v[0] >= '0' && v[0] <= '9' {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil || s < 0 {
			return 0
		}
		// Beyond a day is as good as never; the cap keeps the multiplication from overflowing.
		return time.Duration(min(s, 86400)) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil || !t.After(now) {
		return 0
	}
	return min(t.Sub(now), 24*time.Hour)
}

// FromResponse is the Retry-After of resp (0 when resp is nil or has none).
func FromResponse(resp *http.Response, now time.Time) time.Duration {
	if resp == nil {
		return 0
	}
	return ParseRetryAfter(resp.Header.Get("Retry-After"), now)
}
