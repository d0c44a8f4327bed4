package bandit

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rated-dev/rated/internal/binenc"
)

// stateSpecs covers every policy kind New builds and every relevance model, with a provider
// pooling reliability layer where one applies.
func stateSpecs() []Spec {
	rec, err := RecommendedSpec()
	if err != nil {
		panic(err)
	}
	layer := &HealthConfig{HalfLife: 50, PriorStrength: 1, PoolRate: 0.05, PoolInit: 1, PoolEvidence: 1,
		ResetOnFailure: true, MaskBase: 5, MaskMax: 40, ProviderStrength: 1, ProviderMaskAfter: 2, RecoveryPrior: 30, Probe: true, SiblingStrength: 1,
		CohortWindow: 20, IncidentProbe: 8, IncidentEarlyProbe: true, RelapseAfterOne: true, ProviderSuccessUnmasks: true,
		IncidentGateErrors: 0.25, IncidentEvidenceWindow: true, IncidentPrior: 1, IncidentHalfProbe: true, IncidentPhase: 30}
	fac := func(name, model string, fusion FusionConfig) Spec {
		return Spec{Name: name, Kind: "factored", Relevance: &RelevanceSpec{Model: model, Alpha: 0.1},
			Reliability: layer, Fusion: &fusion}
	}
	lin := FusionConfig{Kind: FusionLinear, Semantic: 0.5, Relevance: 0.2, Reliability: 0.2, Prior: 0.1}
	exp := FusionConfig{Kind: FusionExpected}
	noLayer := fac("frozen-nolayer", "calibrated", exp)
	noLayer.Reliability = nil
	lookAhead := fac("look-ahead", "kernel", FusionConfig{Kind: FusionExpected, AttemptCost: 0.2})
	lookAhead.Attempts = 2
	sketched := fac("kernel-sketch", "kernel", exp)
	sketched.Relevance.Sketch, sketched.Relevance.Merge = KernelSketchSign, 0.9
	sketched.Relevance.Bandwidths = []float64{0.05, 0.1, 0.3}
	epsRec := rec
	epsRec.Name, epsRec.Explore = "rec-epsilon", &ExploreConfig{Kind: ExploreEpsilonGreedy, Epsilon: 0.2}
	return []Spec{
		epsRec,
		{Name: "soft-rated", Kind: "rated", Alpha: 0.1, Gamma: 0.95, Explore: &ExploreConfig{Kind: ExploreSoftmax, Temperature: 0.05}},
		{Name: "eps-breaker", Kind: "circuit_breaker", ConsecutiveFailures: 2, CoolDown: 7, Explore: &ExploreConfig{Kind: ExploreEpsilonGreedy, Epsilon: 0.5}},
		rec,
		{Name: "static", Kind: "static"},
		{Name: "prior", Kind: "prior_only"},
		{Name: "blacklist", Kind: "blacklist"},
		{Name: "retry", Kind: "retry", K: 3},
		{Name: "rated", Kind: "rated", Alpha: 0.1, Gamma: 0.95},
		{Name: "rated-uniform", Kind: "rated", Alpha: 0.1, Gamma: 0.9, PriorInit: "uniform"},
		{Name: "linucb", Kind: "linucb", Alpha: 0.2},
		{Name: "global", Kind: "global_mab"},
		{Name: "sw", Kind: "sw_ucb", Window: 40},
		{Name: "breaker", Kind: "circuit_breaker", ConsecutiveFailures: 2, CoolDown: 7},
		{Name: "breaker-rate", Kind: "circuit_breaker", FailureRate: 0.5, Window: 6, MinCalls: 4, CoolDown: 5, HalfOpenCalls: 2},
		{Name: "grpo", Kind: "batch_grpo", Batch: 17},
		fac("kernel", "kernel", exp),
		fac("residual", "residual", lin),
		fac("paper", "rated", lin),
		fac("semantic", "semantic", lin),
		noLayer,
		lookAhead,
		sketched,
	}
}

// stepSource draws reproducible steps over numTools tools with d-dimensional contexts; queries
// repeat so that kernel prototypes merge and bandit arms see the same context twice.
type stepSource struct {
	rng      *rand.Rand
	numTools int
	contexts [][]float64
	excluded []bool
}

func newStepSource(seed uint64, numTools, d int) *stepSource {
	src := &stepSource{rng: rand.New(rand.NewPCG(seed, 7)), numTools: numTools}
	for q := 0; q < 12; q++ {
		x := make([]float64, d)
		for i := range x {
			x[i] = src.rng.NormFloat64()
		}
		src.contexts = append(src.contexts, unit(x))
	}
	return src
}

func (g *stepSource) step(t, k int) *Step {
	perm := g.rng.Perm(g.numTools)[:k]
	cands := make([]Candidate, k)
	sem := 0.9
	for i, tool := range perm {
		sem -= 0.05 * g.rng.Float64()
		cands[i] = Candidate{Tool: tool, Sem: sem, Prior: g.rng.Float64(), Relevance: g.rng.Float64()}
	}
	g.excluded = make([]bool, k)
	return &Step{T: t, Context: g.contexts[g.rng.IntN(len(g.contexts))], Candidates: cands, Excluded: g.excluded}
}

// feedback is a tool's outcome: tools below numTools/3 are down from step 100 to 250, the next
// sixth of the catalog is flaky (half its calls fail), the rest fail one call in ten.
func (g *stepSource) feedback(s *Step, pos int) Feedback {
	tool := s.Candidates[pos].Tool
	rate := 0.9
	switch {
	case tool < g.numTools/3 && s.T >= 100 && s.T < 250:
		rate = 0
	case tool < g.numTools/2:
		rate = 0.5
	}
	ok := g.rng.Float64() < rate
	fb := Feedback{Executed: ok}
	if g.rng.IntN(2) == 0 {
		fb.TaskKnown, fb.Task = true, ok && g.rng.Float64() < 0.6
	}
	return fb
}

// play runs steps [from, to) of p against g, with up to two attempts per step, and returns the
// positions chosen.
func play(p Policy, g *stepSource, from, to int) []int {
	var chosen []int
	for t := from; t < to; t++ {
		s := g.step(t, 6)
		for a := 0; a < 2; a++ {
			s.Attempt, s.Remaining = a, 2-a
			pos := p.Choose(s)
			chosen = append(chosen, pos)
			fb := g.feedback(s, pos)
			p.Observe(s, pos, fb)
			s.Excluded[pos] = true
			if fb.Executed {
				break
			}
		}
	}
	return chosen
}

func testEnv(seed uint64) Env {
	providers := make([]int, 40)
	for i := range providers {
		providers[i] = i / 4 // ten providers of four tools
	}
	return Env{NumTools: 20, Dim: 8, Weights: FusionWeights{Semantic: 0.75, Bandit: 0.15, Prior: 0.1}, Seed: seed, Providers: providers}
}

// TestSnapshotRestoreDecidesIdentically is the round trip: a policy restored from a snapshot
// makes, from then on, exactly the decisions of the policy it was taken from (same inputs, same
// seeds), for every policy kind. The catalog grows past Env.NumTools during the run.
func TestSnapshotRestoreDecidesIdentically(t *testing.T) {
	for _, spec := range stateSpecs() {
		t.Run(spec.Name, func(t *testing.T) {
			orig, err := New(spec, testEnv(3))
			if err != nil {
				t.Fatal(err)
			}
			g := newStepSource(11, 40, 8)
			play(orig, g, 0, 300)
			snap, err := Snapshot(orig)
			if err != nil {
				t.Fatal(err)
			}
			restored, err := New(spec, testEnv(3))
			if err != nil {
				t.Fatal(err)
			}
			// A policy that has learned something else first: the restore must replace all of it
			// (caches built from it included, such as the kernel's sketches).
			play(restored, newStepSource(23, 40, 8), 0, 120)
			if err := Restore(restored, snap); err != nil {
				t.Fatal(err)
			}
			again, err := Snapshot(restored)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, snap) {
				t.Fatal("snapshot of the restored policy differs from the snapshot it was restored from")
			}
			// Same future inputs for both: two sources with the same seed.
			a := play(orig, newStepSource(99, 40, 8), 300, 700)
			b := play(restored, newStepSource(99, 40, 8), 300, 700)
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("decision %d after restore: original chose %d, restored %d", i, a[i], b[i])
				}
			}
			if e, ok := orig.(Explainer); ok {
				s := newStepSource(5, 40, 8).step(700, 6)
				pa, pb := make([]Parts, 6), make([]Parts, 6)
				e.Explain(s, pa)
				restored.(Explainer).Explain(s, pb)
				for i := range pa {
					if !sameParts(pa[i], pb[i]) {
						t.Fatalf("candidate %d: parts %+v vs %+v", i, pa[i], pb[i])
					}
				}
			}
		})
	}
}

// TestRestoreOlderLayouts: version 8 is version 9 without the fleet's pace (incident_phase);
// version 7 was written in two layouts, first with the step the incident opened before where its
// outage began and the fleet's last execution, later without it (the layout version 8 names).
// All three are read: the snapshot of a layer with fleet incidents (and no incident_phase, which
// the older versions lack), cut to each older layout and relabelled, restores to a policy that
// decides as the original does.
func TestRestoreOlderLayouts(t *testing.T) {
	var spec Spec
	for _, s := range stateSpecs() {
		if s.Kind == "factored" && s.Reliability != nil && s.Reliability.IncidentProbe > 0 {
			spec = s
			break
		}
	}
	layer := *spec.Reliability
	layer.IncidentPhase = 0
	spec.Reliability = &layer
	if spec.TaskReliability != nil {
		task := *spec.TaskReliability
		task.IncidentPhase = 0
		spec.TaskReliability = &task
	}
	orig, err := New(spec, testEnv(3))
	if err != nil {
		t.Fatal(err)
	}
	play(orig, newStepSource(11, 40, 8), 0, 300)
	snap, err := Snapshot(orig)
	if err != nil {
		t.Fatal(err)
	}
	if snap[len(snapshotMagic)] != 9 {
		t.Fatalf("version byte %d, want 9", snap[len(snapshotMagic)])
	}
	inner := orig
	if e, ok := inner.(*Exploring); ok {
		inner = e.inner
	}
	inc := inner.(*Factored).health.(*HealthLayer).inc
	// The snapshot ends with where the outage began, the fleet's last execution, the fleet's
	// pace (not kept, an empty log, no changes, none seen, never down, no hypotheses) and the one-byte mode
	// flag.
	pace := binenc.NewWriter(nil)
	pace.Bool(false)
	pace.Uvarint(0)
	pace.Int(0)
	pace.Int(0)
	pace.Bool(false)
	pace.Int(0)
	pace.Uvarint(0)
	flag := len(snap) - 1
	if !bytes.Equal(snap[flag-len(pace.Bytes()):flag], pace.Bytes()) {
		t.Fatalf("the snapshot's pace block is % x, want % x", snap[flag-len(pace.Bytes()):flag], pace.Bytes())
	}
	v8 := append(bytes.Clone(snap[:flag-len(pace.Bytes())]), snap[flag])
	v8[len(snapshotMagic)] = 8
	tail := binenc.NewWriter(nil)
	tail.Int(inc.openedAfter)
	tail.Int(inc.memberOK)
	cut := len(v8) - len(tail.Bytes()) - 1
	without := bytes.Clone(v8)
	without[len(snapshotMagic)] = 7
	opened := binenc.NewWriter(nil)
	opened.Int(inc.nextProbe - spec.Reliability.IncidentProbe)
	with := append(append(bytes.Clone(without[:cut]), opened.Bytes()...), without[cut:]...)

	restore := func(data []byte) Policy {
		p, err := New(spec, testEnv(3))
		if err != nil {
			t.Fatal(err)
		}
		if err := Restore(p, data); err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := play(restore(snap), newStepSource(99, 40, 8), 300, 700)
	for name, data := range map[string][]byte{"version 8": v8, "version 7 without the opening step": without, "version 7 with it": with} {
		got := play(restore(data), newStepSource(99, 40, 8), 300, 700)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: decision %d is %d, the version-9 snapshot's %d", name, i, got[i], want[i])
			}
		}
	}
}

func sameParts(a, b Parts) bool {
	eq := func(x, y float64) bool { return x == y || (math.IsNaN(x) && math.IsNaN(y)) }
	return eq(a.Score, b.Score) && eq(a.Relevance, b.Relevance) && eq(a.Reliability, b.Reliability) && a.Masked == b.Masked
}

// TestObserveReplayMatchesLiveRun checks what a write-ahead log of outcomes relies on: feeding
// a fresh policy only the Observe calls of a live run (no Choose) leaves it deciding as the live
// policy does. Sampling policies are excluded: their draws are not replayed.
func TestObserveReplayMatchesLiveRun(t *testing.T) {
	for _, spec := range stateSpecs() {
		if spec.Kind == "batch_grpo" || spec.Explore != nil {
			continue
		}
		t.Run(spec.Name, func(t *testing.T) {
			live, _ := New(spec, testEnv(1))
			replayed, _ := New(spec, testEnv(1))
			g := newStepSource(21, 12, 8) // a small catalog: every tool is chosen often
			for step := 0; step < 400; step++ {
				s := g.step(step, 6)
				pos := live.Choose(s)
				fb := g.feedback(s, pos)
				live.Observe(s, pos, fb)
				replayed.Observe(s, pos, fb)
			}
			a := play(live, newStepSource(8, 12, 8), 400, 700)
			b := play(replayed, newStepSource(8, 12, 8), 400, 700)
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("decision %d: live %d, replayed %d", i, a[i], b[i])
				}
			}
		})
	}
}

func TestRestoreRefusesForeignAndTornSnapshots(t *testing.T) {
	specs := stateSpecs()
	kernel, _ := New(specs[0], testEnv(1))
	play(kernel, newStepSource(1, 40, 8), 0, 200)
	snap, err := Snapshot(kernel)
	if err != nil {
		t.Fatal(err)
	}
	linucb, _ := New(Spec{Name: "rated", Kind: "rated", Gamma: 0.95}, testEnv(1))
	if err := Restore(linucb, snap); !errors.Is(err, ErrSnapshotMismatch) {
		t.Fatalf("kernel snapshot into LinUCB: %v, want ErrSnapshotMismatch", err)
	}
	// Every strict prefix is refused (a torn write), and so is one extra byte.
	for cut := 0; cut < len(snap); cut += 1 + len(snap)/300 {
		fresh, _ := New(specs[0], testEnv(1))
		if err := Restore(fresh, snap[:cut]); err == nil {
			t.Fatalf("snapshot cut at %d of %d bytes accepted", cut, len(snap))
		}
	}
	fresh, _ := New(specs[0], testEnv(1))
	if err := Restore(fresh, append(append([]byte(nil), snap...), 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
	// Contexts of another dimension are refused for LinUCB.
	rated, _ := New(Spec{Name: "rated", Kind: "rated", Gamma: 0.95}, testEnv(1))
	play(rated, newStepSource(1, 40, 8), 0, 50)
	rs, _ := Snapshot(rated)
	env := testEnv(1)
	env.Dim = 16
	wide, _ := New(Spec{Name: "rated", Kind: "rated", Gamma: 0.95}, env)
	if err := Restore(wide, rs); !errors.Is(err, ErrSnapshotMismatch) {
		t.Fatalf("d=8 snapshot into d=16 policy: %v", err)
	}
	// And for the kernel relevance model's prototypes.
	recSpec, err := RecommendedSpec()
	if err != nil {
		t.Fatal(err)
	}
	narrow, _ := New(recSpec, testEnv(1))
	play(narrow, newStepSource(1, 40, 8), 0, 50)
	ks, _ := Snapshot(narrow)
	wideKernel, _ := New(recSpec, env)
	if err := Restore(wideKernel, ks); !errors.Is(err, ErrSnapshotMismatch) {
		t.Fatalf("kernel: d=8 snapshot into d=16 policy: %v", err)
	}
}

// TestRankMatchesChoose: the ranking's first position is what Choose returns, masks, exclusions
// and ties included, and for non-explaining policies the order is the successive choices.
func TestRankMatchesChoose(t *testing.T) {
	for _, spec := range stateSpecs() {
		if spec.Kind == "batch_grpo" || spec.Explore != nil {
			continue // sampling: Choose and Rank draw different numbers
		}
		t.Run(spec.Name, func(t *testing.T) {
			p, _ := New(spec, testEnv(2))
			g := newStepSource(4, 40, 8)
			play(p, g, 0, 200)
			for i := 0; i < 200; i++ {
				s := g.step(200+i, 6)
				if i%3 == 0 {
					s.Excluded[i%6] = true
				}
				if i%7 == 0 { // a tie on every score
					for j := range s.Candidates {
						s.Candidates[j].Sem, s.Candidates[j].Relevance, s.Candidates[j].Prior = 0.5, 0.5, 0.5
					}
				}
				r := Rank(p, s)
				if got := p.Choose(s); got != r.Order[0] {
					t.Fatalf("step %d: Rank puts %d first, Choose returns %d (order %v)", i, r.Order[0], got, r.Order)
				}
				if r.Propensity[r.Order[0]] != 1 || r.Explores {
					t.Fatalf("deterministic policy: propensities %v", r.Propensity)
				}
				seen := map[int]bool{}
				for _, pos := range r.Order {
					if !s.Allowed(pos) || seen[pos] {
						t.Fatalf("order %v repeats or includes an excluded position", r.Order)
					}
					seen[pos] = true
				}
				if want := 5; i%3 == 0 && len(r.Order) != want || i%3 != 0 && len(r.Order) != 6 {
					t.Fatalf("order %v has the wrong length", r.Order)
				}
			}
		})
	}
}

// TestGRPOPropensitiesAreItsSoftmax checks the logged propensities of the stochastic baseline by
// hand: logits S_sem/τ with β = 0.
func TestGRPOPropensitiesAreItsSoftmax(t *testing.T) {
	p, _ := New(Spec{Name: "g", Kind: "batch_grpo", Temperature: 0.5}, Env{NumTools: 3, Seed: 1})
	s := &Step{Candidates: []Candidate{{Tool: 0, Sem: 1}, {Tool: 1, Sem: 0.5}, {Tool: 2, Sem: 0}}}
	r := Rank(p, s)
	z := math.Exp(2) + math.Exp(1) + 1
	want := []float64{math.Exp(2) / z, math.Exp(1) / z, 1 / z}
	for i := range want {
		if math.Abs(r.Propensity[i]-want[i]) > 1e-12 {
			t.Fatalf("propensities %v, want %v", r.Propensity, want)
		}
	}
	if !r.Explores || len(r.Order) != 3 {
		t.Fatalf("ranking %+v", r)
	}
	_, props, explores := Describe(p, s, r.Order[0])
	if !explores || math.Abs(props[0]+props[1]+props[2]-1) > 1e-12 {
		t.Fatalf("Describe: %v %v", props, explores)
	}
}

func TestFactoredExplainByHand(t *testing.T) {
	layer := NewHealthLayer(HealthConfig{PriorStrength: 1, PoolInit: 1, MaskBase: 10}, nil)
	p := NewFactored("f", FrozenRelevance{}, layer, FusionConfig{Kind: FusionExpected})
	layer.Update(1, 0, false) // tool 1: r̂ = (0 + 1·1)/(0 + 1 + 1) = 0.5, masked until 11
	s := &Step{T: 5, Candidates: []Candidate{{Tool: 0, Relevance: 0.4}, {Tool: 1, Relevance: 0.9}}}
	parts := make([]Parts, 2)
	p.Explain(s, parts)
	if parts[0].Score != 0.4 || parts[0].Reliability != 1 || parts[0].Masked {
		t.Fatalf("tool 0: %+v", parts[0])
	}
	if parts[1].Score != 0.45 || parts[1].Reliability != 0.5 || !parts[1].Masked || parts[1].Relevance != 0.9 {
		t.Fatalf("tool 1: %+v", parts[1])
	}
	if r := Rank(p, s); fmt.Sprint(r.Order) != "[0 1]" {
		t.Fatalf("masked tool ranked first: %v", r.Order)
	}
}

func TestSetProviderGrowsWithCatalog(t *testing.T) {
	l := NewHealthLayer(HealthConfig{PriorStrength: 1, PoolInit: 1, ProviderStrength: 1, ProviderMaskAfter: 2, MaskBase: 10}, nil)
	l.SetProvider(7, 0)
	l.SetProvider(9, 0)
	if l.providerOf(8) != -1 {
		t.Fatal("a tool between two assigned ones got a provider")
	}
	// Two distinct tools of provider 0 fail with no success between: the provider is masked,
	// and so is tool 8 once it joins it.
	l.Update(7, 0, false)
	l.Update(9, 1, false)
	l.SetProvider(8, 0)
	if _, masked := l.Estimate(8, 2); !masked {
		t.Fatal("a tool added to a masked provider is not masked")
	}
}

func FuzzRestore(f *testing.F) {
	for _, spec := range stateSpecs() {
		p, _ := New(spec, testEnv(1))
		play(p, newStepSource(1, 40, 8), 0, 30)
		snap, err := Snapshot(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(spec.Name, snap)
	}
	specs := map[string]Spec{}
	for _, s := range stateSpecs() {
		specs[s.Name] = s
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		spec, ok := specs[name]
		if !ok {
			return
		}
		p, _ := New(spec, testEnv(1))
		if err := Restore(p, data); err != nil {
			return
		}
		// A snapshot that restores must leave a usable policy.
		play(p, newStepSource(2, 40, 8), 30, 40)
	})
}
