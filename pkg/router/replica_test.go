package router_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/redistest"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/router"
	"github.com/rated-dev/rated/pkg/state"
)

func openRedis(t testing.TB, url string) *state.Redis {
	t.Helper()
	s, err := state.OpenRedis(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// replicaConfig gives every replica (and the one-router reference) the same wall-clock step of
// an hour, so every decision and report of a test happens at step 0 and the state depends only
// on the reports and their order.
func replicaConfig(cfg *router.Config) {
	cfg.StepEvery = time.Hour
	cfg.FollowEvery = 10 * time.Millisecond
	cfg.SnapshotEvery = 1 << 20 // the log keeps every report for the checks (one test snapshots)
}

func replicas(t *testing.T, url string, n int, mutate ...func(*router.Config)) []*router.Router {
	t.Helper()
	rs := make([]*router.Router, n)
	var wg sync.WaitGroup
	for i := range rs {
		wg.Add(1)
		go func() { // concurrent starts: boot numbers and the first catalog are claimed
			defer wg.Done()
			rs[i] = newRouter(t, openRedis(t, url), nil, append([]func(*router.Config){replicaConfig}, mutate...)...)
			t.Cleanup(func() { rs[i].Close() })
		}()
	}
	wg.Wait()
	for _, r := range rs {
		if r == nil {
			t.FailNow()
		}
	}
	return rs
}

func digest(t *testing.T, r *router.Router) (uint64, string) {
	t.Helper()
	seq, d, err := r.StateDigest()
	if err != nil {
		t.Fatal(err)
	}
	return seq, d
}

// sent is one acknowledged report, for replaying the stream into a single router.
type sent struct {
	query, tool string
	outcome     router.Outcome
}

// feed sends steps of select + report across the replicas from several goroutines at once: each
// decision is reported to another replica than the one that made it, and repeated to a third
// (a retry through the load balancer: a duplicate). It returns the acknowledged reports by
// decision id.
func feed(t *testing.T, rs []*router.Router, steps, workers int, seed uint64) map[string]sent {
	t.Helper()
	_, queries, _ := load(t)
	ctx := context.Background()
	var mu sync.Mutex
	acked := map[string]sent{}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			world := world{rand.New(rand.NewPCG(seed, uint64(w)))}
			for s := w; s < steps; s += workers {
				q := queries[(s*7)%len(queries)]
				sel, err := rs[s%len(rs)].Select(ctx, q, router.SelectOptions{})
				if err != nil {
					errs <- err
					return
				}
				if len(sel.Tools) == 0 {
					continue
				}
				tool := sel.Tools[s%len(sel.Tools)].ID // not always the choice: more tools get evidence
				o, lat := world.outcome(s, q, tool)
				rec, err := rs[(s+1)%len(rs)].Report(ctx, sel.DecisionID, tool, o, lat)
				if err != nil || rec.Duplicate {
					errs <- fmt.Errorf("step %d: report to another replica: %v (duplicate %v)", s, err, rec.Duplicate)
					return
				}
				mu.Lock()
				acked[sel.DecisionID] = sent{q, tool, o}
				mu.Unlock()
				if rec, err := rs[(s+2)%len(rs)].Report(ctx, sel.DecisionID, tool, o, lat); err != nil || !rec.Duplicate {
					errs <- fmt.Errorf("step %d: the same report to a third replica: %v, duplicate %v (want a duplicate)", s, err, rec.Duplicate)
					return
				}
				flipped := o
				flipped.Executed, flipped.Task = !o.Executed, nil
				if _, err := rs[(s+3)%len(rs)].Report(ctx, sel.DecisionID, tool, flipped, lat); !errors.Is(err, router.ErrConflict) {
					errs <- fmt.Errorf("step %d: another outcome on a fourth replica: %v, want a conflict", s, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return acked
}

// TestReplicasEndInTheStateOfOneRouter: two and four replicas on one Redis take a stream of
// selections and reports concurrently, every report sent to another replica than the one that
// selected, retried on a third (a duplicate) and contradicted on a fourth (a conflict). Every
// replica then holds exactly the same policy state, which is exactly the state of a single
// router fed the acknowledged reports in the log's order; nothing acknowledged is missing from
// the log.
func TestReplicasEndInTheStateOfOneRouter(t *testing.T) {
	srv := redistest.Start(t)
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprintf("replicas=%d", n), func(t *testing.T) {
			url := srv.URL()
			rs := replicas(t, url, n)
			boots := map[uint64]bool{}
			for _, r := range rs {
				boots[r.Info().Boot] = true
			}
			if len(boots) != n {
				t.Fatalf("%d replicas started with %d distinct boot numbers", n, len(boots))
			}
			acked := feed(t, rs, 240, 4, uint64(n))
			// Within the staleness bound every replica has read everything; Sync is the bound.
			time.Sleep(100 * time.Millisecond)
			seq0, want := digest(t, rs[0])
			for i, r := range rs {
				if info := r.Info(); !info.Replica || info.FollowAge > time.Second {
					t.Fatalf("replica %d: %+v", i, info)
				}
				if seq, d := digest(t, r); seq != seq0 || d != want {
					// Not yet followed within 100 ms on a loaded machine: read now and compare.
					r.Sync(context.Background())
					if seq, d = digest(t, r); d != want {
						t.Fatalf("replica %d at record %d has state %s, replica 0 at %d has %s", i, seq, d, seq0, want)
					}
				}
			}
			// One router fed the acknowledged reports in the log's order.
			check := openRedis(t, url)
			var order []sent
			err := router.LoggedReports(context.Background(), check, func(lr router.LoggedReport) error {
				s, ok := acked[lr.DecisionID]
				if !ok || s.tool != lr.Tool {
					return fmt.Errorf("the log holds a report nobody acknowledged: %+v", lr)
				}
				order = append(order, s)
				delete(acked, lr.DecisionID)
				return nil
			})
			check.Close()
			if err != nil {
				t.Fatal(err)
			}
			if len(acked) != 0 {
				t.Fatalf("%d acknowledged reports are not in the log", len(acked))
			}
			one := newRouter(t, nil, nil, func(c *router.Config) { c.StepEvery = time.Hour })
			defer one.Close()
			for _, s := range order {
				sel, err := one.Select(context.Background(), s.query, router.SelectOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := one.Report(context.Background(), sel.DecisionID, s.tool, s.outcome, -1); err != nil {
					t.Fatal(err)
				}
			}
			if _, d := digest(t, one); d != want {
				t.Fatalf("one router fed the same %d reports holds state %s, the replicas %s", len(order), d, want)
			}
			for _, r := range rs {
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestReplicasShareTheCatalog: tools put on two replicas at once get distinct indices, a tool
// put on one replica is selectable and reportable through the other, and deletions propagate.
func TestReplicasShareTheCatalog(t *testing.T) {
	srv := redistest.Start(t)
	rs := replicas(t, srv.URL(), 2)
	ctx := context.Background()
	newTool := func(id, desc string) catalog.Tool {
		return catalog.Tool{ID: id, Name: id, Platform: "other", Description: desc}
	}
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tools := []catalog.Tool{newTool("zz/both", "a tool both replicas add at once"),
				newTool(fmt.Sprintf("zz/only-%d", i), fmt.Sprintf("zebra xylophone quartz %d only", i))}
			if _, _, err := r.PutTools(ctx, tools); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, r := range rs {
		if err := r.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := len(rs[0].Tools()), len(rs[1].Tools()); a != b {
		t.Fatalf("catalogs of %d and %d tools", a, b)
	}
	for i, r := range rs {
		for _, id := range []string{"zz/both", "zz/only-0", "zz/only-1"} {
			if _, ok := r.Tool(id); !ok {
				t.Fatalf("replica %d lacks %s", i, id)
			}
		}
	}
	// Put on replica 0 and report through replica 1 at once (replica 1 catches up by itself).
	if _, _, err := rs[0].PutTools(ctx, []catalog.Tool{newTool("zz/fresh", "zebra xylophone quartz fresh")}); err != nil {
		t.Fatal(err)
	}
	sel, err := rs[0].Select(ctx, "zebra xylophone quartz fresh", router.SelectOptions{})
	if err != nil || len(sel.Tools) == 0 {
		t.Fatalf("select: %v", err)
	}
	if _, err := rs[1].Report(ctx, sel.DecisionID, "zz/fresh", router.Outcome{Executed: true}, -1); err != nil {
		t.Fatalf("report of a tool added on the other replica: %v", err)
	}
	if err := rs[1].DeleteTool(ctx, "zz/both"); err != nil {
		t.Fatal(err)
	}
	rs[0].Sync(ctx)
	if _, ok := rs[0].Tool("zz/both"); ok {
		t.Fatal("a deletion on replica 1 did not reach replica 0")
	}
	for _, r := range rs {
		r.Close()
	}
}

// TestReplicaReloadsWhenTheLogWasTrimmed: a replica that did not read the log while another one
// wrote several snapshots (which trim the records they cover) reloads the snapshot and ends in
// the same state.
func TestReplicaReloadsWhenTheLogWasTrimmed(t *testing.T) {
	srv := redistest.Start(t)
	url := srv.URL()
	slow := func(c *router.Config) { c.FollowEvery = time.Hour; c.SnapshotEvery = 20 }
	a := newRouter(t, openRedis(t, url), nil, replicaConfig, slow)
	b := newRouter(t, openRedis(t, url), nil, replicaConfig, slow)
	feed(t, []*router.Router{a, a, a, a}, 200, 1, 9) // every report through a
	if err := b.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, da := digest(t, a)
	if _, db := digest(t, b); da != db {
		t.Fatalf("after the reload: %s vs %s", db, da)
	}
	a.Close()
	b.Close()
}

// TestReplicaReloadKeepsItsCalibrator: a replica that reloads the shared state (another
// replica's snapshot trimmed the log) keeps its own calibrator, not the snapshot writer's: the
// calibrated relevance it serves for a query is the same before and after the reload.
func TestReplicaReloadKeepsItsCalibrator(t *testing.T) {
	_, queries, cal := load(t)
	other := *cal
	other.Weights[0] += 3 // replica a's calibrator differs from b's
	srv := redistest.Start(t)
	url := srv.URL()
	slow := func(c *router.Config) { c.FollowEvery = time.Hour; c.SnapshotEvery = 20 }
	a := newRouter(t, openRedis(t, url), nil, replicaConfig, slow, func(c *router.Config) { c.Calibrator = &other })
	b := newRouter(t, openRedis(t, url), nil, replicaConfig, slow)
	calibrated := func() map[string]float64 {
		sel, err := b.Select(context.Background(), queries[3], router.SelectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, x := range sel.Tools {
			out[x.ID] = x.Calibrated
		}
		return out
	}
	before := calibrated()
	feed(t, []*router.Router{a, a, a, a}, 200, 1, 9) // a snapshots every 20 records
	if err := b.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := calibrated()
	if len(after) == 0 {
		t.Fatal("no candidates after the reload")
	}
	for id, v := range after {
		if w, ok := before[id]; ok && math.Abs(v-w) > 1e-12 {
			t.Fatalf("tool %s: calibrated %v after the reload, %v before (a's calibrator)", id, v, w)
		}
	}
	a.Close()
	b.Close()
}

// TestReplicaWithRedisDown: with Redis killed, a replica still selects from its last state,
// refuses reports (not durable) and says it is degraded; once Redis is back (from its
// append-only file) reports are accepted and every replica catches up.
func TestReplicaWithRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	url := srv.URL()
	rs := replicas(t, url, 2, func(c *router.Config) { c.FollowEvery = 20 * time.Millisecond })
	acked := feed(t, rs, 40, 1, 3)
	_, queries, _ := load(t)
	ctx := context.Background()
	srv.Kill()
	sel, err := rs[0].Select(ctx, queries[0], router.SelectOptions{})
	if err != nil || len(sel.Tools) == 0 {
		t.Fatalf("select with Redis down: %v", err)
	}
	if _, err := rs[0].Report(ctx, sel.DecisionID, sel.Tools[0].ID, router.Outcome{Executed: true}, -1); err == nil {
		t.Fatal("a report was acknowledged with Redis down")
	}
	deadline := time.Now().Add(10 * time.Second)
	for rs[1].Info().Degraded == "" {
		if time.Now().After(deadline) {
			t.Fatal("replica 1 does not report degraded health with Redis down")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	// The decision made while Redis was down is reportable on its own replica.
	if _, err := rs[0].Report(ctx, sel.DecisionID, sel.Tools[0].ID, router.Outcome{Executed: true}, -1); err != nil {
		t.Fatalf("report after Redis came back: %v", err)
	}
	more := feed(t, rs, 40, 1, 4)
	for _, r := range rs {
		if err := r.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if d := r.Info().Degraded; d != "" {
			t.Fatalf("still degraded after catching up: %s", d)
		}
	}
	_, d0 := digest(t, rs[0])
	if _, d1 := digest(t, rs[1]); d0 != d1 {
		t.Fatal("replicas differ after Redis came back")
	}
	n := 0
	check := openRedis(t, url)
	router.LoggedReports(ctx, check, func(lr router.LoggedReport) error {
		if _, ok := acked[lr.DecisionID]; ok {
			n++
		}
		if _, ok := more[lr.DecisionID]; ok {
			n++
		}
		return nil
	})
	check.Close()
	if n != len(acked)+len(more) {
		t.Fatalf("%d of %d acknowledged reports in the log after the Redis restart", n, len(acked)+len(more))
	}
	for _, r := range rs {
		r.Close()
	}
}

// TestSharedStateNeedsWallClockSteps: a selection-count clock is refused on a shared store.
func TestSharedStateNeedsWallClockSteps(t *testing.T) {
	srv := redistest.Start(t)
	tools, _, cal := load(t)
	front, _ := router.NewLexicalFrontend(128)
	_, err := router.New(context.Background(), router.Config{Frontend: front, Tools: tools, Calibrator: cal, Store: openRedis(t, srv.URL())})
	if err == nil {
		t.Fatal("a shared store without StepEvery was accepted")
	}
}
