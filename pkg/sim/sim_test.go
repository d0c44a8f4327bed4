package sim

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/metrics"
)

func TestFrequencyOrderAndPaperSelection(t *testing.T) {
	// 10 tools; stream relevance counts: tool 3 ×4, tool 1 ×3, tool 7 ×2, tool 0 ×1, rest 0.
	relevant := [][]int{{3}, {1, 3}, {7, 0}, {3, 1}, {7}, {1, 3}}
	stream := []int{0, 1, 2, 3, 4, 5}
	freq := StreamFrequency(10, stream, relevant)
	order := freq.Order
	want := []int{3, 1, 7, 0, 2, 4, 5, 6, 8, 9}
	if !reflect.DeepEqual(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	if !reflect.DeepEqual(freq.Count, []int{1, 3, 0, 4, 0, 0, 0, 2, 0, 0}) {
		t.Fatalf("counts %v", freq.Count)
	}
	// Paper: skip the top 10% (1 tool), fail the next ρN = 20% (2 tools).
	got := selectTools(Selector{By: "frequency", SkipTop: 0.1, Fraction: 0.2}, order)
	if !reflect.DeepEqual(got, []int{1, 7}) {
		t.Fatalf("failed set %v, want [1 7]", got)
	}
}

// Among "relevant" takes its shares of the tools the stream needs (4 of the 10 here: 3, 1, 7,
// 0), not of the catalog: skip round(0.25·4) = 1, fail round(0.5·4) = 2, i.e. tools 1 and 7.
// Over the catalog the same shares skip round(2.5) = 3 tools and fail 5 (0, 2, 4, 5, 6), four
// of them tools no query needs. A provider selector refuses it.
func TestSelectionAmongRelevantTools(t *testing.T) {
	relevant := [][]int{{3}, {1, 3}, {7, 0}, {3, 1}, {7}, {1, 3}}
	freq := StreamFrequency(10, []int{0, 1, 2, 3, 4, 5}, relevant)
	if freq.Relevant() != 4 {
		t.Fatalf("relevant tools %d, want 4", freq.Relevant())
	}
	sched := func(among string) []int {
		sc := Scenario{Name: "s", Theta: 1, Events: []Event{{Kind: EventPersistent, Start: 1,
			Select: Selector{By: "frequency", SkipTop: 0.25, Fraction: 0.5, Among: among}}}}
		if err := sc.Validate("scenarios[0]", 10); err != nil {
			t.Fatal(err)
		}
		return NewSchedule(sc, &World{NumTools: 10}, freq, 1).Affected[0]
	}
	if got := sched(AmongRelevant); !reflect.DeepEqual(got, []int{1, 7}) {
		t.Errorf("among relevant: failed %v, want [1 7]", got)
	}
	if got := sched(""); !reflect.DeepEqual(got, []int{0, 2, 4, 5, 6}) {
		t.Errorf("among the catalog: failed %v, want [0 2 4 5 6]", got)
	}
	// Random among the relevant tools: two of {3, 1, 7, 0}, never a tool no query needs.
	sc := Scenario{Name: "s", Theta: 1, Events: []Event{{Kind: EventPersistent, Start: 1,
		Select: Selector{By: "random", Fraction: 0.5, Among: AmongRelevant}}}}
	for seed := uint64(1); seed <= 20; seed++ {
		for _, tool := range NewSchedule(sc, &World{NumTools: 10}, freq, seed).Affected[0] {
			if freq.Count[tool] == 0 {
				t.Fatalf("seed %d: random among relevant failed tool %d, which no query needs", seed, tool)
			}
		}
	}
	bad := Scenario{Name: "s", Theta: 1, Events: []Event{{Kind: EventPersistent, Start: 1,
		Select: Selector{By: "frequency", Fraction: 0.2, Unit: UnitProvider, Among: AmongRelevant}}}}
	if err := bad.Validate("scenarios[0]", 10); err == nil || !strings.Contains(err.Error(), "scenarios[0].events[0].select.among") {
		t.Errorf("provider unit with among relevant: %v", err)
	}
	typo := Scenario{Name: "s", Theta: 1, Events: []Event{{Kind: EventPersistent, Start: 1,
		Select: Selector{By: "frequency", Fraction: 0.2, Among: "relevent"}}}}
	if err := typo.Validate("scenarios[0]", 10); err == nil || !strings.Contains(err.Error(), `"relevent"`) {
		t.Errorf("misspelt among: %v", err)
	}
}

// inOrder is the frequency of a stream in which tool i is relevant n−i times: the order 0…n−1.
func inOrder(n int) Frequency {
	f := Frequency{Order: make([]int, n), Count: make([]int, n)}
	for i := range f.Order {
		f.Order[i], f.Count[i] = i, n-i
	}
	return f
}

func TestScheduleKinds(t *testing.T) {
	w := &World{NumTools: 10}
	one := func(kind string, e Event) *Schedule {
		e.Kind = kind
		e.Select = Selector{By: "frequency", Fraction: 0.1} // tool 0 only
		return NewSchedule(Scenario{Name: "s", Theta: 1, Events: []Event{e}}, w, inOrder(10), 1)
	}
	p := one(EventPersistent, Event{Start: 5})
	if !p.Executes(0, 4) || p.Executes(0, 5) || p.Executes(0, 999) || !p.Executes(1, 999) {
		t.Error("persistent failure wrong")
	}
	tr := one(EventTransient, Event{Start: 5, End: 8})
	if !tr.Executes(0, 4) || tr.Executes(0, 7) || !tr.Executes(0, 8) {
		t.Error("transient outage wrong")
	}
	fl := one(EventFlapping, Event{Start: 10, Period: 3})
	wantUp := map[int]bool{9: true, 10: false, 12: false, 13: true, 15: true, 16: false}
	for step, up := range wantUp {
		if fl.Executes(0, step) != up {
			t.Errorf("flapping at %d: got %v want %v", step, !up, up)
		}
	}
	// Flapping that ends: down 10–12, up 13–15, down 16–18, up 19–21, and up from 22 on for good
	// (22 would begin a down-phase, so an end taken as exclusive shows), with Chance agreeing.
	fe := one(EventFlapping, Event{Start: 10, Period: 3, End: 22})
	for step, up := range map[int]bool{9: true, 10: false, 13: true, 16: false, 18: false, 19: true, 21: true, 22: true, 23: true, 25: true, 1000: true} {
		if fe.Executes(0, step) != up {
			t.Errorf("flapping that ends at 22, step %d: got %v want %v", step, !up, up)
		}
		if p, _ := fe.Chance(0, step); (p == 1) != up {
			t.Errorf("flapping that ends at 22, step %d: Chance %v", step, p)
		}
	}
	fk := one(EventFlaky, Event{Start: 0, SuccessProb: 0.3})
	ok := 0
	for step := 0; step < 20000; step++ {
		first := fk.Executes(0, step)
		if first {
			ok++
		}
		if again := fk.Executes(0, step); again != first {
			t.Fatal("flaky outcome must be a pure function of (seed, tool, step)")
		}
	}
	if r := float64(ok) / 20000; r < 0.28 || r > 0.32 {
		t.Errorf("flaky success rate %v, want ≈ 0.3", r)
	}
	// Two flaky events on one tool compare the same coin with each rate, so the call succeeds
	// with the smaller one: Chance must say min(0.5, 0.3) = 0.3, as the calls do.
	sel := Selector{By: "frequency", Fraction: 0.1}
	two := NewSchedule(Scenario{Name: "s", Theta: 1, Events: []Event{
		{Kind: EventFlaky, Start: 0, SuccessProb: 0.5, Select: sel},
		{Kind: EventFlaky, Start: 0, SuccessProb: 0.3, Select: sel}}}, w, inOrder(10), 1)
	if p, _ := two.Chance(0, 5); math.Abs(p-0.3) > 1e-12 {
		t.Errorf("two flaky events: Chance %v, want 0.3", p)
	}
	ok = 0
	for step := 0; step < 20000; step++ {
		if two.Executes(0, step) {
			ok++
		}
	}
	if r := float64(ok) / 20000; r < 0.28 || r > 0.32 {
		t.Errorf("two flaky events: success rate %v, want ≈ 0.3", r)
	}
	nt := one(EventNewTools, Event{Start: 50})
	if nt.Exists(0, 49) || !nt.Exists(0, 50) || !nt.Exists(1, 0) {
		t.Error("new tools must appear at their start")
	}
}

func TestScenarioValidation(t *testing.T) {
	base := func() Scenario {
		return Scenario{Name: "s", Theta: 0.9, Events: []Event{{Kind: EventPersistent, Start: 10, Select: Selector{By: "frequency", SkipTop: 0.1, Fraction: 0.2}}}}
	}
	cases := []struct {
		mutate func(*Scenario)
		want   string
	}{
		{func(s *Scenario) { s.Events[0].Select.Fraction = 1 }, "scenarios[0].events[0].select.fraction = 1: ρ must be in [0, 1)"},
		{func(s *Scenario) { s.Events[0].Select.Fraction = -0.1 }, "select.fraction"},
		{func(s *Scenario) { s.Events[0].Kind = "meteor" }, `unknown event "meteor"`},
		{func(s *Scenario) { s.Theta = 0 }, "scenarios[0].theta"},
		{func(s *Scenario) { s.Events[0].Start = 100 }, "start = 100"},
		{func(s *Scenario) { s.Events[0].Kind = EventTransient; s.Events[0].End = 5 }, "must end after"},
		{func(s *Scenario) { s.Events[0].Kind, s.Events[0].Period, s.Events[0].End = EventFlapping, 3, 10 }, "flapping must end after its start 10"},
	}
	for _, c := range cases {
		s := base()
		c.mutate(&s)
		if err := s.Validate("scenarios[0]", 100); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	if err := base().Validate("scenarios[0]", 100); err != nil {
		t.Fatal(err)
	}
}

var execution = Protocol{Name: "execution", Kind: ProtocolExecution}

// tinyWorld: 4 tools; query 0 wants tool 0 or 1 (ranked 0,1,2), query 1 wants tool 2 (ranked 2,3).
func tinyWorld() *World {
	return &World{NumTools: 4, Dim: 2, Queries: []Query{
		{ID: "a", Relevant: []int{0, 1}, Context: []float64{1, 0}, Ranked: []bandit.Candidate{{Tool: 0, Sem: 1, Prior: 0.7}, {Tool: 1, Sem: 0.9, Prior: 0.7}, {Tool: 2, Sem: 0.1, Prior: 0.7}}},
		{ID: "b", Relevant: []int{2}, Context: []float64{0, 1}, Ranked: []bandit.Candidate{{Tool: 2, Sem: 1, Prior: 0.7}, {Tool: 3, Sem: 0.5, Prior: 0.7}}},
	}}
}

func TestRunTracesByHand(t *testing.T) {
	w := tinyWorld()
	stream := []int{0, 1, 0, 0}
	// Tool 0 fails from step 2.
	sched := NewSchedule(Scenario{Name: "s", Theta: 1, Events: []Event{{Kind: EventPersistent, Start: 2, Select: Selector{By: "frequency", Fraction: 0.25}}}}, w, inOrder(4), 1)
	static := Run(w, stream, sched, bandit.NewStatic("s"), 2, 1, execution, 1)
	want := []metrics.StepOutcome{{Success: true, Attempts: 1}, {Success: true, Attempts: 1}, {Attempts: 1, FailedAttempts: 1}, {Attempts: 1, FailedAttempts: 1}}
	if !reflect.DeepEqual(static, want) {
		t.Fatalf("static trace %+v", static)
	}
	retry := Run(w, stream, sched, bandit.NewStatic("r"), 2, 3, execution, 1)
	want[2], want[3] = metrics.StepOutcome{Success: true, Attempts: 2, FailedAttempts: 1}, metrics.StepOutcome{Success: true, Attempts: 2, FailedAttempts: 1}
	if !reflect.DeepEqual(retry, want) {
		t.Fatalf("retry trace %+v", retry)
	}
	bl := Run(w, stream, sched, bandit.NewBlacklist("b"), 2, 1, execution, 1)
	want[2], want[3] = metrics.StepOutcome{Attempts: 1, FailedAttempts: 1}, metrics.StepOutcome{Success: true, Attempts: 1}
	if !reflect.DeepEqual(bl, want) {
		t.Fatalf("blacklist trace %+v", bl)
	}
}

func TestNewToolsAreNotCandidatesBeforeTheyExist(t *testing.T) {
	w := tinyWorld()
	w.Queries[0].Relevant = []int{1} // only the second candidate serves: a chosen tool 0 shows
	sched := NewSchedule(Scenario{Name: "s", Theta: 1, Events: []Event{{Kind: EventNewTools, Start: 1, Select: Selector{By: "frequency", Fraction: 0.25}}}}, w, inOrder(4), 1)
	tr := Run(w, []int{0, 0}, sched, bandit.NewStatic("s"), 2, 1, execution, 1)
	// Step 0: tool 0 does not exist; static picks tool 1 (relevant). Step 1: tool 0 exists and
	// is static's choice (it runs, but does not serve).
	if !tr[0].Success || tr[1].Success || tr[1].FailedAttempts != 0 {
		t.Fatalf("trace %+v", tr)
	}
}

// TestSecondFailedAttemptIsCounted: with tools 0 and 1 down, Retry (k=3) fails twice and runs
// tool 2 (not relevant) on its third attempt.
func TestSecondFailedAttemptIsCounted(t *testing.T) {
	w := tinyWorld()
	sched := NewSchedule(Scenario{Name: "s", Theta: 1, Events: []Event{{Kind: EventPersistent, Start: 0, Select: Selector{By: "frequency", Fraction: 0.5}}}}, w, inOrder(4), 1)
	tr := Run(w, []int{0}, sched, bandit.NewStatic("r"), 3, 3, execution, 1)
	if want := (metrics.StepOutcome{Attempts: 3, FailedAttempts: 2}); tr[0] != want {
		t.Fatalf("trace %+v, want %+v", tr[0], want)
	}
}

// TestSeedsChangeTheStreamAndTheRandomSelection: each seed is another world (the paired design
// holds within a seed, not across them): the stream and a random selection differ between seeds,
// and a random selection among the relevant tools is a shuffle of them, not their order.
func TestSeedsChangeTheStreamAndTheRandomSelection(t *testing.T) {
	if slices.Equal(Stream(50, 200, 1), Stream(50, 200, 2)) {
		t.Error("seeds 1 and 2 give the same stream")
	}
	w := &World{NumTools: 40}
	freq := inOrder(40)
	pick := func(among string, seed uint64) []int {
		sc := Scenario{Name: "r", Theta: 1, Events: []Event{{Kind: EventPersistent, Start: 0, Select: Selector{By: "random", Fraction: 0.25, Among: among}}}}
		return NewSchedule(sc, w, freq, seed).Affected[0]
	}
	if slices.Equal(pick("", 1), pick("", 2)) {
		t.Error("seeds 1 and 2 select the same random tools")
	}
	// All 40 tools are relevant in inOrder's counts; the frequency order's first 10 are 0..9.
	differ := false
	for seed := uint64(1); seed <= 5; seed++ {
		differ = differ || !slices.Equal(pick(AmongRelevant, seed), []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	}
	if !differ {
		t.Error("a random selection among the relevant tools took them in frequency order for every seed")
	}
}

func TestRunGridIsReproducible(t *testing.T) {
	w := tinyWorld()
	// A second query for tools 0/1 makes tool 0 the most frequent tool: the one that fails.
	w.Queries = append(w.Queries, w.Queries[0])
	w.Queries[2].ID = "c"
	g := GridSpec{
		Scenarios: []Scenario{{Name: "p", Theta: 0.9, Events: []Event{{Kind: EventPersistent, Start: 300, Select: Selector{By: "frequency", Fraction: 0.25}}}}},
		Policies: []bandit.Spec{{Name: "RATED", Kind: "rated", Gamma: 0.95}, {Name: "GRPO", Kind: "batch_grpo", Batch: 20},
			{Name: "static", Kind: "static"}},
		Seeds: []uint64{1, 2}, Steps: 1000, K: 3, Weights: bandit.FusionWeights{Semantic: 0.75, Bandit: 0.15, Prior: 0.1},
		Summary: metrics.Window{From: 300, To: 600}, ASWindow: 50, CurveStride: 10,
	}
	a, err := RunGrid(context.Background(), w, g, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RunGrid(context.Background(), w, g, 1, nil)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seeds must give the same results, whatever the number of workers")
	}
	rows := Summarize(g, a)
	if len(rows) != 3 || rows[0].Method != "RATED" || rows[0].Seeds != 2 {
		t.Fatalf("rows %+v", rows)
	}
	// The static policy keeps choosing the failed tool 0 for query a: its FSR must be high, and
	// RATED, which sees the failures, must have a lower FSR.
	if !(rows[0].FSR.Mean < rows[2].FSR.Mean) {
		t.Fatalf("RATED FSR %v should be below static %v", rows[0].FSR.Mean, rows[2].FSR.Mean)
	}
}

func TestOraclesByHand(t *testing.T) {
	// Query c ranks tool 3 (irrelevant) above tool 2 (relevant); tool 0 fails from step 0.
	w := tinyWorld()
	w.Queries = append(w.Queries, Query{ID: "c", Relevant: []int{2}, Context: []float64{0, 1},
		Ranked: []bandit.Candidate{{Tool: 3, Sem: 1}, {Tool: 2, Sem: 0.9}}})
	sched := NewSchedule(Scenario{Name: "s", Theta: 1, Events: []Event{{Kind: EventPersistent, Start: 0, Select: Selector{By: "frequency", Fraction: 0.25}}}}, w, inOrder(4), 1)
	avail, err := NewPolicy(bandit.Spec{Name: "a", Kind: "oracle_availability"}, bandit.Env{})
	if err != nil {
		t.Fatal(err)
	}
	task, _ := NewPolicy(bandit.Spec{Name: "t", Kind: "oracle_task"}, bandit.Env{})
	stream := []int{0, 2}
	// Step 0 (query a): tool 0 is down, both oracles run tool 1 (relevant). Step 1 (query c):
	// the availability oracle runs the best-ranked executing tool, 3 (irrelevant); the task
	// oracle runs tool 2.
	a := Run(w, stream, sched, avail, 2, 1, execution, 1)
	if !a[0].Success || a[0].FailedAttempts != 0 || a[1].Success {
		t.Fatalf("availability oracle trace %+v", a)
	}
	o := Run(w, stream, sched, task, 2, 1, execution, 1)
	if !o[0].Success || !o[1].Success {
		t.Fatalf("task oracle trace %+v", o)
	}
	if _, err := bandit.New(bandit.Spec{Name: "a", Kind: "oracle_availability"}, bandit.Env{}); err == nil {
		t.Fatal("bandit.New must refuse an oracle: only the simulator sees the schedule")
	}
}

// recorder chooses the top candidate and keeps every feedback it is given.
type recorder struct{ seen []bandit.Feedback }

func (r *recorder) Name() string                                      { return "recorder" }
func (r *recorder) Choose(s *bandit.Step) int                         { return 0 }
func (r *recorder) Observe(_ *bandit.Step, _ int, fb bandit.Feedback) { r.seen = append(r.seen, fb) }

func TestProtocolsFeedback(t *testing.T) {
	w := tinyWorld()
	// Query a's top tool 0 is relevant; query b's top tool 2 is relevant; tool 2 fails from step 0.
	sched := NewSchedule(Scenario{Name: "s", Theta: 1, Events: []Event{{Kind: EventPersistent, Start: 0,
		Select: Selector{By: "frequency", SkipTop: 0.5, Fraction: 0.25}}}}, w, inOrder(4), 1)
	stream := []int{0, 1}
	r := &recorder{}
	Run(w, stream, sched, r, 2, 1, execution, 1)
	if r.seen[0] != (bandit.Feedback{Executed: true}) || r.seen[1] != (bandit.Feedback{}) {
		t.Fatalf("execution protocol: %+v", r.seen)
	}
	r = &recorder{}
	Run(w, stream, sched, r, 2, 1, Protocol{Name: "t", Kind: ProtocolTask}, 1)
	if r.seen[0] != (bandit.Feedback{Executed: true, TaskKnown: true, Task: true}) || r.seen[1] != (bandit.Feedback{TaskKnown: true}) {
		t.Fatalf("task protocol: %+v", r.seen)
	}
	// Judged: over many executed calls of a relevant tool the judge says "failure" at the
	// false-negative rate; over an irrelevant one, "success" at the false-positive rate.
	judge := Protocol{Name: "j", Kind: ProtocolJudged, FalsePositive: 0.1, FalseNegative: 0.3}
	fn, fp, n := 0, 0, 20000
	for i := 0; i < n; i++ {
		if !judge.feedback(true, true, 7, i, 0).Task {
			fn++
		}
		if judge.feedback(true, false, 7, i, 0).Task {
			fp++
		}
		if judge.feedback(false, true, 7, i, 0).Task {
			t.Fatal("a failed call is never judged a success")
		}
	}
	if r := float64(fn) / float64(n); r < 0.28 || r > 0.32 {
		t.Errorf("false-negative rate %v, want ≈ 0.3", r)
	}
	if r := float64(fp) / float64(n); r < 0.09 || r > 0.11 {
		t.Errorf("false-positive rate %v, want ≈ 0.1", r)
	}
}

func TestProviderOutageSelectsWholeProviders(t *testing.T) {
	// Tools 0,1,2 share provider 0; tool 3 is provider 1, tool 4 provider 2. Frequency order 0…4.
	w := &World{NumTools: 5, Providers: []int{0, 0, 0, 1, 2}}
	freq := inOrder(5)
	got := selectProviders(Selector{By: "frequency", Fraction: 0.4, Unit: UnitProvider}, w, freq, nil)
	if !reflect.DeepEqual(got, []int{0, 1, 2}) {
		t.Fatalf("provider outage took %v, want the whole of provider 0", got)
	}
	// Skipping 20% (one tool) skips provider 0 entirely (the first provider passed), then ρ = 20%
	// takes provider 1.
	got = selectProviders(Selector{By: "frequency", SkipTop: 0.2, Fraction: 0.2, Unit: UnitProvider}, w, freq, nil)
	if !reflect.DeepEqual(got, []int{3}) {
		t.Fatalf("with skip: %v, want [3]", got)
	}
	sched := NewSchedule(Scenario{Name: "p", Theta: 1, Events: []Event{{Kind: EventPersistent, Start: 0,
		Select: Selector{By: "frequency", Fraction: 0.4, Unit: UnitProvider}}}}, w, freq, 1)
	for tool, down := range []bool{true, true, true, false, false} {
		if sched.Executes(tool, 5) == down {
			t.Errorf("tool %d: executes = %v", tool, !down)
		}
	}
}

func TestDetectAndExpectedOraclesByHand(t *testing.T) {
	w := tinyWorld()
	// Tool 0 flaps with period 2 from step 0: down [0,2), up [2,4), down [4,6).
	sched := NewSchedule(Scenario{Name: "s", Theta: 1, Events: []Event{{Kind: EventFlapping, Start: 0, Period: 2,
		Select: Selector{By: "frequency", Fraction: 0.25}}}}, w, inOrder(4), 1)
	detect, _ := NewPolicy(bandit.Spec{Name: "d", Kind: "oracle_detect"}, bandit.Env{})
	tr := Run(w, []int{0, 0, 0, 0, 0, 0}, sched, detect, 2, 1, execution, 1)
	// Pays at 0 (fails), avoids tool 0 at 1, runs it at 2 and 3 (up), pays again at 4, avoids at 5.
	wantFailed := []int{1, 0, 0, 0, 1, 0}
	for i, s := range tr {
		if s.FailedAttempts != wantFailed[i] {
			t.Fatalf("step %d: %+v, want %d failed attempts", i, s, wantFailed[i])
		}
	}
	// The detect-once oracle pays only the first outage: it fails at 0, then knows tool 0's
	// outages, its second one (from step 4) included.
	once, _ := NewPolicy(bandit.Spec{Name: "o", Kind: "oracle_detect_once"}, bandit.Env{})
	wantFailed = []int{1, 0, 0, 0, 0, 0}
	for i, s := range Run(w, []int{0, 0, 0, 0, 0, 0}, sched, once, 2, 1, execution, 1) {
		if s.FailedAttempts != wantFailed[i] {
			t.Fatalf("detect-once, step %d: %+v, want %d failed attempts", i, s, wantFailed[i])
		}
	}
	// Expected oracle: tool 0 is flaky (p = 0.3) and slightly more relevant than tool 1; it runs
	// tool 1 (0.5·1 > 0.6·0.3) whatever the coin says.
	sched = NewSchedule(Scenario{Name: "s", Theta: 1, Events: []Event{{Kind: EventFlaky, Start: 0, SuccessProb: 0.3,
		Select: Selector{By: "frequency", Fraction: 0.25}}}}, w, inOrder(4), 1)
	w.Queries[0].Ranked[0].Relevance, w.Queries[0].Ranked[1].Relevance = 0.6, 0.5
	exp, _ := NewPolicy(bandit.Spec{Name: "e", Kind: "oracle_expected"}, bandit.Env{})
	for i, s := range Run(w, []int{0, 0, 0, 0}, sched, exp, 2, 1, execution, 1) {
		if !s.Success || s.FailedAttempts != 0 {
			t.Fatalf("step %d: %+v: the expected oracle must run tool 1", i, s)
		}
	}
	if p, since := sched.Chance(0, 3); p != 0.3 || since != -1 {
		t.Fatalf("flaky chance %v since %v", p, since)
	}
}

// TestFallbackOracleByHand: tool 0 is flaky (p = 0.3) with calibrated relevance 0.6, tool 1
// works (p = 1) with 0.5, tool 2 works with 0.1; budget 3.
//   - λ = 0: {0, 1} in the order of r (0.6 > 0.5) is worth 0.18 + 0.7·0.5 = 0.53, more than {1}
//     (0.5) and than adding tool 2 (never reached): try tool 0, then tool 1 when it fails.
//   - λ = 0.1: by r − λ/p tool 1 (0.4) goes before tool 0 (0.267), and then tool 0 is never
//     reached; {1} alone is worth 0.4, more than {0} (0.08): one attempt, tool 1.
//   - λ = 0.02: {0, 1} in the order 0 (0.533), 1 (0.48) is worth 0.16 + 0.7·0.48 = 0.496 > {1}'s
//     0.48: two attempts when tool 0's coin fails, and the plan never spends the third.
func TestFallbackOracleByHand(t *testing.T) {
	w := tinyWorld()
	sched := NewSchedule(Scenario{Name: "s", Theta: 1, Events: []Event{{Kind: EventFlaky, Start: 0, SuccessProb: 0.3,
		Select: Selector{By: "frequency", Fraction: 0.25}}}}, w, inOrder(4), 1)
	w.Queries[0].Ranked[0].Relevance, w.Queries[0].Ranked[1].Relevance, w.Queries[0].Ranked[2].Relevance = 0.6, 0.5, 0.1
	stream := make([]int, 200)
	for _, c := range []struct {
		price      float64
		firstTool0 bool
	}{{0, true}, {0.1, false}, {0.02, true}} {
		o, err := NewPolicy(bandit.Spec{Name: "f", Kind: "oracle_fallback", Attempts: 3, AttemptPrice: c.price}, bandit.Env{})
		if err != nil {
			t.Fatal(err)
		}
		failedSteps := 0
		for i, s := range Run(w, stream, sched, o, 3, 3, execution, 1) {
			// Both tools are relevant, so every step succeeds within its plan.
			if !s.Success {
				t.Fatalf("λ %v, step %d: %+v", c.price, i, s)
			}
			switch {
			case !c.firstTool0 && (s.Attempts != 1 || s.FailedAttempts != 0):
				t.Fatalf("λ %v, step %d: %+v, want tool 1 alone", c.price, i, s)
			case c.firstTool0 && s.Attempts != 1+s.FailedAttempts || s.Attempts > 2:
				t.Fatalf("λ %v, step %d: %+v, want tool 0 then tool 1", c.price, i, s)
			}
			failedSteps += s.FailedAttempts
		}
		// Tool 0's coin fails 70% of the time: 140 of 200 expected, binomial sd 6.5.
		if c.firstTool0 && (failedSteps < 110 || failedSteps > 170) {
			t.Fatalf("λ %v: tool 0 failed in %d of 200 steps, want about 140", c.price, failedSteps)
		}
	}
	// Order-keeping (Retry that knows p): the ranking 0, 1, 2 stopped at the best point. λ = 0:
	// {0} 0.18, {0, 1} 0.53, {0, 1, 2} 0.53 (tool 2 never reached): tool 0 then tool 1, as
	// Retry. λ = 0.3: {0} −0.12, {0, 1} −0.12 + 0.7·0.2 = 0.02: still two. λ = 0.5: {0} −0.32,
	// {0, 1} −0.32 + 0.7·0 = −0.32, not better: tool 0 alone, one attempt, failing 70% of steps.
	for _, c := range []struct {
		price   float64
		maxTry  int
		success bool
	}{{0, 2, true}, {0.3, 2, true}, {0.5, 1, false}} {
		o, _ := NewPolicy(bandit.Spec{Name: "k", Kind: "oracle_fallback", Attempts: 3, AttemptPrice: c.price, KeepOrder: true}, bandit.Env{})
		fails := 0
		for i, s := range Run(w, stream, sched, o, 3, 3, execution, 1) {
			if s.Attempts > c.maxTry || s.Attempts != 1+s.FailedAttempts && s.Success || (c.success && !s.Success) {
				t.Fatalf("keep order, λ %v, step %d: %+v", c.price, i, s)
			}
			fails += s.FailedAttempts
		}
		if fails < 110 || fails > 170 {
			t.Fatalf("keep order, λ %v: tool 0 failed in %d of 200 steps, want about 140", c.price, fails)
		}
	}
	if err := (bandit.Spec{Name: "x", Kind: "static", AttemptPrice: 0.1}).Validate("p"); err == nil {
		t.Fatal("attempt_price on a policy other than oracle_fallback must be refused")
	}
	if err := (bandit.Spec{Name: "x", Kind: "retry", KnowsRelevance: true}).Validate("p"); err == nil {
		t.Fatal("knows_relevance on a policy other than oracle_fallback must be refused")
	}
}

// TestFallbackOracleKnowingRelevanceByHand: the calibrated estimate undervalues tool 1 (0.1;
// the qrels say tools 0 and 1 are relevant, tool 2 not), tool 0 is flaky (p = 0.3, estimate
// 0.6), λ = 0.2, budget 3.
//   - Calibrated, either class: {0} is worth 0.3·0.6 − 0.2 = −0.02, {0, 1} −0.02 + 0.7·(0.1 −
//     0.2) = −0.09, {1} −0.1: tool 0 alone, succeeding only on its coin (about 60 of 200).
//   - Knowing relevance (r = 1, 1, 0), expected-worth: by r − λ/p tool 1 (0.8) goes first and
//     is worth 0.8 alone: one attempt, always a success.
//   - Knowing relevance, order-keeping: {0} 0.3 − 0.2 = 0.1, {0, 1} 0.1 + 0.7·0.8 = 0.66,
//     {0, 1, 2} no more (tool 2 is never reached): tool 0, then tool 1 when its coin fails,
//     always a success.
func TestFallbackOracleKnowingRelevanceByHand(t *testing.T) {
	w := tinyWorld()
	sched := NewSchedule(Scenario{Name: "s", Theta: 1, Events: []Event{{Kind: EventFlaky, Start: 0, SuccessProb: 0.3,
		Select: Selector{By: "frequency", Fraction: 0.25}}}}, w, inOrder(4), 1)
	w.Queries[0].Ranked[0].Relevance, w.Queries[0].Ranked[1].Relevance, w.Queries[0].Ranked[2].Relevance = 0.6, 0.1, 0.1
	stream := make([]int, 200)
	for _, c := range []struct {
		keep, truth  bool
		wantAlways   bool // every step succeeds
		maxAttempts  int
		wantFailures bool // tool 0 is tried first, so its coin fails about 140 times
	}{
		{false, false, false, 1, true},
		{true, false, false, 1, true},
		{false, true, true, 1, false},
		{true, true, true, 2, true},
	} {
		o, err := NewPolicy(bandit.Spec{Name: "f", Kind: "oracle_fallback", Attempts: 3, AttemptPrice: 0.2,
			KeepOrder: c.keep, KnowsRelevance: c.truth}, bandit.Env{})
		if err != nil {
			t.Fatal(err)
		}
		successes, failures := 0, 0
		for i, s := range Run(w, stream, sched, o, 3, 3, execution, 1) {
			if s.Attempts > c.maxAttempts || (c.wantAlways && !s.Success) {
				t.Fatalf("keep %v, truth %v, step %d: %+v", c.keep, c.truth, i, s)
			}
			if s.Success {
				successes++
			}
			failures += s.FailedAttempts
		}
		switch {
		case !c.wantAlways && (successes < 30 || successes > 90): // 60 expected, sd 6.5
			t.Fatalf("keep %v, truth %v: %d successes, want about 60", c.keep, c.truth, successes)
		case c.wantFailures && (failures < 110 || failures > 170):
			t.Fatalf("keep %v, truth %v: %d failed attempts, want about 140", c.keep, c.truth, failures)
		case !c.wantFailures && failures != 0:
			t.Fatalf("keep %v, truth %v: %d failed attempts, want none", c.keep, c.truth, failures)
		}
	}
}

// TestCalibratedOrderOraclesByHand: query c ranks tool 3 above tool 2, but the calibration puts
// tool 2 first (0.8 against 0.3); both execute. The availability oracle in the retriever's order
// runs tool 3 (irrelevant), in the calibrated order tool 2 (relevant). With tool 2 down for good
// from step 0, the calibrated detect-once oracle pays one failed call on tool 2 and then runs
// tool 3.
func TestCalibratedOrderOraclesByHand(t *testing.T) {
	w := tinyWorld()
	w.Queries = append(w.Queries, Query{ID: "c", Relevant: []int{2}, Context: []float64{0, 1},
		Ranked: []bandit.Candidate{{Tool: 3, Sem: 1, Relevance: 0.3}, {Tool: 2, Sem: 0.9, Relevance: 0.8}}})
	qc := len(w.Queries) - 1
	none := NewSchedule(Scenario{Name: "s", Theta: 1}, w, inOrder(4), 1)
	plain, _ := NewPolicy(bandit.Spec{Name: "a", Kind: "oracle_availability"}, bandit.Env{})
	cal, _ := NewPolicy(bandit.Spec{Name: "a", Kind: "oracle_availability", Order: bandit.OrderCalibrated}, bandit.Env{})
	if tr := Run(w, []int{qc}, none, plain, 2, 1, execution, 1); tr[0].Success {
		t.Fatalf("retriever order: %+v, want tool 3 (irrelevant)", tr)
	}
	if tr := Run(w, []int{qc}, none, cal, 2, 1, execution, 1); !tr[0].Success {
		t.Fatalf("calibrated order: %+v, want tool 2 (relevant)", tr)
	}
	// Tool 2 is third in inOrder(4)'s frequency order; skip_top 0.5 passes tools 0 and 1.
	down := NewSchedule(Scenario{Name: "s", Theta: 1, Events: []Event{{Kind: EventPersistent, Start: 0,
		Select: Selector{By: "frequency", SkipTop: 0.5, Fraction: 0.25}}}}, w, inOrder(4), 1)
	if down.Executes(2, 0) || !down.Executes(3, 0) {
		t.Fatal("the schedule should take tool 2 down and leave tool 3 up")
	}
	once, _ := NewPolicy(bandit.Spec{Name: "o", Kind: "oracle_detect_once", Order: bandit.OrderCalibrated}, bandit.Env{})
	tr := Run(w, []int{qc, qc}, down, once, 2, 1, execution, 1)
	if tr[0].FailedAttempts != 1 || tr[0].Attempts != 1 || tr[1].FailedAttempts != 0 || tr[1].Success {
		t.Fatalf("calibrated detect-once: %+v, want one failed call on tool 2, then tool 3", tr)
	}
}

// TestCalibratedOrderAllocatesNothing: the calibrated oracles order every step's candidates;
// the ordering reuses the oracle's buffer and allocates nothing, and it is CalibratedBefore's
// (relevance descending, ties by position).
func TestCalibratedOrderAllocatesNothing(t *testing.T) {
	rel := []float64{0.2, 0.9, 0.5, 0.9, 0.1, 0.7, 0.5, 0.3, 0.8, 0.6}
	s := &bandit.Step{}
	for i, r := range rel {
		s.Candidates = append(s.Candidates, bandit.Candidate{Tool: i, Relevance: r})
	}
	o := &oracle{byRelevance: true}
	if got, want := o.positions(s), []int{1, 3, 8, 5, 9, 2, 6, 7, 0, 4}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { o.positions(s) }); n != 0 {
		t.Fatalf("%v allocations per ordering, want 0", n)
	}
}

// TestOnsetIsTheFirstFailure: tools appearing (new_tools) are no failure onset; a scenario with
// only new tools takes their start.
func TestOnsetIsTheFirstFailure(t *testing.T) {
	for _, c := range []struct {
		events []Event
		want   int
	}{
		{[]Event{{Kind: EventNewTools, Start: 1000}, {Kind: EventPersistent, Start: 3000}}, 3000},
		{[]Event{{Kind: EventFlaky, Start: 2500}, {Kind: EventNewTools, Start: 100}, {Kind: EventTransient, Start: 2000}}, 2000},
		{[]Event{{Kind: EventNewTools, Start: 700}}, 700},
	} {
		if got := (Scenario{Events: c.events}).Onset(); got != c.want {
			t.Errorf("%+v: onset %d, want %d", c.events, got, c.want)
		}
	}
}
