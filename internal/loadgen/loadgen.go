// Package loadgen is a small open-loop load generator for rated serve's benchmarks and fault
// tests: requests are scheduled at a fixed rate (so a slow server cannot slow the schedule down
// and hide its own latency), bounded in count and in time, and sent only to loopback addresses.
package loadgen

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sort"
	"sync"
	"time"
)

// Config bounds a run.
type Config struct {
	// Rate is requests per second; Workers caps the requests in flight (a request whose slot
	// comes late waits, and its latency counts from its scheduled time).
	Rate    float64
	Workers int
	// Duration and Requests bound the run: it stops at whichever comes first (both > 0).
	Duration time.Duration
	Requests int
}

// Result is what a run measured.
type Result struct {
	Sent, OK int
	// Codes counts responses by status (0: transport error).
	Codes map[int]int
	// Latencies of the successful requests, from scheduled send to response, sorted.
	Latencies []time.Duration
	Elapsed   time.Duration
}

// Throughput is successful requests per second.
func (r Result) Throughput() float64 { return float64(r.OK) / r.Elapsed.Seconds() }

// Percentile returns the p-th percentile (0–100) of the latencies (nearest rank).
func (r Result) Percentile(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	i := int(float64(len(r.Latencies))*p/100+0.5) - 1
	return r.Latencies[min(max(i, 0), len(r.Latencies)-1)]
}

// Do sends request i; status 2xx counts as OK.
type Do func(ctx context.Context, i int) (status int, err error)

// Run sends requests at cfg.Rate until cfg.Duration or cfg.Requests, whichever first, or ctx.
func Run(ctx context.Context, cfg Config, do Do) (Result, error) {
	if !(cfg.Rate > 0) || cfg.Workers <= 0 || cfg.Duration <= 0 || cfg.Requests <= 0 {
		return Result{}, fmt.Errorf("loadgen: rate, workers, duration and requests must all be > 0: %+v", cfg)
	}
	// Requests are scheduled over Duration only; those in flight at its end may finish (up to
	// a minute more) so that a slow tail is measured, not cut off.
	sched, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	reqCtx, cancelReqs := context.WithTimeout(ctx, cfg.Duration+time.Minute)
	defer cancelReqs()
	type job struct {
		i   int
		due time.Time
	}
	jobs := make(chan job, cfg.Workers)
	var mu sync.Mutex
	res := Result{Codes: map[int]int{}}
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if wait := time.Until(j.due); wait > 0 {
					time.Sleep(wait)
				}
				status, err := do(reqCtx, j.i)
				lat := time.Since(j.due)
				if err != nil {
					status = 0
				}
				mu.Lock()
				res.Codes[status]++
				if status >= 200 && status < 300 {
					res.OK++
					res.Latencies = append(res.Latencies, lat)
				}
				mu.Unlock()
			}
		}()
	}
	start := time.Now()
	interval := time.Duration(float64(time.Second) / cfg.Rate)
schedule:
	for i := 0; i < cfg.Requests; i++ {
		due := start.Add(time.Duration(i) * interval)
		if due.Sub(start) >= cfg.Duration {
			break
		}
		select {
		case jobs <- job{i: i, due: due}:
			res.Sent++
		case <-sched.Done():
			break schedule
		}
	}
	close(jobs)
	wg.Wait()
	res.Elapsed = time.Since(start)
	sort.Slice(res.Latencies, func(a, b int) bool { return res.Latencies[a] < res.Latencies[b] })
	return res, nil
}

// CheckLoopback refuses any target that is not on this machine's loopback.
func CheckLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("loadgen: %s is not a loopback address (127.0.0.0/8, ::1, localhost): refusing to send load there", raw)
	}
	return nil
}
