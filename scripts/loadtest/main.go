// Command loadtest measures a running `rated serve` on this machine (loopback only; bounded in
// count and time): held throughput and latency percentiles of POST /v1/select with cached query
// embeddings, with encoding (every query new), and of POST /v1/feedback. docs/BENCHMARKS.md
// ("rated serve") has the commands and the figures.
//
//	go run ./scripts/loadtest --target http://127.0.0.1:8080 --mode select-cached --rate 500 --duration 10s
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/rated-dev/rated/internal/loadgen"
	"github.com/rated-dev/rated/pkg/defaultbench"
)

func main() {
	target := flag.String("target", "http://127.0.0.1:8080", "rated serve base URL (loopback only)")
	mode := flag.String("mode", "select-cached", "select-cached, select-encode or feedback")
	rate := flag.Float64("rate", 500, "requests per second")
	duration := flag.Duration("duration", 10*time.Second, "how long to send")
	maxRequests := flag.Int("requests", 100000, "at most this many requests")
	workers := flag.Int("workers", 64, "requests in flight at most")
	token := flag.String("token", "", "bearer token")
	pid := flag.Int("server-pid", 0, "the server's process id: report its CPU time per request (from /proc), which other load on the machine does not inflate")
	flag.Parse()
	if err := run(*target, *mode, *rate, *duration, *maxRequests, *workers, *token, *pid); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

type client struct {
	http   *http.Client
	target string
	token  string
}

func (c client) post(ctx context.Context, path string, body any, out any) (int, error) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, "POST", c.target+path, bytes.NewReader(raw))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err == nil && out != nil && resp.StatusCode == 200 {
		err = json.Unmarshal(data, out)
	}
	return resp.StatusCode, err
}

type selection struct {
	DecisionID string `json:"decision_id"`
	Tools      []struct {
		ID string `json:"id"`
	} `json:"tools"`
}

func run(target, mode string, rate float64, duration time.Duration, maxRequests, workers int, token string, pid int) error {
	if err := loadgen.CheckLoopback(target); err != nil {
		return err
	}
	b, err := defaultbench.Load()
	if err != nil {
		return err
	}
	var queries []string
	for _, q := range b.SplitQueries("test") {
		queries = append(queries, q.Text)
	}
	c := client{http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}, target: strings.TrimRight(target, "/"), token: token}
	ctx := context.Background()
	cfg := loadgen.Config{Rate: rate, Workers: workers, Duration: duration, Requests: maxRequests}
	var do loadgen.Do
	switch mode {
	case "select-cached":
		// Warm the query-embedding cache: every query once.
		if _, err := loadgen.Run(ctx, loadgen.Config{Rate: 200, Workers: 8, Duration: 5 * time.Minute, Requests: len(queries)},
			func(ctx context.Context, i int) (int, error) {
				return c.post(ctx, "/v1/select", map[string]any{"query": queries[i]}, nil)
			}); err != nil {
			return err
		}
		do = func(ctx context.Context, i int) (int, error) {
			return c.post(ctx, "/v1/select", map[string]any{"query": queries[i%len(queries)]}, nil)
		}
	case "select-encode":
		// Every query is new to the cache: the encoder runs for each.
		do = func(ctx context.Context, i int) (int, error) {
			q := fmt.Sprintf("%s (request %d)", queries[i%len(queries)], i)
			return c.post(ctx, "/v1/select", map[string]any{"query": q}, nil)
		}
	case "feedback":
		// Open enough decisions first (cached queries), then report every candidate of each.
		need := min(maxRequests, int(rate*duration.Seconds())+1)
		var sels []selection
		for i := 0; len(sels) == 0 || countTools(sels) < need; i++ {
			var s selection
			if code, err := c.post(ctx, "/v1/select", map[string]any{"query": queries[i%len(queries)]}, &s); err != nil || code != 200 {
				return fmt.Errorf("opening decisions: status %d: %v", code, err)
			}
			sels = append(sels, s)
		}
		type pair struct{ decision, tool string }
		var pairs []pair
		for _, s := range sels {
			for _, t := range s.Tools {
				pairs = append(pairs, pair{s.DecisionID, t.ID})
			}
		}
		rng := rand.New(rand.NewPCG(1, 2))
		executed := make([]bool, len(pairs))
		for i := range executed {
			executed[i] = rng.IntN(5) > 0
		}
		fmt.Fprintf(os.Stderr, "opened %d decisions (%d tools to report)\n", len(sels), len(pairs))
		do = func(ctx context.Context, i int) (int, error) {
			p := pairs[i%len(pairs)]
			return c.post(ctx, "/v1/feedback", map[string]any{"decision_id": p.decision, "tool": p.tool, "executed": executed[i%len(pairs)], "latency_ms": 100}, nil)
		}
	default:
		return fmt.Errorf("--mode %q: select-cached, select-encode or feedback", mode)
	}
	cpu0, err := cpuTime(pid)
	if err != nil {
		return err
	}
	res, err := loadgen.Run(ctx, cfg, do)
	if err != nil {
		return err
	}
	cpu1, _ := cpuTime(pid)
	fmt.Printf("%s at %.0f/s for %v: sent %d, ok %d, codes %v, held %.0f/s, p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n",
		mode, rate, duration, res.Sent, res.OK, res.Codes, res.Throughput(), ms(res.Percentile(50)), ms(res.Percentile(90)),
		ms(res.Percentile(99)), ms(res.Percentile(100)))
	if pid > 0 && res.Sent > 0 {
		fmt.Printf("  server CPU %.1f µs per request (%.2f s over the run)\n", float64(cpu1-cpu0)/float64(time.Microsecond)/float64(res.Sent), (cpu1 - cpu0).Seconds())
	}
	return nil
}

// cpuTime is the user + system CPU time of process pid (0: none), from /proc/PID/stat.
func cpuTime(pid int) (time.Duration, error) {
	if pid <= 0 {
		return 0, nil
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the parenthesised command: state is field 3; utime and stime are 14 and 15.
	rest := string(raw[strings.LastIndexByte(string(raw), ')')+2:])
	f := strings.Fields(rest)
	var ut, st int64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / ticks, nil
}

func countTools(sels []selection) int {
	n := 0
	for _, s := range sels {
		n += len(s.Tools)
	}
	return n
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
