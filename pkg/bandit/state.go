package bandit

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/rated-dev/rated/internal/binenc"
)

// This file is the one place where a policy's learned state is serialised. Snapshot writes
// what a policy has learned (never its configuration: a snapshot is restored into a policy built
// from the same Spec and Env), and Restore reads it back, so that a policy restored from a
// snapshot makes exactly the decisions the original would have made. The format is binary
// (internal/binenc): exact float64 bits, little-endian, versioned, with every length checked,
// so a torn or foreign snapshot is an error, never a panic.

// snapshotMagic opens every policy snapshot; the format version follows as a uvarint.
const snapshotMagic = "RATEDPOL"

// snapshotVersion is bumped whenever the layout of any policy's state changes. Version 2 added
// the reliability layer's sibling correlation, version 3 whether a factored policy has switched
// to its task-feedback reliability settings, version 4 the reliability layer's incident cohorts,
// version 5 the kernel relevance model's bandwidth losses, version 6 the reliability layer's
// fleet incidents, version 7 where an incident's outage began (incident_early_probe), version 8
// drops the step the incident opened (derived from its first probe's due step), version 9 adds
// the fleet's pace (incident_phase); older snapshots are still read (without them).
const snapshotVersion = 9

// ErrSnapshotMismatch is wrapped by Restore when the snapshot belongs to another kind of policy
// (or another relevance model or reliability layer) than the one it is restored into.
var ErrSnapshotMismatch = errors.New("snapshot of another policy kind")

// Snapshot returns the learned state of p. Scratch buffers and configuration are not included.
func Snapshot(p Policy) ([]byte, error) {
	w := binenc.NewWriter([]byte(snapshotMagic))
	w.Uvarint(snapshotVersion)
	if err := writePolicy(w, p); err != nil {
		return nil, fmt.Errorf("snapshot of policy %s: %w", p.Name(), err)
	}
	return w.Bytes(), nil
}

// Restore replaces the learned state of p, a freshly built policy of the same Spec and Env as
// the one snapshotted, with the snapshot's.
func Restore(p Policy, data []byte) error {
	if len(data) < len(snapshotMagic) || string(data[:len(snapshotMagic)]) != snapshotMagic {
		return fmt.Errorf("restore policy %s: not a rated policy snapshot", p.Name())
	}
	r := binenc.NewReader(data[len(snapshotMagic):])
	v := r.Uvarint()
	if r.Err() == nil && (v < 1 || v > snapshotVersion) {
		return fmt.Errorf("restore policy %s: snapshot format version %d, this build reads 1 to %d", p.Name(), v, snapshotVersion)
	}
	readPolicy(r, p, v)
	if err := r.End(); err != nil {
		return fmt.Errorf("restore policy %s: %w", p.Name(), err)
	}
	return nil
}

func writePolicy(w *binenc.Writer, p Policy) error {
	switch p := p.(type) {
	case *Static:
		w.String("static")
	case *PriorOnly:
		w.String("prior_only")
	case *Blacklist:
		w.String("blacklist")
		tools := make([]int, 0, len(p.excluded))
		for t, ex := range p.excluded {
			if ex {
				tools = append(tools, t)
			}
		}
		sort.Ints(tools)
		writeInts(w, tools)
	case *DiscountedLinUCB:
		w.String("linucb")
		writeLinUCB(w, p)
	case *GlobalUCB:
		w.String("global_mab")
		w.Float64s(p.sum)
		w.Float64s(p.count)
		w.Int(p.t)
	case *SlidingWindowUCB:
		w.String("sw_ucb")
		w.Int(p.t)
		w.Uvarint(uint64(len(p.events)))
		for _, ev := range p.events {
			w.Uvarint(uint64(len(ev)))
			for _, e := range ev {
				w.Int(e.t)
				w.Float64(e.y)
			}
		}
	case *CircuitBreaker:
		w.String("circuit_breaker")
		w.Uvarint(uint64(len(p.breakers)))
		for i := range p.breakers {
			b := &p.breakers[i]
			w.Int(int(b.state))
			w.Int(b.consecutive)
			w.Int(b.openedAt)
			w.Int(b.trials)
			w.Uvarint(uint64(len(b.recent)))
			for _, f := range b.recent {
				w.Bool(f)
			}
			w.Int(b.next)
			w.Int(b.filled)
			w.Int(b.failures)
		}
	case *BatchGRPO:
		w.String("batch_grpo")
		if p.src == nil {
			return errors.New("batch_grpo built without bandit.New: its random source cannot be saved")
		}
		rng, err := p.src.MarshalBinary()
		if err != nil {
			return err
		}
		w.Raw(rng)
		w.Float64s(p.beta)
		w.Uvarint(uint64(len(p.batch)))
		for _, s := range p.batch {
			writeInts(w, s.tools)
			w.Float64s(s.probs)
			w.Int(s.chosen)
			w.Float64(s.reward)
		}
	case *Exploring:
		w.String("explore")
		rng, err := p.src.MarshalBinary()
		if err != nil {
			return err
		}
		w.Raw(rng)
		return writePolicy(w, p.inner)
	case *Factored:
		w.String("factored")
		if err := writeRelevance(w, p.relevance); err != nil {
			return err
		}
		switch h := p.health.(type) {
		case nil:
			w.String("none")
		case *HealthLayer:
			w.String("health")
			writeHealth(w, h)
		default:
			return fmt.Errorf("reliability layer %T has no snapshot format", h)
		}
		w.Bool(p.taskMode)
	default:
		return fmt.Errorf("policy type %T has no snapshot format", p)
	}
	return nil
}

func readPolicy(r *binenc.Reader, p Policy, version uint64) {
	kind := r.String()
	if r.Err() != nil {
		return
	}
	want := ""
	switch p := p.(type) {
	case *Static:
		want = "static"
	case *PriorOnly:
		want = "prior_only"
	case *Blacklist:
		if want = "blacklist"; kind == want {
			p.excluded = map[int]bool{}
			for _, t := range readInts(r) {
				p.excluded[t] = true
			}
		}
	case *DiscountedLinUCB:
		if want = "linucb"; kind == want {
			readLinUCB(r, p)
		}
	case *GlobalUCB:
		if want = "global_mab"; kind == want {
			p.sum, p.count, p.t = r.Float64s(), r.Float64s(), r.Int()
			if len(p.sum) != len(p.count) {
				r.Fail(fmt.Errorf("global_mab: %d sums but %d counts", len(p.sum), len(p.count)))
			}
		}
	case *SlidingWindowUCB:
		if want = "sw_ucb"; kind == want {
			p.t = r.Int()
			p.events = make([][]swEvent, r.Len(1))
			for i := range p.events {
				ev := make([]swEvent, r.Len(9))
				for j := range ev {
					ev[j] = swEvent{t: r.Int(), y: r.Float64()}
				}
				p.events[i] = ev
			}
		}
	case *CircuitBreaker:
		if want = "circuit_breaker"; kind == want {
			p.breakers = make([]toolBreaker, r.Len(7))
			for i := range p.breakers {
				b := &p.breakers[i]
				b.state = breakerState(r.Int())
				b.consecutive, b.openedAt, b.trials = r.Int(), r.Int(), r.Int()
				b.recent = make([]bool, r.Len(1))
				for j := range b.recent {
					b.recent[j] = r.Bool()
				}
				b.next, b.filled, b.failures = r.Int(), r.Int(), r.Int()
				if b.state < closed || b.state > halfOpen || b.next < 0 || (len(b.recent) > 0 && b.next >= len(b.recent)) {
					r.Fail(fmt.Errorf("circuit_breaker: tool %d has an impossible state", i))
				}
			}
		}
	case *BatchGRPO:
		if want = "batch_grpo"; kind == want {
			rng := r.Raw()
			if r.Err() == nil {
				if p.src == nil {
					r.Fail(errors.New("batch_grpo built without bandit.New: its random source cannot be restored"))
				} else if err := p.src.UnmarshalBinary(rng); err != nil {
					r.Fail(fmt.Errorf("batch_grpo random source: %w", err))
				}
			}
			p.beta = r.Float64s()
			p.batch = make([]grpoSample, r.Len(3))
			for i := range p.batch {
				s := grpoSample{tools: readInts(r), probs: r.Float64s(), chosen: r.Int(), reward: r.Float64()}
				if r.Err() == nil && !grpoSampleValid(s, len(p.beta)) {
					r.Fail(fmt.Errorf("batch_grpo: sample %d is inconsistent", i))
				}
				p.batch[i] = s
			}
		}
	case *Exploring:
		if want = "explore"; kind == want {
			rng := r.Raw()
			if r.Err() == nil {
				if err := p.src.UnmarshalBinary(rng); err != nil {
					r.Fail(fmt.Errorf("exploration random source: %w", err))
				}
			}
			readPolicy(r, p.inner, version)
		}
	case *Factored:
		if want = "factored"; kind == want {
			readRelevance(r, p.relevance, version)
			layer := r.String()
			switch h := p.health.(type) {
			case nil:
				expect(r, "reliability layer", layer, "none")
			case *HealthLayer:
				if expect(r, "reliability layer", layer, "health") {
					readHealth(r, h, version)
				}
			default:
				r.Fail(fmt.Errorf("reliability layer %T has no snapshot format", h))
			}
			// The layer's evidence is restored; its settings follow the mode (a restored policy
			// built from the Spec starts in execution mode).
			if version >= 3 && r.Bool() && r.Err() == nil {
				if p.taskHealth == nil {
					r.Fail(fmt.Errorf("snapshot in task-feedback mode, policy %s has no task_reliability", p.Name()))
				} else {
					p.enterTaskMode()
				}
			}
		}
	default:
		r.Fail(fmt.Errorf("policy type %T has no snapshot format", p))
		return
	}
	expect(r, "policy", kind, want)
}

// expect fails r unless got == want and reports whether they match.
func expect(r *binenc.Reader, what, got, want string) bool {
	if got != want {
		r.Fail(fmt.Errorf("%w: the snapshot holds a %s %q, the policy is %q", ErrSnapshotMismatch, what, got, want))
		return false
	}
	return true
}

func writeRelevance(w *binenc.Writer, m RelevanceModel) error {
	switch m := m.(type) {
	case FrozenRelevance:
		w.String("frozen")
	case *PaperRelevance:
		w.String("paper")
		writeLinUCB(w, m.lin)
	case *ResidualLinUCB:
		w.String("residual")
		writeLinUCB(w, m.lin)
	case *KernelRelevance:
		w.String("kernel")
		w.Uvarint(uint64(len(m.tools)))
		for _, protos := range m.tools {
			w.Uvarint(uint64(len(protos)))
			for _, p := range protos {
				w.Float64s(p.c)
				w.Float64(p.n)
				w.Float64(p.s)
			}
		}
		w.Float64s(m.loss)
		w.Int(m.sel)
	default:
		return fmt.Errorf("relevance model %T has no snapshot format", m)
	}
	return nil
}

func readRelevance(r *binenc.Reader, m RelevanceModel, version uint64) {
	kind := r.String()
	if r.Err() != nil {
		return
	}
	switch m := m.(type) {
	case FrozenRelevance:
		expect(r, "relevance model", kind, "frozen")
	case *PaperRelevance:
		if expect(r, "relevance model", kind, "paper") {
			readLinUCB(r, m.lin)
		}
	case *ResidualLinUCB:
		if expect(r, "relevance model", kind, "residual") {
			readLinUCB(r, m.lin)
		}
	case *KernelRelevance:
		if expect(r, "relevance model", kind, "kernel") {
			m.tools = make([][]prototype, r.Len(1))
			dim := -1 // every prototype is a context vector of one dimension
			for i := range m.tools {
				protos := make([]prototype, r.Len(17))
				for j := range protos {
					protos[j] = prototype{c: r.Float64s(), n: r.Float64(), s: r.Float64()}
					if dim < 0 {
						dim = len(protos[j].c)
					}
					if r.Err() == nil && (len(protos[j].c) != dim || bad(protos[j].n) || bad(protos[j].s)) {
						r.Fail(fmt.Errorf("kernel relevance: tool %d, prototype %d is inconsistent", i, j))
					}
					if r.Err() == nil && m.cfg.Dim > 0 && dim != m.cfg.Dim {
						r.Fail(fmt.Errorf("%w: kernel relevance prototypes of dimension %d, contexts of %d", ErrSnapshotMismatch, dim, m.cfg.Dim))
					}
				}
				m.tools[i] = protos
			}
			m.dim, m.signs = 0, nil // the sketches are rebuilt from the prototypes at the next use
			clear(m.loss)
			m.sel = 0
			if version >= 5 {
				loss, sel := r.Float64s(), r.Int()
				if r.Err() == nil && (len(loss) != len(m.loss) || sel < 0 || sel >= len(m.loss)) {
					r.Fail(fmt.Errorf("%w: kernel relevance with %d candidate bandwidths, the snapshot's has %d", ErrSnapshotMismatch, len(m.loss), len(loss)))
				}
				for _, l := range loss {
					if r.Err() == nil && bad(l) {
						r.Fail(fmt.Errorf("kernel relevance: bandwidth loss %v", l))
					}
				}
				if r.Err() == nil {
					copy(m.loss, loss)
					m.sel = sel
				}
			}
		}
	default:
		r.Fail(fmt.Errorf("relevance model %T has no snapshot format", m))
	}
}

// writeLinUCB writes the arms of a DiscountedLinUCB: d, b, θ and A⁻¹ are all stored, because θ
// and A⁻¹ come from the vectorised update and recomputing them could round differently.
func writeLinUCB(w *binenc.Writer, p *DiscountedLinUCB) {
	w.Int(p.dim)
	w.Uvarint(uint64(len(p.arms)))
	for _, a := range p.arms {
		w.Bool(a != nil)
		if a != nil {
			w.Float64s(a.d)
			w.Float64s(a.b)
			w.Float64s(a.theta)
			w.Float64s(a.invA)
		}
	}
}

func readLinUCB(r *binenc.Reader, p *DiscountedLinUCB) {
	if dim := r.Int(); dim != p.dim && r.Err() == nil {
		r.Fail(fmt.Errorf("%w: the snapshot's contexts have dimension %d, the policy's %d", ErrSnapshotMismatch, dim-1, p.dim-1))
		return
	}
	p.arms = make([]*linArm, r.Len(1))
	for i := range p.arms {
		if !r.Bool() {
			continue
		}
		a := &linArm{d: r.Float64s(), b: r.Float64s(), theta: r.Float64s(), invA: r.Float64s()}
		if r.Err() == nil && (len(a.d) != p.dim || len(a.b) != p.dim || len(a.theta) != p.dim || len(a.invA) != p.dim) {
			r.Fail(fmt.Errorf("linucb: arm %d has vectors of the wrong length", i))
		}
		p.arms[i] = a
	}
}

func writeHealth(w *binenc.Writer, l *HealthLayer) {
	w.Float64(l.pool)
	w.Float64(l.recoveries)
	w.Float64(l.downTime)
	w.Uvarint(uint64(len(l.tools)))
	for _, t := range l.tools {
		w.Float64(t.s)
		w.Float64(t.f)
		w.Int(t.last)
		w.Int(t.consecutive)
		w.Int(t.maskedUntil)
		w.Int(t.lastFail)
		w.Int(t.observed)
		w.Float64(t.fBefore)
		w.Int(t.outageStart)
	}
	w.Uvarint(uint64(len(l.provs)))
	for _, p := range l.provs {
		w.Float64(p.s)
		w.Float64(p.f)
		w.Int(p.last)
		failed := make([]int, 0, len(p.failedTools))
		for t := range p.failedTools {
			failed = append(failed, t)
		}
		sort.Ints(failed)
		w.Bool(p.failedTools != nil)
		writeInts(w, failed)
		w.Int(p.consecutive)
		w.Int(p.maskedUntil)
		w.Bool(p.suspect)
		w.Int(p.lastFail)
	}
	w.Float64(l.siblingCalls)
	w.Float64(l.siblingFails)
	windows := make([]int, 0, len(l.cohortRecovered))
	for b := range l.cohortRecovered {
		windows = append(windows, b)
	}
	sort.Ints(windows)
	w.Uvarint(uint64(len(windows)))
	for _, b := range windows {
		w.Int(b)
		w.Int(l.cohortRecovered[b])
	}
	w.Float64(l.cohortCalls)
	w.Float64(l.cohortUps)
	for _, t := range l.tools {
		w.Int(t.lastOK)
		w.Int(t.recovered)
		w.Bool(t.incMember)
	}
	inc := &l.inc
	w.Bool(inc.open)
	w.Int(inc.nextProbe)
	w.Int(inc.probes)
	w.Int(inc.resolved)
	w.Int(inc.relapsed)
	w.Int(inc.relapsedOf)
	w.Int(inc.relapseFails)
	w.Float64(inc.calls)
	w.Float64(inc.ups)
	w.Int(inc.last)
	w.Int(inc.openedAfter)
	w.Int(inc.memberOK)
	ph := &l.phase
	w.Bool(ph.kept)
	w.Uvarint(uint64(len(ph.log)))
	for _, o := range ph.log {
		w.Int(o.t)
		w.Bool(o.up)
	}
	w.Int(ph.changes)
	w.Int(ph.seen)
	w.Bool(ph.lastUp)
	w.Int(ph.lastDown)
	w.Uvarint(uint64(len(ph.alive)))
	for _, a := range ph.alive {
		w.Int(a.half)
		w.Int(a.start)
		w.Int(a.length)
	}
}

func readHealth(r *binenc.Reader, l *HealthLayer, version uint64) {
	l.pool = r.Float64()
	if r.Err() == nil && !(l.pool >= 0 && l.pool <= 1) {
		r.Fail(fmt.Errorf("reliability layer: pooled rate %v outside [0, 1]", l.pool))
	}
	l.recoveries, l.downTime = r.Float64(), r.Float64()
	if r.Err() == nil && (bad(l.recoveries) || bad(l.downTime)) {
		r.Fail(fmt.Errorf("reliability layer: recovery counts (%v, %v)", l.recoveries, l.downTime))
	}
	l.tools = make([]toolHealth, r.Len(31))
	for i := range l.tools {
		l.tools[i] = toolHealth{s: r.Float64(), f: r.Float64(), last: r.Int(), consecutive: r.Int(), maskedUntil: r.Int(),
			lastFail: r.Int(), observed: r.Int(), fBefore: r.Float64(), outageStart: r.Int()}
	}
	l.provs = make([]providerHealth, r.Len(20))
	for i := range l.provs {
		p := &l.provs[i]
		p.s, p.f, p.last = r.Float64(), r.Float64(), r.Int()
		hasMap := r.Bool()
		failed := readInts(r)
		if hasMap {
			p.failedTools = make(map[int]bool, len(failed))
			for _, t := range failed {
				p.failedTools[t] = true
			}
		}
		p.consecutive, p.maskedUntil = r.Int(), r.Int()
		if version >= 2 {
			p.suspect, p.lastFail = r.Bool(), r.Int()
		}
	}
	if version >= 2 {
		l.siblingCalls, l.siblingFails = r.Float64(), r.Float64()
		if r.Err() == nil && (bad(l.siblingCalls) || bad(l.siblingFails) || l.siblingFails > l.siblingCalls) {
			r.Fail(fmt.Errorf("reliability layer: sibling counts (%v of %v)", l.siblingFails, l.siblingCalls))
		}
	}
	if version >= 4 {
		n := r.Len(2)
		l.cohortRecovered = nil
		if n > 0 {
			l.cohortRecovered = make(map[int]int, n)
		}
		for range n {
			b := r.Int()
			l.cohortRecovered[b] = r.Int()
		}
		l.cohortCalls, l.cohortUps = r.Float64(), r.Float64()
		if r.Err() == nil && (bad(l.cohortCalls) || bad(l.cohortUps) || l.cohortUps > l.cohortCalls) {
			r.Fail(fmt.Errorf("reliability layer: cohort counts (%v of %v)", l.cohortUps, l.cohortCalls))
		}
	}
	if version >= 6 {
		for i := range l.tools {
			t := &l.tools[i]
			t.lastOK, t.recovered, t.incMember = r.Int(), r.Int(), r.Bool()
		}
		inc := &l.inc
		inc.open, inc.nextProbe, inc.probes = r.Bool(), r.Int(), r.Int()
		inc.resolved, inc.relapsed, inc.relapsedOf, inc.relapseFails = r.Int(), r.Int(), r.Int(), r.Int()
		inc.calls, inc.ups, inc.last = r.Float64(), r.Float64(), r.Int()
		if r.Err() == nil && (bad(inc.calls) || bad(inc.ups) || inc.ups > inc.calls || inc.probes < 0 || inc.relapseFails < 0) {
			r.Fail(fmt.Errorf("reliability layer: incident state (%v of %v calls, %d probes, %d relapse failures)", inc.ups, inc.calls, inc.probes, inc.relapseFails))
		}
	}
	if version >= 7 {
		inc := &l.inc
		after, ok := r.Int(), r.Int()
		// Version 7 as first written held the step the incident opened before these two; the
		// builds from 615719c until version 8 wrote version 7 without it. The layer's block is
		// the last of a snapshot but for the factored policy's one-byte mode flag, so more than
		// one byte left here means a third field follows: the first layout (its opening step is
		// derived now).
		if version == 7 && r.Remaining() > 1 {
			after, ok = ok, r.Int()
		}
		inc.openedAfter, inc.memberOK = after, ok
	}
	if version >= 9 {
		readPhase(r, &l.phase)
	}
	if r.Err() == nil {
		for i, t := range l.tools {
			if bad(t.s) || bad(t.f) || bad(t.fBefore) {
				r.Fail(fmt.Errorf("reliability layer: tool %d has evidence (%v, %v)", i, t.s, t.f))
				return
			}
		}
	}
}

// readPhase reads the fleet's version space of periodic outages (incident_phase), refusing a log
// longer than the layer keeps, whose change count is not its own or that holds the second change
// (the space is built there), and arcs that are not arcs of their half-period's circle.
func readPhase(r *binenc.Reader, ph *fleetPhase) {
	ph.kept = r.Bool()
	ph.log = make([]phaseObs, r.Len(2))
	changes := 0
	for i := range ph.log {
		ph.log[i] = phaseObs{t: r.Int(), up: r.Bool()}
		if i > 0 && ph.log[i].up != ph.log[i-1].up {
			changes++
		}
	}
	ph.changes, ph.seen, ph.lastUp, ph.lastDown = r.Int(), r.Int(), r.Bool(), r.Int()
	if r.Err() == nil && (len(ph.log) > phaseLogMax || ph.changes < 0 || ph.seen < 0 || (ph.kept && len(ph.log) > 0) || (!ph.kept && (ph.changes != changes || changes >= 2))) {
		r.Fail(fmt.Errorf("reliability layer: fleet pace (kept %v, %d logged, %d changes, %d seen)", ph.kept, len(ph.log), ph.changes, ph.seen))
		return
	}
	ph.alive = make([]phaseArc, r.Len(3))
	for i := range ph.alive {
		a := phaseArc{half: r.Int(), start: r.Int(), length: r.Int()}
		if r.Err() == nil && (a.half < 1 || a.half > maxIncidentPhase || a.start < 0 || a.start >= 2*a.half || a.length < 1 || a.length > a.half) {
			r.Fail(fmt.Errorf("reliability layer: fleet pace hypothesis %d (half-period %d, phases %d+%d)", i, a.half, a.start, a.length))
			return
		}
		ph.alive[i] = a
	}
}

// grpoSampleValid reports whether a restored sample can be used by the next update.
func grpoSampleValid(s grpoSample, numTools int) bool {
	if len(s.tools) != len(s.probs) || s.chosen < 0 || s.chosen >= len(s.tools) {
		return false
	}
	for _, t := range s.tools {
		if t < 0 || t >= numTools {
			return false
		}
	}
	return true
}

// bad reports whether v cannot be a decayed count.
func bad(v float64) bool { return !(v >= 0) || math.IsInf(v, 0) }

func writeInts(w *binenc.Writer, v []int) {
	w.Uvarint(uint64(len(v)))
	for _, x := range v {
		w.Int(x)
	}
}

func readInts(r *binenc.Reader) []int {
	n := r.Len(1)
	if n == 0 {
		return nil
	}
	out := make([]int, n)
	for i := range out {
		out[i] = r.Int()
	}
	return out
}
