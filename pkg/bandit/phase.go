package bandit

import "math"

// fleetPhase is a version space of strictly periodic outages of the fleet (incident_phase): every
// half-period P from 1 to a maximum N and every phase φ in [0, 2P), under which the fleet is down
// at step t exactly when (t − φ) mod 2P < P. Each observation of the fleet (a failure, or an
// execution of a tool of its incidents) removes the hypotheses it contradicts; when none is
// left, the space starts again from that observation. The fleet is predicted up or down at t
// only when every hypothesis left agrees, and only once the observations since the space last
// started again have changed state phaseMinChanges times and number phaseMinSeen: a fleet that
// flaps at a steady pace is then met in its up-phases and left alone in its down-phases,
// whatever the pace (the probe schedule alone meets only paces that divide its own), while
// outages that are not periodic keep emptying the space and predict nothing.
//
// For one P the phases an observation allows form an arc of P of the 2P phases, and the
// intersection of such arcs is one arc, so the space is one arc per P still possible. It is
// not built at each start again: two changes of state seen between observations at a1 (before
// the first) and b2 (at the second) are two flips of the wave at least P apart, so only
// half-periods P ≤ b2 − a1 − 1 can explain them, and until then the observations are only
// logged (the half-period N, whose phases are long enough to hold them, explains them, so the
// space is not empty). At the second change the half-periods up to that bound are worked out
// from the log; a stream that is not periodic, whose changes come close together and which
// empties the space within a few observations, so costs a few short arcs per observation, not
// N. Where the log outgrows what N explains (a run of one state longer than N steps) the whole
// space is worked out from it.
type fleetPhase struct {
	log []phaseObs // while !kept: the observations since the space last started again (or before)
	// changes of state between consecutive observations of the log, or while kept since the start
	changes int
	// while kept: the hypotheses consistent with every observation since the start, the count of
	// those observations, and the last one's state
	alive  []phaseArc
	seen   int
	lastUp bool
	kept   bool
	// lastDown is the step of the latest observation of the fleet down (0 before any).
	lastDown int
}

// phaseObs is one observation of the fleet.
type phaseObs struct {
	t  int
	up bool
}

// phaseArc: phases φ ∈ {start, start+1, …, start+length−1} mod 2·half are possible.
type phaseArc struct {
	half, start, length int
}

// phaseMinChanges is how many changes of state (down to up or up to down) the observations since
// the space last started again must show before it predicts: two full flaps.
const phaseMinChanges = 4

// phaseMargin: the space predicts only after log2 of its size (the pairs of half-period and
// phase, N(N+1)) plus this many observations since it last started again. Each observation of a
// fleet that is not periodic (flaky tools) keeps about half of the pairs, so by then about 2^−6
// of a pair survives by chance, where too few observations would leave a chance survivor to
// predict.
const phaseMargin = 6

// phaseLogMax is the longest log kept before the space is worked out from it (a run of one
// state observed many times within N steps; snapshots refuse longer logs).
const phaseLogMax = 256

// phase states of a prediction.
const (
	phaseUnknown = iota
	phaseUp
	phaseDown
)

// observe records that the fleet was up (or down) at step t; maxHalf is the largest half-period
// considered.
func (f *fleetPhase) observe(t int, up bool, maxHalf int) {
	if !up {
		f.lastDown = t
	}
	if f.kept {
		kept := f.alive[:0]
		for _, a := range f.alive {
			if a, ok := a.intersect(observedArc(a.half, t, up)); ok {
				kept = append(kept, a)
			}
		}
		f.alive = kept
		if len(kept) > 0 {
			if up != f.lastUp {
				f.changes++
			}
			f.seen, f.lastUp = f.seen+1, up
			return
		}
		// Nothing periodic explains what was seen: start again from here.
		f.kept, f.log, f.changes = false, f.log[:0], 0
	}
	if n := len(f.log); n > 0 && f.log[n-1].up != up {
		f.changes++
	}
	f.log = append(f.log, phaseObs{t: t, up: up})
	switch {
	case f.changes >= 2:
		f.workOut(min(maxHalf, t-f.log[f.firstChange()-1].t-1), false)
	case len(f.log) > phaseLogMax || !f.logFitsLongest(maxHalf):
		f.workOut(maxHalf, true)
	}
}

// firstChange is the index of the log's first observation in the other state than the first.
func (f *fleetPhase) firstChange() int {
	for i := 1; i < len(f.log); i++ {
		if f.log[i].up != f.log[0].up {
			return i
		}
	}
	return len(f.log)
}

// logFitsLongest reports whether the half-period maxHalf explains the log of at most one change:
// for some flip f between the change's two observations (or none), the log's first observation
// is at most maxHalf before f and its last less than maxHalf after it.
func (f *fleetPhase) logFitsLongest(maxHalf int) bool {
	first, last := f.log[0].t, f.log[len(f.log)-1].t
	if f.changes == 0 {
		return last-first < maxHalf
	}
	i := f.firstChange()
	lo, hi := max(f.log[i-1].t+1, last-maxHalf+1), min(f.log[i].t, first+maxHalf)
	return lo <= hi
}

// canPredict reports whether the observations since the space last started again are numerous
// enough, and have changed state often enough, for it to predict.
func (f *fleetPhase) canPredict(maxHalf int) bool {
	return f.kept && f.changes >= phaseMinChanges && f.seen >= phaseMinSeen(maxHalf)
}

// workOut replays the log through the half-periods 1 to upTo: from its first observation, each
// arc intersected with each later observation's until it empties. With restarts (the log need
// not fit the half-period N), the first observation at which every half-period has emptied
// starts the space again and the replay goes on from there; without, the space is known not to
// have emptied before the log's last observation (N explained the rest), and upTo is the bound
// beyond which no half-period explains the log. The arcs left are kept from then on, with the
// counts of the observations since the last start, and the log is done with; if none is left,
// the space starts again at the log's last observation, which stays logged alone.
func (f *fleetPhase) workOut(upTo int, restarts bool) {
	from := 0
	for {
		restart := -1 // the observation at which the last half-period empties, if all do
		f.alive = f.alive[:0]
		for p := 1; p <= upTo; p++ {
			first := f.log[from]
			a := observedArc(p, first.t, first.up)
			i := from + 1
			for ; i < len(f.log); i++ {
				next, ok := a.intersect(observedArc(p, f.log[i].t, f.log[i].up))
				if !ok {
					break
				}
				a = next
			}
			if i == len(f.log) {
				f.alive = append(f.alive, a)
			} else {
				restart = max(restart, i)
			}
		}
		if len(f.alive) > 0 || !restarts || restart == len(f.log)-1 {
			break
		}
		from = restart
	}
	if len(f.alive) == 0 {
		f.log, f.changes = append(f.log[:0], f.log[len(f.log)-1]), 0
		return
	}
	f.kept, f.seen, f.changes = true, len(f.log)-from, 0
	for i := from + 1; i < len(f.log); i++ {
		if f.log[i].up != f.log[i-1].up {
			f.changes++
		}
	}
	f.lastUp = f.log[len(f.log)-1].up
	f.log = f.log[:0]
}

// predict returns phaseUp or phaseDown when the space can predict and every hypothesis left
// agrees on the fleet's state at t, else phaseUnknown; and since, the latest step at which the
// predicted phase can have begun under them.
func (f *fleetPhase) predict(t, maxHalf int) (state, since int) {
	if !f.canPredict(maxHalf) {
		return phaseUnknown, 0
	}
	for _, a := range f.alive {
		n := 2 * a.half
		// (t − φ) mod 2P over the arc's phases is the arc starting at (t − start − length + 1):
		// how far into its 2P cycle the fleet is, in [0, P) down, in [P, 2P) up.
		u := mod(t-a.start-a.length+1, n)
		var s, began int
		switch {
		case u+a.length <= a.half:
			s, began = phaseDown, t-u
		case u >= a.half && u+a.length <= n:
			s, began = phaseUp, t-(u-a.half)
		default:
			return phaseUnknown, 0
		}
		if state != phaseUnknown && s != state {
			return phaseUnknown, 0
		}
		state, since = s, max(since, began)
	}
	return state, since
}

// observedArc is the arc of phases, for half-period p, under which the fleet is in the observed
// state at t: down needs (t − φ) mod 2p in [0, p), up in [p, 2p).
func observedArc(p, t int, up bool) phaseArc {
	n := 2 * p
	start := mod(t, n) - p + 1 // in (−p, p]: one division per hypothesis, the rest by adding n
	if up {
		start -= p
	}
	for start < 0 {
		start += n
	}
	return phaseArc{half: p, start: start, length: p}
}

// intersect returns the arc of phases in both a and b (same half-period; b's length at most
// half the circle, so the intersection is one arc), and whether it is non-empty.
func (a phaseArc) intersect(b phaseArc) (phaseArc, bool) {
	n := 2 * a.half
	d := b.start - a.start // b's start in a's coordinates (both starts are in [0, n))
	if d < 0 {
		d += n
	}
	var lo, hi int // the intersection, in a's coordinates, where a is [0, length)
	switch {
	case d < a.length: // b starts inside a
		lo, hi = d, min(a.length, d+b.length)
	case d+b.length > n: // b wraps around into a's start
		lo, hi = 0, min(a.length, d+b.length-n)
	default:
		return phaseArc{}, false
	}
	if hi <= lo {
		return phaseArc{}, false
	}
	start := a.start + lo
	if start >= n {
		start -= n
	}
	return phaseArc{half: a.half, start: start, length: hi - lo}, true
}

func mod(x, n int) int {
	x %= n
	if x < 0 {
		x += n
	}
	return x
}

// phaseMinSeen is the observations the space needs before it predicts: log2(N(N+1)) rounded up,
// plus phaseMargin.
func phaseMinSeen(maxHalf int) int {
	return int(math.Ceil(math.Log2(float64(maxHalf)*float64(maxHalf+1)))) + phaseMargin
}
