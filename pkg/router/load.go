package router

import (
	"context"
	"fmt"
	"time"

	"github.com/rated-dev/rated/internal/binenc"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/state"
)

// load rebuilds the state from the store: the latest snapshot, then every record after it,
// applied exactly as the live router applied it.
func (r *Router) load(ctx context.Context) error {
	snapSeq, data, ok, err := r.store.LoadSnapshot(ctx)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	var entries []*entry
	var polState []byte
	dim := r.front.Dim()
	if ok {
		s, err := decodeSnapshot(data)
		if err != nil {
			return fmt.Errorf("state: %w", err)
		}
		if s.spec != r.specJSON {
			return fmt.Errorf("state: it was learned by another policy spec (%s); this start configures %s: use another state directory, or the same policy", s.spec, r.specJSON)
		}
		if s.frontend != r.front.Name() || s.dim != dim {
			return fmt.Errorf("state: it was learned with retriever %s (context dimension %d); this start uses %s (dimension %d): use another state directory, or the same encoder",
				s.frontend, s.dim, r.front.Name(), dim)
		}
		r.boot, r.steps, r.epoch, r.learnedStep = s.boot, s.steps, time.Unix(0, s.epoch), time.Duration(s.stepEvery)
		r.calibrator, r.calibration = s.calibrator, s.calibration
		entries, polState = s.entries, s.policy
		r.provKeys = s.providers
		for i, k := range r.provKeys {
			r.provIndex[k] = i
		}
		for _, e := range entries {
			r.memo.put(e.pairKey, e.consistency)
			r.providers = append(r.providers, e.provider)
		}
		for _, d := range s.pending {
			r.addPending(d)
		}
	}
	r.pol, err = bandit.New(r.spec, bandit.Env{NumTools: len(entries), Dim: dim, Weights: r.cfg.Weights, Seed: r.cfg.Seed, Providers: r.providers})
	if err != nil {
		return err
	}
	if polState != nil {
		if err := bandit.Restore(r.pol, polState); err != nil {
			return fmt.Errorf("state: %w", err)
		}
	}
	var last uint64 = snapSeq
	err = r.store.Records(ctx, snapSeq, func(seq uint64, raw []byte) error {
		if r.shared != nil && seq != last+1 { // another replica's snapshot dropped them meanwhile
			return fmt.Errorf("%w: record %d follows %d", state.ErrTrimmed, seq, last)
		}
		if err := r.replay(raw, &entries, dim); err != nil {
			return fmt.Errorf("state record %d: %w", seq, err)
		}
		last = seq
		return nil
	})
	if err != nil {
		return err
	}
	if err := r.checkStepUnit(); err != nil {
		return err
	}
	if r.epoch.IsZero() {
		r.epoch = r.clock()
	}
	for i, e := range entries {
		if e == nil {
			return fmt.Errorf("state: tool index %d was never recorded", i)
		}
	}
	view, err := r.buildView(entries)
	if err != nil {
		return fmt.Errorf("state: rebuilding the catalog: %w", err)
	}
	r.view.Store(view)
	r.loadedSeq = last
	return nil
}

// replay applies one record of the log.
func (r *Router) replay(raw []byte, entries *[]*entry, dim int) error {
	if len(raw) == 0 {
		return fmt.Errorf("empty record")
	}
	rd := binenc.NewReader(raw[1:])
	switch raw[0] {
	case recReport:
		rec := decodeReport(rd, dim)
		if err := rd.End(); err != nil {
			return err
		}
		r.applyReport(rec)
	case recTool:
		key := rd.String()
		e := readEntry(rd)
		if err := rd.End(); err != nil {
			return err
		}
		if e.index > len(*entries) {
			return fmt.Errorf("tool %s has index %d, but only %d tools exist", e.tool.ID, e.index, len(*entries))
		}
		*entries = r.applyTool(&toolRecord{e: e, providerKey: key}, *entries)
	case recDelete:
		id := rd.String()
		if err := rd.End(); err != nil {
			return err
		}
		for i, e := range *entries {
			if e != nil && e.tool.ID == id {
				gone := *e
				gone.removed = true
				(*entries)[i] = &gone
			}
		}
	case recBoot:
		boot, epoch, stepEvery, err := decodeBoot(raw[1:])
		if err != nil {
			return err
		}
		if stepEvery >= 0 {
			r.learnedStep = stepEvery
		}
		r.boot = max(r.boot, boot)
		if r.epoch.IsZero() {
			r.epoch = time.Unix(0, epoch)
		}
	default:
		return fmt.Errorf("unknown record kind %d", raw[0])
	}
	return nil
}

// snapshot saves the whole state as of the last applied record. It runs on the committer's
// goroutine or after it stopped, so no record is appended meanwhile. Pending decisions go only
// into the final snapshot (withPending, on Close): there can be tens of thousands, and
// encoding them under the lock every few thousand reports would stall selections; after a
// crash they are lost anyway (their reports are refused as unknown decisions).
func (r *Router) snapshot(ctx context.Context, withPending bool) error {
	start := time.Now()
	r.mu.Lock()
	view := r.view.Load()
	pol, err := bandit.Snapshot(r.pol)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	s := &snapshot{spec: r.specJSON, frontend: r.front.Name(), dim: r.front.Dim(), boot: max(r.boot, r.maxBoot), steps: r.steps, stepEvery: int64(r.cfg.StepEvery),
		epoch: r.epoch.UnixNano(), calibrator: r.calibrator, calibration: r.calibration, entries: view.entries,
		providers: append([]string(nil), r.provKeys...), policy: pol}
	for el := r.order.Front(); withPending && el != nil; el = el.Next() {
		s.pending = append(s.pending, el.Value.(*decision))
	}
	data, err := s.encode()
	seq := r.commits.seq
	r.mu.Unlock()
	if err == nil {
		err = r.store.SaveSnapshot(ctx, seq, data)
	}
	if h := r.cfg.Hooks.Snapshot; h != nil {
		h(len(data), time.Since(start), err)
	}
	return err
}

// LoggedReport is one report found in a store's log.
type LoggedReport struct {
	Seq        uint64
	DecisionID string
	Tool       string
	Outcome    Outcome
}

// LoggedReports calls fn for every report in store's log after its latest snapshot, in order,
// with tool ids resolved (for inspection and for checks that acknowledged reports are there).
// Run it on a store no router has open.
func LoggedReports(ctx context.Context, store state.Store, fn func(LoggedReport) error) error {
	seq, data, ok, err := store.LoadSnapshot(ctx)
	if err != nil {
		return err
	}
	ids := map[int]string{}
	dim := -1
	if ok {
		s, err := decodeSnapshot(data)
		if err != nil {
			return err
		}
		for _, e := range s.entries {
			ids[e.index] = e.tool.ID
		}
		dim = s.dim
	}
	return store.Records(ctx, seq, func(seq uint64, raw []byte) error {
		if len(raw) == 0 {
			return fmt.Errorf("record %d is empty", seq)
		}
		rd := binenc.NewReader(raw[1:])
		switch raw[0] {
		case recTool:
			_ = rd.String() // provider key
			e := readEntry(rd)
			if err := rd.Err(); err != nil {
				return fmt.Errorf("record %d: %w", seq, err)
			}
			ids[e.index] = e.tool.ID
		case recReport:
			d := dim
			if d < 0 { // no snapshot yet: take the record's own context length
				probe := binenc.NewReader(raw[1:])
				_ = probe.String()
				probe.Varint()
				probe.Varint()
				probe.Int()
				d = len(probe.Float32s())
			}
			rec := decodeReport(rd, d)
			if err := rd.End(); err != nil {
				return fmt.Errorf("record %d: %w", seq, err)
			}
			o := Outcome{Executed: rec.fb.Executed}
			if rec.fb.TaskKnown {
				task := rec.fb.Task
				o.Task = &task
			}
			return fn(LoggedReport{Seq: seq, DecisionID: rec.decision, Tool: ids[rec.step.cands[rec.pos].Tool], Outcome: o})
		}
		return nil
	})
}

// checkStepUnit refuses a start whose step unit differs from the one the state was learned
// under: health masks and evidence half-lives are counted in steps, so switching between
// selection steps and wall-clock steps, or changing the wall-clock unit, moves the step clock
// (a rewound clock brings expired health masks back for as long as they first lasted).
func (r *Router) checkStepUnit() error {
	if r.learnedStep < 0 || r.learnedStep == r.cfg.StepEvery {
		return nil
	}
	return fmt.Errorf("state: it was learned with %s; this start uses %s: the step clock would jump (health masks and half-lives are counted in steps): start with the same --step, or use another state directory",
		stepUnit(r.learnedStep), stepUnit(r.cfg.StepEvery))
}

// stepUnit names a step unit as rated serve's --step flag sets it.
func stepUnit(d time.Duration) string {
	if d == 0 {
		return "--step 0 (one step per selection)"
	}
	return "--step " + d.String()
}
