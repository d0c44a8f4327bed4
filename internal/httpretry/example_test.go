package httpretry_test

import (
	"context"
	"fmt"
	"time"

	"github.com/rated-dev/rated/internal/httpretry"
)

// A server answers 429 twice, the second time with Retry-After: 2; the third attempt succeeds.
func ExamplePolicy_Do() {
	p := httpretry.Policy{Retries: 3, Backoff: 500 * time.Millisecond}
	sleep := func(_ context.Context, d time.Duration) error { fmt.Println("wait", d); return nil }
	answers := []httpretry.Verdict{{Retry: true}, {Retry: true, RetryAfter: 2 * time.Second}, {}}
	n, _ := p.Do(context.Background(), sleep, func(n int) httpretry.Verdict { return answers[n] })
	fmt.Println("attempts", n)
	// Output:
	// wait 500ms
	// wait 2s
	// attempts 3
}
