package httpretry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/fuzzcount"
)

// TestParseRetryAfterByHand: RFC 9110's two forms, by hand.
func TestParseRetryAfterByHand(t *testing.T) {
	now := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                               0,
		"0":                              0,
		"2":                              2 * time.Second,
		" 120 ":                          2 * time.Minute,
		"-3":                             0,
		"1.5":                            0,
		"soon":                           0,
		"99999999999999999999":           0, // overflows int64: malformed
		"172800":                         24 * time.Hour,
		"Mon, 07 Dec 2026 06:00:30 GMT":  30 * time.Second,
		"Mon, 07 Dec 2026 05:59:00 GMT":  0,           // already past
		"Monday, 07-Dec-26 06:01:00 GMT": time.Minute, // RFC 850, still accepted
	} {
		if got := ParseRetryAfter(v, now); got != want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestDoWaitsByHand: the waits of a schedule with Backoff 100ms, cap 400ms: 100, 200, 400,
// 400; a Retry-After of 3s replaces a shorter backoff; one beyond MaxRetryAfter ends the
// retries; a sleep cut short by the context ends them with its error.
func TestDoWaitsByHand(t *testing.T) {
	p := Policy{Retries: 5, Backoff: 100 * time.Millisecond, MaxBackoff: 400 * time.Millisecond, MaxRetryAfter: 10 * time.Second}
	var waits []time.Duration
	rec := func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	after := map[int]time.Duration{2: 3 * time.Second}
	n, err := p.Do(context.Background(), rec, func(n int) Verdict { return Verdict{Retry: true, RetryAfter: after[n]} })
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 3 * time.Second, 400 * time.Millisecond, 400 * time.Millisecond}
	if n != 6 || err != nil || len(waits) != len(want) {
		t.Fatalf("attempts %d, err %v, waits %v; want 6 attempts, waits %v", n, err, waits, want)
	}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}

	waits = nil
	n, _ = p.Do(context.Background(), rec, func(n int) Verdict { return Verdict{Retry: true, RetryAfter: time.Hour} })
	if n != 1 || len(waits) != 0 {
		t.Fatalf("Retry-After beyond the cap: %d attempts, waits %v; want 1 attempt and no wait", n, waits)
	}

	n, _ = p.Do(context.Background(), rec, func(n int) Verdict { return Verdict{Retry: n < 1} })
	if n != 2 {
		t.Fatalf("a success on the second attempt: %d attempts", n)
	}

	stop := errors.New("canceled")
	n, err = p.Do(context.Background(), func(context.Context, time.Duration) error { return stop }, func(int) Verdict { return Verdict{Retry: true} })
	if n != 1 || err != stop {
		t.Fatalf("a failed sleep: %d attempts, err %v", n, err)
	}
}

// TestWaitDefaultCap: without MaxBackoff the doubling stops at 16× Backoff, however many retries.
func TestWaitDefaultCap(t *testing.T) {
	p := Policy{Backoff: 500 * time.Millisecond}
	if w, ok := p.Wait(40, 0); !ok || w != 8*time.Second {
		t.Fatalf("Wait(40) = %v %v, want 8s", w, ok)
	}
}

// FuzzParseRetryAfter: any header value gives a wait in [0, 24h].
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "2", "Mon, 07 Dec 2026 06:00:30 GMT", "-1", "9999999999999"} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		fuzzcount.Tick("FuzzParseRetryAfter")
		if d := ParseRetryAfter(v, now); d < 0 || d > 24*time.Hour {
			t.Fatalf("ParseRetryAfter(%q) = %v", v, d)
		}
	})
}
