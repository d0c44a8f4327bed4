package bandit

import (
	"math/rand/v2"
	"testing"
)

// downAt is the flapping schedule of pkg/sim written out: down for half steps, up for half,
// from step start on.
func downAt(t, start, half int) bool { return ((t-start)/half)%2 == 0 }

// TestPhaseArcIntersectByEnumeration: on every circle of 2, 4, …, 14 phases, the intersection
// of every arc of at most half the circle with every observation arc equals the set of phases
// in both, enumerated.
func TestPhaseArcIntersectByEnumeration(t *testing.T) {
	in := func(a phaseArc, phi int) bool { return mod(phi-a.start, 2*a.half) < a.length }
	for half := 1; half <= 7; half++ {
		n := 2 * half
		for start := 0; start < n; start++ {
			for length := 1; length <= half; length++ {
				a := phaseArc{half: half, start: start, length: length}
				for step := 0; step < n; step++ {
					for _, up := range []bool{false, true} {
						b := observedArc(half, step, up)
						got, ok := a.intersect(b)
						count := 0
						for phi := range n {
							both := in(a, phi) && in(b, phi)
							if both {
								count++
							}
							if ok && in(got, phi) != both {
								t.Fatalf("half %d, %+v ∩ %+v = %+v: phase %d in both %v", half, a, b, got, phi, both)
							}
						}
						if ok != (count > 0) || (ok && got.length != count) {
							t.Fatalf("half %d, %+v ∩ %+v = %+v, %v; %d phases in both", half, a, b, got, ok, count)
						}
					}
				}
			}
		}
	}
	// The observation arcs themselves: the phases φ under which the fleet is in the observed
	// state at t, by the schedule's definition.
	for half := 1; half <= 7; half++ {
		for step := 0; step < 30; step++ {
			for _, up := range []bool{false, true} {
				b := observedArc(half, step, up)
				for phi := range 2 * half {
					if in(b, phi) != (downAt(step, phi-2*half*10, half) != up) {
						t.Fatalf("half %d, step %d, up %v: φ %d in the arc %+v is %v", half, step, up, phi, b, in(b, phi))
					}
				}
			}
		}
	}
}

// TestFleetPhaseLearnsAPace: a fleet flapping with half-period 3 from step 7, seen at every
// step, with half-periods up to 8 considered (72 pairs: log2 rounds up to 7, plus the margin, 13
// observations). A hand case first: after steps 7–9 down and 10–12 up, the log is explained
// whole, and half-period 3 keeps only φ = 1 (7 mod 6); half-period 1 (a flip every step) is out.
// Then: the fourth change of state comes at step 19, the 13th observation, so nothing is
// predicted up to step 19 and every prediction from step 20 on is the schedule's.
func TestFleetPhaseLearnsAPace(t *testing.T) {
	const maxHalf = 8
	if got := phaseMinSeen(maxHalf); got != 13 {
		t.Fatalf("phaseMinSeen(8) = %d, want 13", got)
	}
	var f fleetPhase
	for step := 7; step <= 12; step++ {
		f.observe(step, !downAt(step, 7, 3), maxHalf)
	}
	if f.changes != 1 || len(f.log) != 6 || f.kept || f.predictState(13, maxHalf) != phaseUnknown {
		t.Fatalf("after six observations: %d changes, %d logged, kept %v, prediction %d; want 1, 6, false and none", f.changes, len(f.log), f.kept, f.predictState(13, maxHalf))
	}
	probe := f
	probe.log = append([]phaseObs(nil), f.log...)
	probe.workOut(maxHalf, true)
	halves := map[int]phaseArc{}
	for _, a := range probe.alive {
		halves[a.half] = a
	}
	if a, ok := halves[3]; !ok || a.start != 1 || a.length != 1 || probe.seen != 6 || probe.changes != 1 {
		t.Fatalf("worked out: half-period 3 keeps %+v (%v), %d seen, %d changes; want φ = 1 alone, 6 and 1", a, ok, probe.seen, probe.changes)
	}
	if _, ok := halves[1]; ok {
		t.Fatal("half-period 1 explains steps 7–12, which do not flip every step")
	}
	for step := 13; step < 200; step++ {
		got := f.predictState(step, maxHalf)
		want := phaseUp
		if downAt(step, 7, 3) {
			want = phaseDown
		}
		if step >= 20 && got != want || step < 20 && got != phaseUnknown {
			t.Fatalf("step %d: prediction %d, want %d", step, got, want)
		}
		// The phase began at the last multiple of 3 steps from 7: 7, 10, 13, …
		if _, since := f.predict(step, maxHalf); step >= 20 && since != step-(step-7)%3 {
			t.Fatalf("step %d: the phase began at %d, want %d", step, since, step-(step-7)%3)
		}
		f.observe(step, want == phaseUp, maxHalf)
	}
	// Far ahead, with no more observations: step 1000 is up ((1000 − 7)/3 = 331, odd).
	if got := f.predictState(1000, maxHalf); got != phaseUp || downAt(1000, 7, 3) {
		t.Fatalf("step 1000: prediction %d, want up (%d)", got, phaseUp)
	}
	// One observation the schedule does not explain (the fleet down in an up-phase, a tool
	// failing for its own reason) cuts the log back and silences the space until it is learned
	// again.
	f.observe(202, false, maxHalf) // (202 − 7)/3 = 65: an up-phase
	if got := f.predictState(203, maxHalf); got != phaseUnknown || f.kept || len(f.log) != 1 {
		t.Fatalf("after a contradiction: prediction %d, kept %v, log %d; want none, a log of that observation", got, f.kept, len(f.log))
	}
}

// TestFleetPhaseStaysSilentWhenNotPeriodic: a transient outage (down 40 steps, then up for good)
// and a fleet whose outcomes follow no schedule (a fixed pseudo-random sequence) never leave a
// prediction: the log is cut back whenever no hypothesis explains it, and a cut log lacks the
// changes of state it needs or the observations for a survivor to be more than chance.
func TestFleetPhaseStaysSilentWhenNotPeriodic(t *testing.T) {
	const maxHalf = 8
	var f fleetPhase
	for step := 0; step < 400; step++ {
		f.observe(step, step >= 40, maxHalf)
		if p := f.predictState(step+1, maxHalf); p != phaseUnknown {
			t.Fatalf("transient outage, step %d: prediction %d", step, p)
		}
	}
	var g fleetPhase
	x := uint32(12345)
	for step := 0; step < 2000; step++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		g.observe(step, x%10 < 3, maxHalf) // up 30% of the time, as a flaky tool
		if p := g.predictState(step+1, maxHalf); p != phaseUnknown {
			t.Fatalf("flaky fleet, step %d: prediction %d (%d hypotheses, %d changes, %d seen)", step, p, len(g.alive), g.changes, g.seen)
		}
	}
}

// TestHealthLayerIncidentPhaseByHand: two tools flap together with half-period 20 from step 100
// (down 100–119, up 120–139, …); tool 0 is called at every step the layer does not mask, tool 1
// never. With incident_phase (half-periods up to 40: 1,640 pairs, 11 + 6 = 17 observations) and
// D = 10, once the fleet has flapped twice, tool 0 is offered at the first step of each
// down-phase (not seen down within D steps nor in this phase: a probe, which fails) and masked
// for the rest of it, and offered in every up-phase step; tool 1, never called, is not the
// fleet's (it has not failed) and keeps its own estimate. Without the option the layer fails
// more often in the down-phases. When the flapping stops (a second run, up for good from step
// 600), the next down-phase's probe finds the fleet up and the tool is never masked again.
func TestHealthLayerIncidentPhaseByHand(t *testing.T) {
	cfg := HealthConfig{PriorStrength: 1, PoolInit: 1, ResetOnFailure: true, MaskBase: 10, IncidentProbe: 10, IncidentPhase: 40}
	run := func(cfg HealthConfig, stops int, check func(step int, down, masked bool, r float64)) *HealthLayer {
		l := NewHealthLayer(cfg, nil)
		for step := 0; step < 1000; step++ {
			down := step >= 100 && step < stops && downAt(step, 100, 20)
			r, masked := l.Estimate(0, step)
			check(step, down, masked, r)
			if !masked {
				l.Update(0, step, !down)
			}
		}
		return l
	}
	failures := func(cfg HealthConfig) int {
		n := 0
		run(cfg, 1000, func(step int, down, masked bool, _ float64) {
			if step >= 400 && down && !masked {
				n++
			}
		})
		return n
	}
	l := run(cfg, 1000, func(step int, down, masked bool, r float64) {
		if step < 400 { // learned by then: two full flaps and many observations
			return
		}
		phaseStart := (step-100)%40 == 0
		if masked != (down && !phaseStart) {
			t.Fatalf("step %d: masked %v; the fleet is down %v, a down-phase's first step %v", step, masked, down, phaseStart)
		}
		if !masked && r <= 0 {
			t.Fatalf("step %d: estimate %v where the tool is offered", step, r)
		}
	})
	if r, masked := l.Estimate(1, 1000); masked || r != 1 {
		t.Fatalf("tool 1, never called: estimate %v masked %v, want the pooled 1 unmasked", r, masked)
	}
	// One failed call per down-phase from step 400 (15 phases: 420, 460, …, 980) against more
	// without the option.
	with, cfgOff := failures(cfg), cfg
	cfgOff.IncidentPhase = 0
	without := failures(cfgOff)
	if with != 15 || without <= with {
		t.Fatalf("failed calls in down-phases after step 400: %d with incident_phase (want 15), %d without", with, without)
	}
	// The flapping stops at 600 (a down-phase would have begun at 620): the probe at 620 finds
	// the fleet up, and from then on the tool is never masked.
	run(cfg, 600, func(step int, down, masked bool, _ float64) {
		if step >= 620 && masked {
			t.Fatalf("step %d: masked after the flapping stopped at 600", step)
		}
	})
}

// BenchmarkFleetPhase times the fleet's pace model with every half-period up to N = 1,000 (the
// shipped incident_phase): at its worst, one observation with all N arcs standing and a
// prediction on which all N agree (none ends the loop early); and on a stream that is not
// periodic (a failure every fifth observation, as BenchmarkRecommendedDecision's step has), the
// cost per observation, explanations of the log included. BenchmarkRATEDDecisionUpdate is the
// reference measured beside it.
func BenchmarkFleetPhase(b *testing.B) {
	const n = 1000
	standing := func() *fleetPhase {
		f := &fleetPhase{kept: true, seen: phaseMinSeen(n), changes: phaseMinChanges}
		for p := 1; p <= n; p++ {
			f.alive = append(f.alive, observedArc(p, 1000, false))
		}
		return f
	}
	b.Run("observe-1000-standing", func(b *testing.B) {
		f := standing()
		for b.Loop() {
			f.observe(1000, false, n) // consistent with every arc: all N stay
		}
		if len(f.alive) != n {
			b.Fatalf("%d hypotheses left, want %d", len(f.alive), n)
		}
	})
	b.Run("predict-1000-agreeing", func(b *testing.B) {
		f := standing()
		for b.Loop() {
			if f.predictState(1000, n) != phaseDown {
				b.Fatal("the hypotheses do not agree")
			}
		}
	})
	b.Run("observe-not-periodic", func(b *testing.B) {
		var f fleetPhase
		i := 0
		for b.Loop() {
			f.observe(i, i%5 != 0, n)
			i++
		}
	})
}

// eagerPhase is the version space of fleetPhase written out directly, as its definition reads:
// every half-period's arc kept and intersected at every observation, the whole space started
// again from an observation that empties it, predictions once the observations since the start
// have changed state phaseMinChanges times and number phaseMinSeen.
type eagerPhase struct {
	alive         []phaseArc
	changes, seen int
	last          int // 0 none, 1 up, 2 down
}

func (e *eagerPhase) observe(t int, up bool, maxHalf int) {
	state := 2
	if up {
		state = 1
	}
	if e.last != 0 && e.last != state {
		e.changes++
	}
	e.last = state
	e.seen++
	var kept []phaseArc
	for _, a := range e.alive {
		if a, ok := a.intersect(observedArc(a.half, t, up)); ok {
			kept = append(kept, a)
		}
	}
	e.alive = kept
	if len(e.alive) == 0 {
		e.changes, e.seen = 0, 1
		for p := 1; p <= maxHalf; p++ {
			e.alive = append(e.alive, observedArc(p, t, up))
		}
	}
}

func (e *eagerPhase) predict(t, maxHalf int) int {
	if e.changes < phaseMinChanges || e.seen < phaseMinSeen(maxHalf) {
		return phaseUnknown
	}
	agreed := phaseUnknown
	for _, a := range e.alive {
		f := fleetPhase{kept: true, alive: []phaseArc{a}, changes: phaseMinChanges, seen: phaseMinSeen(maxHalf)}
		s := f.predictState(t, maxHalf)
		if s == phaseUnknown || agreed != phaseUnknown && s != agreed {
			return phaseUnknown
		}
		agreed = s
	}
	return agreed
}

// TestFleetPhaseMatchesItsDefinition: on streams of every kind (fleets flapping at random paces
// seen at random steps, with and without stray contradicting observations; transient and
// persistent outages; random outcomes; long runs of one state, sparse and dense) the space built lazily predicts
// exactly what eagerPhase, which keeps every arc at every observation, predicts, step by step.
func TestFleetPhaseMatchesItsDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 480; trial++ {
		maxHalf := []int{4, 12, 40, 90}[trial%4]
		half := 1 + rng.IntN(maxHalf)
		start := rng.IntN(50)
		kind := trial % 6
		if kind == 5 {
			maxHalf = 400 // a run observed more than phaseLogMax times within N steps
		}
		var f fleetPhase
		var e eagerPhase
		step := 0
		for n := 0; n < 700; n++ {
			if kind == 5 {
				step += rng.IntN(2) // several observations at one step too, as a fallback's attempts
			} else {
				step += 1 + rng.IntN([]int{1, 3, 10, 60}[rng.IntN(4)])
			}
			var up bool
			switch kind {
			case 0, 1: // flapping, seen at random steps; kind 1 with stray contradictions
				up = !downAt(step+2*half*100-start, 0, half)
				if kind == 1 && rng.IntN(25) == 0 {
					up = !up
				}
			case 2: // a transient outage, then up
				up = step > 200
			case 3: // random outcomes
				up = rng.IntN(10) < 4
			case 4: // long runs of one state
				up = (step/500)%2 == 1
			case 5: // dense observations: up 300 steps, then down
				up = step < 300
			}
			f.observe(step, up, maxHalf)
			e.observe(step, up, maxHalf)
			if len(f.log) > phaseLogMax {
				t.Fatalf("trial %d: %d observations logged, past phaseLogMax", trial, len(f.log))
			}
			for _, ahead := range []int{1, 7, 50} {
				if got, want := f.predictState(step+ahead, maxHalf), e.predict(step+ahead, maxHalf); got != want {
					t.Fatalf("trial %d (kind %d, N %d, half %d): after step %d, prediction at +%d is %d, the definition's %d", trial, kind, maxHalf, half, step, ahead, got, want)
				}
			}
		}
	}
}

// predictState is predict's state alone.
func (f *fleetPhase) predictState(t, maxHalf int) int {
	s, _ := f.predict(t, maxHalf)
	return s
}
