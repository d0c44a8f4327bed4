package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/redistest"
	"github.com/rated-dev/rated/pkg/router"
	"github.com/rated-dev/rated/pkg/serve"
	"github.com/rated-dev/rated/pkg/state"
)

// replicaArgs are the flags of every replica in these tests: BM25, one step per hour (every
// decision and report at step 0, so the state depends only on the reports and their order), the
// others' reports read every 20 ms, and no snapshot (the log keeps every report for the checks).
func replicaArgs(url, cat string) []string {
	return []string{"--retriever", "bm25", "--state", url, "--step", "1h", "--follow-every", "20ms",
		"--snapshot-every", "1000000000", "--catalog", cat}
}

// sentReport is one acknowledged report and the query of its decision.
type sentReport struct {
	query, decision, tool string
	executed              bool
}

// spread sends count select + feedback pairs from workers, each selection to replica i and its
// feedback to replica i+1 (as a round-robin load balancer would), and returns the acknowledged
// reports and the refused ones by status.
func spread(bases []string, queries []string, count, workers, offset int) ([]sentReport, map[int]int) {
	var mu sync.Mutex
	var acks []sentReport
	refused := map[int]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < count; i += workers {
				n := i + offset
				q := queries[(n*7)%len(queries)]
				var sel selection
				code, err := post(bases[n%len(bases)], "/v1/select", map[string]any{"query": q}, &sel)
				if err != nil || code != 200 || len(sel.Tools) == 0 {
					mu.Lock()
					refused[code]++
					mu.Unlock()
					continue
				}
				a := sentReport{q, sel.DecisionID, sel.Tools[n%len(sel.Tools)].ID, n%3 != 0}
				code, err = post(bases[(n+1)%len(bases)], "/v1/feedback", map[string]any{"decision_id": a.decision, "tool": a.tool, "executed": a.executed}, nil)
				mu.Lock()
				if err == nil && code == 200 {
					acks = append(acks, a)
				} else {
					refused[code]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return acks, refused
}

func getJSON(t *testing.T, url string, out any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return resp.StatusCode
}

// converge waits until every replica reports the same applied record and policy digest by
// following alone (no sync), and returns the digest and how long it took.
func converge(t *testing.T, bases []string, within time.Duration) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		var states []serve.StateResponse
		for _, b := range bases {
			var st serve.StateResponse
			getJSON(t, b+"/v1/state", &st)
			states = append(states, st)
		}
		same := true
		for _, st := range states[1:] {
			same = same && st == serve.StateResponse{AppliedSeq: states[0].AppliedSeq, PolicySHA256: states[0].PolicySHA256,
				Replica: true, FollowAgeMS: st.FollowAgeMS}
		}
		if same {
			return states[0].PolicySHA256, time.Since(start)
		}
		if time.Since(start) > within {
			t.Fatalf("replicas not converged after %s: %+v", within, states)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// inLogOrder returns the acknowledged reports in the order of the shared log, failing when the
// log lacks one or holds one nobody acknowledged.
func inLogOrder(t *testing.T, url string, acks []sentReport) []sentReport {
	t.Helper()
	byDecision := map[string]sentReport{}
	for _, a := range acks {
		byDecision[a.decision] = a
	}
	store, err := state.OpenRedis(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var order []sentReport
	err = router.LoggedReports(context.Background(), store, func(r router.LoggedReport) error {
		a, ok := byDecision[r.DecisionID]
		if ok && (a.tool != r.Tool || a.executed != r.Outcome.Executed) {
			return fmt.Errorf("the log holds %+v, the client was acknowledged %+v", r, a)
		}
		if ok {
			order = append(order, a)
			delete(byDecision, r.DecisionID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(byDecision) > 0 {
		t.Fatalf("%d acknowledged reports are not in the shared log", len(byDecision))
	}
	return order
}

// TestServeReplicasEndInTheStateOfOneServer: two, then four `rated serve` processes share one
// Redis; a feedback stream is sent across them (selection on one replica, feedback on the next)
// by eight clients. By following alone every replica reaches the same state; that state is the
// state of a single `rated serve` fed the same reports in the log's order; every acknowledged
// report is in the log.
func TestServeReplicasEndInTheStateOfOneServer(t *testing.T) {
	srv := redistest.Start(t)
	cat, queries := catalogFile(t)
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprintf("replicas=%d", n), func(t *testing.T) {
			url := srv.URL()
			var bases []string
			for range n {
				bases = append(bases, startServer(t, replicaArgs(url, cat)...).base)
			}
			acks, refused := spread(bases, queries, 300, 8, 0)
			if len(refused) > 0 || len(acks) < 250 {
				t.Fatalf("%d acknowledged, refused by status %v", len(acks), refused)
			}
			digest, took := converge(t, bases, 10*time.Second)
			t.Logf("%d replicas: %d reports acknowledged; every replica at the same state %.12s… %s after the last acknowledgement (following every 20 ms)", n, len(acks), digest, took.Round(time.Millisecond))
			one := startServer(t, "--retriever", "bm25", "--ephemeral", "--step", "1h", "--catalog", cat)
			for _, a := range inLogOrder(t, url, acks) {
				var sel selection
				if code, err := post(one.base, "/v1/select", map[string]any{"query": a.query}, &sel); err != nil || code != 200 {
					t.Fatalf("one server: select %d %v", code, err)
				}
				if code, err := post(one.base, "/v1/feedback", map[string]any{"decision_id": sel.DecisionID, "tool": a.tool, "executed": a.executed}, nil); err != nil || code != 200 {
					t.Fatalf("one server: feedback %d %v", code, err)
				}
			}
			var st serve.StateResponse
			getJSON(t, one.base+"/v1/state", &st)
			if st.PolicySHA256 != digest {
				t.Fatalf("one server fed the same reports: state %s, the replicas %s", st.PolicySHA256, digest)
			}
		})
	}
}

// TestServeReplicasThroughARedisRestart: two replicas take feedback while Redis is killed (kill
// -9) and restarted from its append-only file. While it is down they answer selections from
// their last state, refuse feedback with 503 and report degraded health; afterwards they take
// feedback again, catch up to one state, and no acknowledged report is lost.
func TestServeReplicasThroughARedisRestart(t *testing.T) {
	srv := redistest.Start(t)
	cat, queries := catalogFile(t)
	url := srv.URL()
	bases := []string{startServer(t, replicaArgs(url, cat)...).base, startServer(t, replicaArgs(url, cat)...).base}
	stop := make(chan struct{})
	var acks []sentReport
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // feedback all along: before, during and after the outage
		defer wg.Done()
		for round := 0; ; round++ {
			select {
			case <-stop:
				return
			default:
			}
			a, _ := spread(bases, queries, 40, 4, round*40)
			mu.Lock()
			acks = append(acks, a...)
			mu.Unlock()
		}
	}()
	time.Sleep(time.Second)
	srv.Kill()
	// Down: selections answered, feedback refused, health degraded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var h map[string]any
		code := getJSON(t, bases[1]+"/healthz", &h)
		if code == http.StatusServiceUnavailable && h["status"] == "degraded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health with Redis down: %d %v", code, h)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var sel selection
	if code, err := post(bases[0], "/v1/select", map[string]any{"query": queries[0]}, &sel); err != nil || code != 200 || len(sel.Tools) == 0 {
		t.Fatalf("select with Redis down: %d %v", code, err)
	}
	if code, _ := post(bases[0], "/v1/feedback", map[string]any{"decision_id": sel.DecisionID, "tool": sel.Tools[0].ID, "executed": true}, nil); code != http.StatusServiceUnavailable {
		t.Fatalf("feedback with Redis down: %d, want 503", code)
	}
	time.Sleep(300 * time.Millisecond)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	for _, b := range bases {
		deadline := time.Now().Add(10 * time.Second)
		for {
			var h map[string]any
			if getJSON(t, b+"/healthz", &h) == 200 && h["status"] == "ok" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still degraded after Redis came back: %v", b, h)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	converge(t, bases, 10*time.Second)
	order := inLogOrder(t, url, acks)
	t.Logf("%d reports acknowledged across the Redis restart, all %d in the log", len(acks), len(order))
}
