package router_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/diskfull"
	"github.com/rated-dev/rated/internal/testfs"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/decisionlog"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/router"
	"github.com/rated-dev/rated/pkg/state"
)

// fixture is the embedded default benchmark's catalog and test queries with a lexical
// frontend and its calibrator, built once.
var fixture struct {
	once    sync.Once
	tools   []catalog.Tool
	queries []string
	cal     *bandit.Calibrator
	err     error
}

func load(t testing.TB) ([]catalog.Tool, []string, *bandit.Calibrator) {
	t.Helper()
	fixture.once.Do(func() {
		var b *bench.Bench
		if b, fixture.err = defaultbench.Load(); fixture.err != nil {
			return
		}
		fixture.tools = b.Tools
		for _, q := range b.SplitQueries("test") {
			fixture.queries = append(fixture.queries, q.Text)
		}
		front, _ := router.NewLexicalFrontend(128)
		fixture.cal, _, fixture.err = router.FitCalibration(front, b, "dev", 10, bandit.DefaultHubnessDepth, bandit.DefaultHubnessStrength)
	})
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	return append([]catalog.Tool(nil), fixture.tools...), fixture.queries, fixture.cal
}

func newRouter(t testing.TB, store state.Store, spec *bandit.Spec, mutate ...func(*router.Config)) *router.Router {
	t.Helper()
	tools, _, cal := load(t)
	front, _ := router.NewLexicalFrontend(128)
	cfg := router.Config{Frontend: front, Tools: tools, Calibrator: cal, Store: store, Policy: spec, Seed: 5, SnapshotEvery: 97}
	for _, m := range mutate {
		m(&cfg)
	}
	r, err := router.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func openBolt(t testing.TB, dir string) *state.Bolt {
	t.Helper()
	s, err := state.OpenBolt(dir, state.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// world decides outcomes: a tool whose id hashes to 0 mod 4 fails from step 60 on; task success
// is observed for every other decision, true when the tool ran and the query's hash agrees.
type world struct{ rng *rand.Rand }

func hash(s string) uint64 { h := fnv.New64a(); h.Write([]byte(s)); return h.Sum64() }

func (w world) outcome(step int, query, tool string) (router.Outcome, time.Duration) {
	o := router.Outcome{Executed: !(step >= 60 && hash(tool)%4 == 0) && w.rng.Float64() < 0.95}
	if step%2 == 0 {
		task := o.Executed && (hash(query)+hash(tool))%3 != 0
		o.Task = &task
	}
	return o, time.Duration(w.rng.IntN(900)) * time.Millisecond
}

// drive runs steps on every router with identical inputs, reporting the chosen tool (and after
// a failure, the next one: a fallback), and checks that all routers answer identically.
func drive(t *testing.T, rs []*router.Router, from, to int, seed uint64) {
	t.Helper()
	_, queries, _ := load(t)
	ctx := context.Background()
	w := world{rand.New(rand.NewPCG(seed, 1))}
	for s := from; s < to; s++ {
		q := queries[(s*7)%len(queries)]
		sels := make([]*router.Selection, len(rs))
		for i, r := range rs {
			sel, err := r.Select(ctx, q, router.SelectOptions{})
			if err != nil {
				t.Fatalf("step %d, router %d: %v", s, i, err)
			}
			sels[i] = sel
			if i > 0 {
				sameSelection(t, s, sels[0], sel)
			}
		}
		if len(sels[0].Tools) == 0 {
			continue // no tool shares a term with the query
		}
		o, lat := w.outcome(s, q, sels[0].Tools[0].ID)
		for i, r := range rs {
			if _, err := r.Report(ctx, sels[i].DecisionID, sels[i].Tools[0].ID, o, lat); err != nil {
				t.Fatalf("step %d: report: %v", s, err)
			}
		}
		if !o.Executed && len(sels[0].Tools) > 1 {
			o2, lat2 := w.outcome(s, q, sels[0].Tools[1].ID)
			for i, r := range rs {
				if _, err := r.Report(ctx, sels[i].DecisionID, sels[i].Tools[1].ID, o2, lat2); err != nil {
					t.Fatalf("step %d: fallback report: %v", s, err)
				}
			}
		}
	}
}

func sameSelection(t *testing.T, step int, a, b *router.Selection) {
	t.Helper()
	if a.Step != b.Step || len(a.Tools) != len(b.Tools) {
		t.Fatalf("step %d: step clocks %d vs %d, %d vs %d tools", step, a.Step, b.Step, len(a.Tools), len(b.Tools))
	}
	same := func(x, y float64) bool {
		return math.Float64bits(x) == math.Float64bits(y) || math.IsNaN(x) && math.IsNaN(y)
	}
	for i := range a.Tools {
		x, y := a.Tools[i], b.Tools[i]
		if x.ID != y.ID || !same(x.Score, y.Score) || !same(x.Reliability, y.Reliability) || !same(x.Relevance, y.Relevance) ||
			x.Masked != y.Masked || x.Propensity != y.Propensity || x.Prior != y.Prior {
			t.Fatalf("step %d, rank %d: %+v vs %+v", step, i, x, y)
		}
	}
}

// catalogChanges applies the same catalog edits to every router: remove a tool, add a new one,
// change a description.
func catalogChanges(t *testing.T, rs []*router.Router, tools []catalog.Tool) {
	t.Helper()
	ctx := context.Background()
	added := catalog.Tool{ID: "other/test/weather_now", Name: "weather_now", Platform: "other",
		Description: "Returns the current weather, temperature and forecast for any city.",
		Endpoints:   []catalog.Endpoint{{URL: "https://weather.example.org/now"}}}
	changed := tools[3]
	changed.Description += " Also works for batches."
	for _, r := range rs {
		if err := r.DeleteTool(ctx, tools[0].ID); err != nil {
			t.Fatal(err)
		}
		if a, u, err := r.PutTools(ctx, []catalog.Tool{added, changed}); err != nil || a != 1 || u != 1 {
			t.Fatalf("put: %d added, %d updated, %v", a, u, err)
		}
	}
}

// TestRestartMatchesUninterruptedRouter: a router on the bbolt store is stopped (gracefully, or
// as by kill -9) and started again; from then on it answers exactly as a twin that never
// stopped and saw the same requests, reports and catalog changes.
func TestRestartMatchesUninterruptedRouter(t *testing.T) {
	specs := []*bandit.Spec{nil, // the recommended policy
		{Name: "rated", Kind: "rated", Alpha: 0.1, Gamma: 0.95},
		{Name: "breaker", Kind: "circuit_breaker", ConsecutiveFailures: 1, CoolDown: 20},
		{Name: "sw", Kind: "sw_ucb", Window: 50},
		{Name: "grpo", Kind: "batch_grpo", Batch: 30},
	}
	for _, spec := range specs {
		for _, crash := range []bool{false, true} {
			name := "recommended"
			if spec != nil {
				name = spec.Name
			}
			if crash && spec != nil && spec.Kind == "batch_grpo" {
				continue // its random draws since the last snapshot are not replayed
			}
			t.Run(fmt.Sprintf("%s/crash=%v", name, crash), func(t *testing.T) {
				tools, _, _ := load(t)
				dir := t.TempDir()
				a := newRouter(t, openBolt(t, dir), spec)
				b := newRouter(t, nil, spec)
				defer b.Close()
				drive(t, []*router.Router{a, b}, 0, 90, 1)
				catalogChanges(t, []*router.Router{a, b}, tools)
				drive(t, []*router.Router{a, b}, 90, 160, 2)
				before := a.PolicyStateForTest()
				if crash {
					a.CrashForTest()
				} else if err := a.Close(); err != nil {
					t.Fatal(err)
				}
				// Restarted from its state alone (no catalog given): the catalog changes persist.
				a = newRouter(t, openBolt(t, dir), spec, func(c *router.Config) { c.Tools = nil })
				defer a.Close()
				if after := a.PolicyStateForTest(); spec == nil && !bytes.Equal(before, after) {
					t.Fatal("the restored policy state differs from the state before the stop")
				}
				if _, ok := a.Tool(tools[0].ID); ok {
					t.Fatal("a removed tool came back after the restart")
				}
				if _, ok := a.Tool("other/test/weather_now"); !ok {
					t.Fatal("an added tool was lost in the restart")
				}
				drive(t, []*router.Router{a, b}, 160, 260, 3)
			})
		}
	}
}

// TestConcurrentUseKeepsEveryAcknowledgedReport runs Select, Report and catalog changes from
// many goroutines (run it with -race), then stops the router as kill -9 would and checks the
// restored policy state is byte-identical to the live one: every acknowledged report is there.
func TestConcurrentUseKeepsEveryAcknowledgedReport(t *testing.T) {
	tools, queries, _ := load(t)
	dir := t.TempDir()
	r := newRouter(t, openBolt(t, dir), nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := 0
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for i := range 60 {
				switch {
				case g == 5 && i%10 == 0:
					extra := catalog.Tool{ID: fmt.Sprintf("other/extra/tool_%d", i), Name: fmt.Sprintf("extra_%d", i), Platform: "other",
						Description: "Sends an email message to a list of recipients."}
					if _, _, err := r.PutTools(ctx, []catalog.Tool{extra}); err != nil {
						t.Error(err)
						return
					}
				case g == 5 && i%10 == 5:
					if err := r.DeleteTool(ctx, tools[i].ID); err != nil {
						t.Error(err)
						return
					}
				default:
					sel, err := r.Select(ctx, queries[rng.IntN(len(queries))], router.SelectOptions{})
					if err != nil {
						t.Error(err)
						return
					}
					for _, tool := range sel.Tools[:min(2, len(sel.Tools))] {
						if _, err := r.Report(ctx, sel.DecisionID, tool.ID, router.Outcome{Executed: rng.IntN(3) > 0}, -1); err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						acked++
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	before := r.PolicyStateForTest()
	r.CrashForTest()
	r = newRouter(t, openBolt(t, dir), nil)
	defer r.Close()
	if !bytes.Equal(before, r.PolicyStateForTest()) {
		t.Fatalf("after %d acknowledged reports, the restored policy state differs from the live one", acked)
	}
}

func TestClientErrors(t *testing.T) {
	r := newRouter(t, nil, nil)
	defer r.Close()
	ctx := context.Background()
	sel, err := r.Select(ctx, "send an email", router.SelectOptions{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	chosen := sel.Tools[0].ID
	yes := true
	field := func(err error) string {
		var ie *router.InputError
		if errors.As(err, &ie) {
			return ie.Field
		}
		return "not an input error: " + fmt.Sprint(err)
	}
	for _, c := range []struct {
		name, want string
		err        error
	}{
		{"empty query", "query", second(r.Select(ctx, "  ", router.SelectOptions{}))},
		{"control character", "query", second(r.Select(ctx, "a\x00b", router.SelectOptions{}))},
		{"invalid UTF-8", "query", second(r.Select(ctx, "a\xffb", router.SelectOptions{}))},
		{"huge query", "query", second(r.Select(ctx, strings.Repeat("a", router.MaxQueryBytes+1), router.SelectOptions{}))},
		{"k too large", "k", second(r.Select(ctx, "email", router.SelectOptions{K: 11}))},
		{"negative k", "k", second(r.Select(ctx, "email", router.SelectOptions{K: -1}))},
		{"empty exclude", "exclude[0]", second(r.Select(ctx, "email", router.SelectOptions{Exclude: []string{""}}))},
		{"served without running", "task_success", second(r.Report(ctx, sel.DecisionID, chosen, router.Outcome{Task: &yes}, 0))},
		{"empty decision", "decision_id", second(r.Report(ctx, "", chosen, router.Outcome{}, 0))},
	} {
		if got := field(c.err); got != c.want {
			t.Errorf("%s: field %q, want %q", c.name, got, c.want)
		}
	}
	if _, err := r.Report(ctx, "d9-nope", chosen, router.Outcome{Executed: true}, 0); !errors.Is(err, router.ErrUnknownDecision) {
		t.Errorf("unknown decision: %v", err)
	}
	if _, err := r.Report(ctx, sel.DecisionID, "not/a/candidate", router.Outcome{Executed: true}, 0); !errors.Is(err, router.ErrUnknownTool) {
		t.Errorf("tool outside the decision: %v", err)
	}
	if rc, err := r.Report(ctx, sel.DecisionID, chosen, router.Outcome{Executed: true}, time.Millisecond); err != nil || rc.Duplicate {
		t.Fatalf("first report: %+v %v", rc, err)
	}
	if rc, err := r.Report(ctx, sel.DecisionID, chosen, router.Outcome{Executed: true}, time.Millisecond); err != nil || !rc.Duplicate {
		t.Errorf("repeated report: %+v %v, want a duplicate", rc, err)
	}
	if _, err := r.Report(ctx, sel.DecisionID, chosen, router.Outcome{Executed: false}, 0); !errors.Is(err, router.ErrConflict) {
		t.Errorf("contradicting report: %v", err)
	}
	if err := r.DeleteTool(ctx, "no/such/tool"); !errors.Is(err, router.ErrUnknownTool) {
		t.Errorf("delete unknown: %v", err)
	}
	bad := catalog.Tool{ID: "x/y/z", Name: "z"} // no platform
	if _, _, err := r.PutTools(ctx, []catalog.Tool{bad}); field(err) != "tools[0].platform" {
		t.Errorf("tool without platform: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

// TestExcludeIsAFallback: excluded tools stay candidates (the context) but are never returned,
// and the policy's next choice comes first.
func TestExcludeIsAFallback(t *testing.T) {
	r := newRouter(t, nil, nil)
	defer r.Close()
	ctx := context.Background()
	q := "convert 100 dollars to euros"
	sel, _ := r.Select(ctx, q, router.SelectOptions{K: 4})
	again, err := r.Select(ctx, q, router.SelectOptions{K: 4, Exclude: []string{sel.Tools[0].ID}})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Tools) != len(sel.Tools)-1 || again.Tools[0].ID != sel.Tools[1].ID {
		t.Fatalf("fallback ranking %v after excluding %s from %v", ids(again), sel.Tools[0].ID, ids(sel))
	}
	var all []string
	for _, x := range sel.Tools {
		all = append(all, x.ID)
	}
	if _, err := r.Select(ctx, q, router.SelectOptions{K: 4, Exclude: all}); err == nil {
		t.Fatal("excluding every candidate accepted")
	}
}

func ids(s *router.Selection) []string {
	var out []string
	for _, t := range s.Tools {
		out = append(out, t.ID)
	}
	return out
}

func TestStateRefusesAnotherPolicyOrEncoder(t *testing.T) {
	dir := t.TempDir()
	r := newRouter(t, openBolt(t, dir), nil)
	r.Close()
	tools, _, cal := load(t)
	other := &bandit.Spec{Name: "rated", Kind: "rated", Gamma: 0.95}
	front, _ := router.NewLexicalFrontend(128)
	store := openBolt(t, dir) // New does not take the store when it fails
	_, err := router.New(context.Background(), router.Config{Frontend: front, Tools: tools, Calibrator: cal, Store: store, Policy: other})
	if err == nil || !strings.Contains(err.Error(), "another policy spec") {
		t.Fatalf("another policy: %v", err)
	}
	wide, _ := router.NewLexicalFrontend(256)
	_, err = router.New(context.Background(), router.Config{Frontend: wide, Tools: tools, Calibrator: cal, Store: store})
	if err == nil || !strings.Contains(err.Error(), "dimension 128") {
		t.Fatalf("another frontend: %v", err)
	}
	store.Close()
}

func TestPendingDecisionsSurviveAGracefulRestart(t *testing.T) {
	dir := t.TempDir()
	r := newRouter(t, openBolt(t, dir), nil)
	sel, _ := r.Select(context.Background(), "post a message to slack", router.SelectOptions{})
	r.Close()
	r = newRouter(t, openBolt(t, dir), nil)
	defer r.Close()
	if _, err := r.Report(context.Background(), sel.DecisionID, sel.Tools[0].ID, router.Outcome{Executed: true}, 0); err != nil {
		t.Fatalf("report after a restart: %v", err)
	}
	sel2, _ := r.Select(context.Background(), "post a message to slack", router.SelectOptions{})
	if sel2.DecisionID == sel.DecisionID {
		t.Fatal("a decision id repeated across restarts")
	}
}

// TestDecisionLog checks the live log against the API's answers: one decision line per Select
// with the chosen tool first in the ranking and propensity 1, one outcome line per report.
func TestDecisionLog(t *testing.T) {
	dir := t.TempDir()
	w, err := decisionlog.Open(dir, decisionlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := newRouter(t, nil, nil, func(c *router.Config) { c.Log, c.LogContext = w, true })
	ctx := context.Background()
	sel, _ := r.Select(ctx, "translate this text to German", router.SelectOptions{K: 5})
	no := false
	r.Report(ctx, sel.DecisionID, sel.Tools[1].ID, router.Outcome{Executed: true, Task: &no}, 250*time.Millisecond)
	r.Close()
	files, _ := decisionlog.Files(dir, "decisions")
	var recs []decisionlog.Record
	if _, err := decisionlog.ReadFiles(files, func(rec decisionlog.Record) error { recs = append(recs, rec); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Decision == nil || recs[1].Outcome == nil {
		t.Fatalf("records: %+v", recs)
	}
	d, o := recs[0].Decision, recs[1].Outcome
	if d.ID != sel.DecisionID || d.Chosen != sel.Tools[0].ID || d.Explores || d.Query.Text != "translate this text to German" || len(d.Candidates) != 5 || d.ContextDim != 128 {
		t.Fatalf("decision line: %+v", d)
	}
	for _, c := range d.Candidates {
		want := 0.0
		if c.Tool == d.Chosen {
			want = 1
		}
		if c.Propensity != want || c.Score == nil || c.Reliability == nil {
			t.Fatalf("candidate %+v", c)
		}
	}
	if o.ID != sel.DecisionID || o.Tool != sel.Tools[1].ID || o.Chosen || !o.Executed || o.TaskSuccess == nil || *o.TaskSuccess || *o.LatencyMS != 250 {
		t.Fatalf("outcome line: %+v", o)
	}
	if ctxv, err := decisionlog.DecodeContext(d.Context, d.ContextDim); err != nil || len(ctxv) != 128 {
		t.Fatalf("context: %v", err)
	}
}

// TestDiskFull: on a real full file system a report fails with ErrFull and nothing changes;
// once space is freed reports work again, and a restart holds exactly the acknowledged ones.
func TestDiskFull(t *testing.T) {
	dir := testfs.Tmpfs(t, 8<<20)
	stateDir := filepath.Join(dir, "state")
	a := newRouter(t, openBolt(t, stateDir), nil, func(c *router.Config) { c.SnapshotEvery = 1 << 30 })
	b := newRouter(t, nil, nil) // the twin sees only the acknowledged reports
	defer b.Close()
	_, queries, _ := load(t)
	ctx := context.Background()
	filler := testfs.Fill(t, dir, 64<<10)
	var full error
	for i := 0; i < 5000 && full == nil; i++ {
		q := queries[i%len(queries)]
		sa, _ := a.Select(ctx, q, router.SelectOptions{})
		sb, _ := b.Select(ctx, q, router.SelectOptions{})
		o := router.Outcome{Executed: i%3 > 0}
		if _, full = a.Report(ctx, sa.DecisionID, sa.Tools[0].ID, o, 0); full == nil {
			b.Report(ctx, sb.DecisionID, sb.Tools[0].ID, o, 0)
		}
	}
	if !errors.Is(full, diskfull.ErrFull) || !strings.Contains(full.Error(), "no space left on device") {
		t.Fatalf("reports on a full disk: %v", full)
	}
	if a.Info().Degraded == "" {
		t.Fatal("Info does not report the storage failure")
	}
	os.Remove(filler)
	sa, _ := a.Select(ctx, queries[0], router.SelectOptions{})
	sb, _ := b.Select(ctx, queries[0], router.SelectOptions{})
	if _, err := a.Report(ctx, sa.DecisionID, sa.Tools[0].ID, router.Outcome{Executed: true}, 0); err != nil {
		t.Fatalf("report after freeing space: %v", err)
	}
	b.Report(ctx, sb.DecisionID, sb.Tools[0].ID, router.Outcome{Executed: true}, 0)
	if a.Info().Degraded != "" {
		t.Fatal("still degraded after a successful write")
	}
	a.CrashForTest()
	a = newRouter(t, openBolt(t, stateDir), nil)
	defer a.Close()
	if !bytes.Equal(a.PolicyStateForTest(), b.PolicyStateForTest()) {
		t.Fatal("after disk full and a restart, the state differs from the acknowledged reports")
	}
}

// TestWallClockSteps: with StepEvery, a mask lasts wall-clock time, not a number of Selects.
func TestWallClockSteps(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	r := newRouter(t, nil, nil, func(c *router.Config) { c.Clock, c.StepEvery = clock, time.Second })
	defer r.Close()
	ctx := context.Background()
	q := "get the weather forecast"
	sel, _ := r.Select(ctx, q, router.SelectOptions{})
	bad := sel.Tools[0].ID
	r.Report(ctx, sel.DecisionID, bad, router.Outcome{Executed: false}, 0)
	for i := 0; i < 300; i++ { // many Selects in the same second: the mask holds
		sel, _ = r.Select(ctx, q, router.SelectOptions{})
	}
	if !masked(sel, bad) || sel.Step != 0 {
		t.Fatalf("step %d: the failed tool is not masked within the same second", sel.Step)
	}
	rec, _ := bandit.RecommendedSpec()
	// The first failure masks steps 1..D (and opens an incident whose first probe, at step
	// incident_probe, may offer the tool earlier).
	d := rec.Reliability.MaskBase
	if p := rec.Reliability.IncidentProbe; p > 0 && p <= d {
		d = p - 1
	}
	advance(time.Duration(d) * time.Second)
	if sel, _ = r.Select(ctx, q, router.SelectOptions{}); sel.Step != int64(d) || !masked(sel, bad) {
		t.Fatalf("step %d: the mask must last through step %d", sel.Step, d)
	}
	d = rec.Reliability.MaskBase
	advance(time.Duration(int64(d+1)-sel.Step) * time.Second)
	if sel, _ = r.Select(ctx, q, router.SelectOptions{}); sel.Step != int64(d+1) || masked(sel, bad) {
		t.Fatalf("step %d: the mask should have ended", sel.Step)
	}
}

func masked(s *router.Selection, id string) bool {
	for _, t := range s.Tools {
		if t.ID == id {
			return t.Masked
		}
	}
	panic(id + " is not among the candidates")
}

// TestCatalogFileWinsAtStart: on start the configured tools are put, so a tool deleted through
// the API but still in the file comes back, and a changed file record updates the stored tool.
func TestCatalogFileWinsAtStart(t *testing.T) {
	tools, _, _ := load(t)
	dir := t.TempDir()
	r := newRouter(t, openBolt(t, dir), nil)
	r.DeleteTool(context.Background(), tools[0].ID)
	r.Close()
	tools[1].Description = "A new description."
	r = newRouter(t, openBolt(t, dir), nil, func(c *router.Config) { c.Tools = tools })
	defer r.Close()
	if _, ok := r.Tool(tools[0].ID); !ok {
		t.Fatal("a tool of the catalog file was not put back")
	}
	if got, _ := r.Tool(tools[1].ID); got.Description != "A new description." {
		t.Fatalf("changed tool: %q", got.Description)
	}
	if len(r.Tools()) != len(tools) {
		t.Fatalf("%d tools, want %d", len(r.Tools()), len(tools))
	}
}

// TestNoMatchKeepsTheClock: a query sharing no term with any tool opens no decision and leaves
// the step clock where it is, and says so (its step was 0 whatever the clock).
func TestNoMatchKeepsTheClock(t *testing.T) {
	_, queries, _ := load(t)
	r := newRouter(t, state.NewMemory(), nil)
	for _, q := range queries[:3] {
		if _, err := r.Select(context.Background(), q, router.SelectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sel, err := r.Select(context.Background(), "zzqx vvwy", router.SelectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sel.DecisionID != "" || len(sel.Tools) != 0 || sel.Step != 3 {
		t.Errorf("no match: decision %q, %d tools, step %d; want none, none, 3", sel.DecisionID, len(sel.Tools), sel.Step)
	}
	if next, _ := r.Select(context.Background(), queries[0], router.SelectOptions{}); next.Step != 4 {
		t.Errorf("the next decision is at step %d, want 4", next.Step)
	}
}

// TestStepUnitIsKeptAcrossRestarts: health masks and half-lives are counted in steps, so a state
// learned with one step unit is refused under another (selection steps at 3,000 read as 27
// wall-clock seconds used to bring back masks that had ended), and accepted under the same one.
func TestStepUnitIsKeptAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	r := newRouter(t, openBolt(t, dir), nil)
	for range 5 {
		if _, err := r.Select(ctx, "get the weather forecast", router.SelectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	start := func(every time.Duration) error { return restartWithStep(t, dir, every, false) }
	err := start(time.Second)
	if err == nil || !strings.Contains(err.Error(), "--step 0 (one step per selection)") || !strings.Contains(err.Error(), "--step 1s") {
		t.Fatalf("selection steps restarted as wall-clock steps: %v", err)
	}
	if err := start(0); err != nil {
		t.Fatalf("same step unit: %v", err)
	}
	wall := t.TempDir()
	r = newRouter(t, openBolt(t, wall), nil, func(c *router.Config) { c.StepEvery = time.Second })
	r.Close()
	dir = wall
	if err := start(time.Minute); err == nil || !strings.Contains(err.Error(), "--step 1s; this start uses --step 1m0s") {
		t.Fatalf("a changed wall-clock unit: %v", err)
	}
	if err := start(time.Second); err != nil {
		t.Fatalf("same wall-clock unit: %v", err)
	}
}

// A state that crashed before its first snapshot holds only boot records: the step unit comes
// from the latest one, and a start with another unit is refused all the same.
func TestStepUnitFromBootRecordsAlone(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	// No snapshot before the crash: the first boot's tool records alone would pass 97.
	r := newRouter(t, openBolt(t, dir), nil, func(c *router.Config) { c.StepEvery, c.SnapshotEvery = time.Second, 1<<30 })
	for range 3 {
		if _, err := r.Select(ctx, "get the weather forecast", router.SelectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r.CrashForTest()
	store := openBolt(t, dir)
	if _, _, ok, err := store.LoadSnapshot(ctx); ok || err != nil {
		t.Fatalf("the crashed state has a snapshot (%v, %v): this test needs boot records alone", ok, err)
	}
	store.Close()
	start := func(every time.Duration) error { return restartWithStep(t, dir, every, true) }
	if err := start(0); err == nil || !strings.Contains(err.Error(), "--step 1s; this start uses --step 0 (one step per selection)") {
		t.Fatalf("wall-clock steps restarted as selection steps from boot records: %v", err)
	}
	if err := start(time.Second); err != nil {
		t.Fatalf("same unit from boot records: %v", err)
	}
}

// restartWithStep starts a router on the state in dir with step unit every and stops it again:
// closed, or crashed (no final snapshot, and none before: SnapshotEvery is out of reach). The
// error is New's.
func restartWithStep(t *testing.T, dir string, every time.Duration, crash bool) error {
	t.Helper()
	tools, _, cal := load(t)
	front, _ := router.NewLexicalFrontend(128)
	store := openBolt(t, dir)
	defer store.Close()
	r, err := router.New(context.Background(), router.Config{Frontend: front, Tools: tools, Calibrator: cal, Store: store, Seed: 5, StepEvery: every, SnapshotEvery: 1 << 30})
	switch {
	case err != nil:
	case crash:
		r.CrashForTest()
	default:
		r.Close()
	}
	return err
}

// TestDecisionTTLIsCheckedOnReport: the janitor drops expired decisions only every few real
// seconds; a report on the router's clock past the TTL is refused at once, fresh or restored.
func TestDecisionTTLIsCheckedOnReport(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	dir := t.TempDir()
	ttl := func(c *router.Config) { c.Clock, c.DecisionTTL = clock, time.Minute }
	r := newRouter(t, openBolt(t, dir), nil, ttl)
	ctx := context.Background()
	q := "post a message to slack"
	fresh, _ := r.Select(ctx, q, router.SelectOptions{})
	advance(59 * time.Second)
	if _, err := r.Report(ctx, fresh.DecisionID, fresh.Tools[0].ID, router.Outcome{Executed: true}, 0); err != nil {
		t.Fatalf("a report within the TTL: %v", err)
	}
	old, _ := r.Select(ctx, q, router.SelectOptions{})
	advance(time.Minute)
	if _, err := r.Report(ctx, old.DecisionID, old.Tools[0].ID, router.Outcome{Executed: true}, 0); !errors.Is(err, router.ErrUnknownDecision) {
		t.Fatalf("a report a TTL after its decision: %v, want ErrUnknownDecision", err)
	}
	// Restored from the snapshot of a graceful stop, then expired while the server was down.
	down, _ := r.Select(ctx, q, router.SelectOptions{})
	r.Close()
	advance(2 * time.Minute)
	r = newRouter(t, openBolt(t, dir), nil, ttl)
	defer r.Close()
	if _, err := r.Report(ctx, down.DecisionID, down.Tools[0].ID, router.Outcome{Executed: true}, 0); !errors.Is(err, router.ErrUnknownDecision) {
		t.Fatalf("a decision that expired while the router was down: %v, want ErrUnknownDecision", err)
	}
}

// TestExcludedToolIsNotReportable: a fallback decision excludes the tool an earlier attempt
// tried; a report of that tool on the fallback decision is refused and leaves the policy as it
// was (it used to be learned, counting the earlier failure twice).
func TestExcludedToolIsNotReportable(t *testing.T) {
	r := newRouter(t, nil, nil)
	defer r.Close()
	ctx := context.Background()
	q := "convert 100 dollars to euros"
	first, _ := r.Select(ctx, q, router.SelectOptions{K: 4})
	tried := first.Tools[0].ID
	if _, err := r.Report(ctx, first.DecisionID, tried, router.Outcome{Executed: false}, 0); err != nil {
		t.Fatal(err)
	}
	fallback, err := r.Select(ctx, q, router.SelectOptions{K: 4, Exclude: []string{tried}})
	if err != nil {
		t.Fatal(err)
	}
	before := r.PolicyStateForTest()
	_, err = r.Report(ctx, fallback.DecisionID, tried, router.Outcome{Executed: false}, 0)
	if !errors.Is(err, router.ErrUnknownTool) || !strings.Contains(err.Error(), "was excluded from decision") {
		t.Fatalf("a report of an excluded tool: %v, want ErrUnknownTool", err)
	}
	if !bytes.Equal(before, r.PolicyStateForTest()) {
		t.Fatal("the refused report changed the policy's state")
	}
}

// TestEmptyListsAreUnchangedAfterARestart: a tool put with empty lists is stored without them
// (omitempty); put again after a restart it is the same tool, not an update.
func TestEmptyListsAreUnchangedAfterARestart(t *testing.T) {
	tools, _, _ := load(t)
	tool := tools[0]
	tool.ID, tool.Tags, tool.RuntimeOnly, tool.Prior = "test/empty-lists", []string{}, []string{}, nil
	dir := t.TempDir()
	ctx := context.Background()
	r := newRouter(t, openBolt(t, dir), nil)
	if added, updated, err := r.PutTools(ctx, []catalog.Tool{tool}); err != nil || added != 1 || updated != 0 {
		t.Fatalf("first put: %d added, %d updated, %v", added, updated, err)
	}
	r.Close()
	r = newRouter(t, openBolt(t, dir), nil)
	defer r.Close()
	if added, updated, err := r.PutTools(ctx, []catalog.Tool{tool}); err != nil || added != 0 || updated != 0 {
		t.Fatalf("the same tool after a restart: %d added, %d updated, %v; want unchanged", added, updated, err)
	}
}
