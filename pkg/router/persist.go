package router

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/rated-dev/rated/internal/binenc"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/catalog"
)

// The router's durable state is a log of event records (pkg/state) and a snapshot covering a
// prefix of it. Records are binary (internal/binenc), tagged by their first byte:
//
//	report: the decision's step (context, candidates, exclusions), the reported position and
//	        outcome, and the step at which it was observed: replaying it calls Observe exactly
//	        as the live router did
//	tool:   a tool added or changed, with its stable index, provider, document vector and
//	        prior consistency
//	delete: a tool removed
//	boot:   a process start (decision ids carry the boot number, so they never repeat)
//
// The policy's own learned state is serialised by bandit.Snapshot; this file only wraps it.

const (
	recReport byte = 1
	recTool   byte = 2
	recDelete byte = 3
	recBoot   byte = 4
)

// step is a decision as the policy saw it.
type step struct {
	t        int64
	attempt  int
	context  []float32
	cands    []bandit.Candidate
	excluded []bool
	// remaining is the attempts left in the request by the policy's budget (ranking only:
	// Observe does not read it, so it is not stored).
	remaining int
}

// bandit returns the policy's view of the step at time t.
func (s *step) bandit(t int64) *bandit.Step {
	x := make([]float64, len(s.context))
	for i, v := range s.context {
		x[i] = float64(v)
	}
	excl := append([]bool(nil), s.excluded...)
	return &bandit.Step{T: int(t), Context: x, Candidates: s.cands, Attempt: s.attempt, Remaining: s.remaining, Excluded: excl}
}

func writeStep(w *binenc.Writer, s *step) {
	w.Varint(s.t)
	w.Int(s.attempt)
	w.Float32s(s.context)
	w.Uvarint(uint64(len(s.cands)))
	for i, c := range s.cands {
		w.Int(c.Tool)
		w.Float64(c.Sem)
		w.Float64(c.Prior)
		w.Float64(c.Relevance)
		w.Bool(s.excluded[i])
	}
}

func readStep(r *binenc.Reader, dim int) *step {
	s := &step{t: r.Varint(), attempt: r.Int(), context: r.Float32s()}
	n := r.Len(26)
	s.cands = make([]bandit.Candidate, n)
	s.excluded = make([]bool, n)
	for i := range s.cands {
		s.cands[i] = bandit.Candidate{Tool: r.Int(), Sem: r.Float64(), Prior: r.Float64(), Relevance: r.Float64()}
		s.excluded[i] = r.Bool()
		if r.Err() == nil && (s.cands[i].Tool < 0 || s.cands[i].Tool > maxToolIndex) {
			r.Fail(fmt.Errorf("candidate %d has tool index %d", i, s.cands[i].Tool))
		}
	}
	if r.Err() == nil && len(s.context) != dim {
		r.Fail(fmt.Errorf("context of dimension %d, the frontend has %d", len(s.context), dim))
	}
	return s
}

// maxToolIndex bounds tool indices read back, so a corrupt record cannot make a policy grow a
// huge table.
const maxToolIndex = 1 << 26

// reportRecord is one acknowledged report.
type reportRecord struct {
	decision string
	t        int64 // the step at which the outcome was observed
	step     *step
	pos      int
	fb       bandit.Feedback
	latency  float64 // milliseconds; NaN when not reported
}

func (rec *reportRecord) encode() []byte {
	w := binenc.NewWriter([]byte{recReport})
	w.String(rec.decision)
	w.Varint(rec.t)
	writeStep(w, rec.step)
	w.Int(rec.pos)
	w.Bool(rec.fb.Executed)
	w.Bool(rec.fb.TaskKnown)
	w.Bool(rec.fb.Task)
	w.Float64(rec.latency)
	return w.Bytes()
}

func decodeReport(r *binenc.Reader, dim int) *reportRecord {
	rec := &reportRecord{decision: r.String(), t: r.Varint()}
	rec.step = readStep(r, dim)
	rec.pos = r.Int()
	rec.fb = bandit.Feedback{Executed: r.Bool(), TaskKnown: r.Bool(), Task: r.Bool()}
	rec.latency = r.Float64()
	if r.Err() == nil && (rec.pos < 0 || rec.pos >= len(rec.step.cands)) {
		r.Fail(fmt.Errorf("report of position %d among %d candidates", rec.pos, len(rec.step.cands)))
	}
	return rec
}

// entry is one tool of the live catalog (or a removed one: its index stays reserved, so the
// policy's state for it is never given to another tool).
type entry struct {
	tool        catalog.Tool // as put, Prior cleared
	index       int
	provider    int
	vector      []float32 // dense frontends only
	pairKey     [32]byte  // the prior's (name, description) pair, see memoSimilarity
	consistency float64
	removed     bool
}

func writeEntry(w *binenc.Writer, e *entry) error {
	raw, err := json.Marshal(&e.tool)
	if err != nil {
		return fmt.Errorf("tool %s: %w", e.tool.ID, err)
	}
	w.Int(e.index)
	w.Int(e.provider)
	w.Raw(raw)
	w.Float32s(e.vector)
	w.Raw(e.pairKey[:])
	w.Float64(e.consistency)
	w.Bool(e.removed)
	return nil
}

func readEntry(r *binenc.Reader) *entry {
	e := &entry{index: r.Int(), provider: r.Int()}
	raw := r.Raw()
	e.vector = r.Float32s()
	key := r.Raw()
	e.consistency = r.Float64()
	e.removed = r.Bool()
	if r.Err() != nil {
		return e
	}
	if len(key) != 32 {
		r.Fail(fmt.Errorf("tool record: pair key of %d bytes", len(key)))
		return e
	}
	copy(e.pairKey[:], key)
	if err := json.Unmarshal(raw, &e.tool); err != nil {
		r.Fail(fmt.Errorf("tool record: %w", err))
	} else if e.index < 0 || e.index > maxToolIndex || e.provider < 0 || e.provider > maxToolIndex {
		r.Fail(fmt.Errorf("tool record %s: index %d, provider %d", e.tool.ID, e.index, e.provider))
	}
	return e
}

// toolRecord is a tool added or changed; providerKey names its provider (a new provider's
// index is the next free one).
type toolRecord struct {
	e           *entry
	providerKey string
}

func (rec *toolRecord) encode() ([]byte, error) {
	w := binenc.NewWriter([]byte{recTool})
	w.String(rec.providerKey)
	if err := writeEntry(w, rec.e); err != nil {
		return nil, err
	}
	return w.Bytes(), nil
}

func encodeDelete(id string) []byte {
	w := binenc.NewWriter([]byte{recDelete})
	w.String(id)
	return w.Bytes()
}

// encodeBoot records a start; epoch (unix nanoseconds) is the origin of wall-clock steps and
// stepEvery the start's step unit (0: one step per selection). Boot records written before the
// step unit was recorded end after the epoch.
func encodeBoot(boot uint64, epoch int64, stepEvery time.Duration) []byte {
	w := binenc.NewWriter([]byte{recBoot})
	w.Uvarint(boot)
	w.Varint(epoch)
	w.Varint(int64(stepEvery))
	return w.Bytes()
}

// decodeBoot reads a boot record after its kind byte; stepEvery is -1 for a record written
// before the step unit was recorded.
func decodeBoot(raw []byte) (boot uint64, epoch int64, stepEvery time.Duration, err error) {
	rd := binenc.NewReader(raw)
	boot, epoch, stepEvery = rd.Uvarint(), rd.Varint(), -1
	if rd.Remaining() > 0 {
		stepEvery = time.Duration(rd.Varint())
	}
	return boot, epoch, stepEvery, rd.End()
}

// snapshotMagic opens the router's snapshot; the version follows. Version 2 adds the
// calibrator's hubness feature, version 3 the step unit; older snapshots are still read
// (without them).
const (
	snapshotMagic   = "RATEDRTR"
	snapshotVersion = 3
)

// snapshot is the router's state at a point of the log.
type snapshot struct {
	spec        string // the policy spec, canonical JSON
	frontend    string
	dim         int
	boot        uint64
	steps       int64 // the step clock
	epoch       int64 // unix nanoseconds of the wall-clock step origin
	stepEvery   int64 // the step unit in nanoseconds (0: one step per selection); -1: not recorded
	calibrator  *bandit.Calibrator
	calibration string
	entries     []*entry // by index
	providers   []string // provider keys by index
	pending     []*decision
	policy      []byte // bandit.Snapshot
}

func (s *snapshot) encode() ([]byte, error) {
	w := binenc.NewWriter([]byte(snapshotMagic))
	w.Uvarint(snapshotVersion)
	w.String(s.spec)
	w.String(s.frontend)
	w.Int(s.dim)
	w.Uvarint(s.boot)
	w.Varint(s.steps)
	w.Varint(s.epoch)
	w.Varint(s.stepEvery)
	w.Bool(s.calibrator != nil)
	if c := s.calibrator; c != nil {
		for _, v := range c.Weights {
			w.Float64(v)
		}
		w.Int(c.Examples)
		w.Int(c.Positives)
		writeHubness(w, c.Hub)
		w.String(c.HubDropped)
	}
	w.String(s.calibration)
	w.Uvarint(uint64(len(s.entries)))
	for _, e := range s.entries {
		if err := writeEntry(w, e); err != nil {
			return nil, err
		}
	}
	w.Uvarint(uint64(len(s.providers)))
	for _, p := range s.providers {
		w.String(p)
	}
	w.Uvarint(uint64(len(s.pending)))
	for _, d := range s.pending {
		writeDecision(w, d)
	}
	w.Raw(s.policy)
	return w.Bytes(), nil
}

func decodeSnapshot(data []byte) (*snapshot, error) {
	if len(data) < len(snapshotMagic) || string(data[:len(snapshotMagic)]) != snapshotMagic {
		return nil, fmt.Errorf("not a rated router snapshot")
	}
	r := binenc.NewReader(data[len(snapshotMagic):])
	v := r.Uvarint()
	if r.Err() == nil && (v < 1 || v > snapshotVersion) {
		return nil, fmt.Errorf("router snapshot format %d, this build reads 1 to %d", v, snapshotVersion)
	}
	s := &snapshot{spec: r.String(), frontend: r.String(), dim: r.Int(), boot: r.Uvarint(), steps: r.Varint(), epoch: r.Varint(), stepEvery: -1}
	if v >= 3 {
		s.stepEvery = r.Varint()
	}
	if r.Bool() {
		c := &bandit.Calibrator{}
		for i := range c.Weights {
			c.Weights[i] = r.Float64()
		}
		c.Examples, c.Positives = r.Int(), r.Int()
		if v >= 2 {
			c.Hub = readHubness(r)
			c.HubDropped = r.String()
		}
		if r.Err() == nil {
			if err := c.Validate(); err != nil {
				r.Fail(fmt.Errorf("calibrator: %w", err))
			}
		}
		s.calibrator = c
	}
	s.calibration = r.String()
	s.entries = make([]*entry, r.Len(10))
	for i := range s.entries {
		s.entries[i] = readEntry(r)
		if r.Err() == nil && s.entries[i].index != i {
			r.Fail(fmt.Errorf("tool %d of the snapshot has index %d", i, s.entries[i].index))
		}
	}
	s.providers = make([]string, r.Len(1))
	for i := range s.providers {
		s.providers[i] = r.String()
	}
	s.pending = make([]*decision, r.Len(10))
	for i := range s.pending {
		s.pending[i] = readDecision(r, s.dim)
	}
	s.policy = r.Raw()
	if err := r.End(); err != nil {
		return nil, fmt.Errorf("router snapshot: %w", err)
	}
	return s, nil
}

// writeHubness writes the calibrator's hubness feature (nil: none), its counts by sorted id.
func writeHubness(w *binenc.Writer, h *bandit.Hubness) {
	w.Bool(h != nil)
	if h == nil {
		return
	}
	w.Float64(h.Weight)
	w.Int(h.Depth)
	w.Int(h.Queries)
	w.Float64(h.Strength)
	w.Float64(h.MeanShare)
	w.Float64(h.LikelihoodRatio)
	ids := slices.Sorted(maps.Keys(h.Counts))
	w.Uvarint(uint64(len(ids)))
	for _, id := range ids {
		w.String(id)
		w.Int(h.Counts[id])
	}
}

func readHubness(r *binenc.Reader) *bandit.Hubness {
	if !r.Bool() {
		return nil
	}
	h := &bandit.Hubness{Weight: r.Float64(), Depth: r.Int(), Queries: r.Int(), Strength: r.Float64(),
		MeanShare: r.Float64(), LikelihoodRatio: r.Float64()}
	n := r.Len(2)
	h.Counts = make(map[string]int, n)
	for range n {
		id := r.String()
		h.Counts[id] = r.Int()
	}
	return h
}

func writeDecision(w *binenc.Writer, d *decision) {
	w.String(d.id)
	w.Varint(d.created.UnixNano())
	w.String(d.query)
	writeStep(w, d.step)
	w.Int(d.chosen)
	for _, rp := range d.reported {
		w.Int(int(rp.state))
		w.Bool(rp.fb.Executed)
		w.Bool(rp.fb.TaskKnown)
		w.Bool(rp.fb.Task)
	}
}

func readDecision(r *binenc.Reader, dim int) *decision {
	d := &decision{id: r.String(), created: time.Unix(0, r.Varint()), query: r.String()}
	d.step = readStep(r, dim)
	d.chosen = r.Int()
	d.reported = make([]reported, len(d.step.cands))
	for i := range d.reported {
		d.reported[i] = reported{state: reportState(r.Int()), fb: bandit.Feedback{Executed: r.Bool(), TaskKnown: r.Bool(), Task: r.Bool()}}
		if d.reported[i].state == reportInFlight {
			d.reported[i].state = reportNone // not acknowledged before the snapshot
		}
	}
	if r.Err() == nil && (d.chosen < 0 || d.chosen >= len(d.step.cands)) {
		r.Fail(fmt.Errorf("decision %s: chosen position %d", d.id, d.chosen))
	}
	return d
}

// latencyMS converts a reported latency (negative: none) to the record's milliseconds.
func latencyMS(d time.Duration) float64 {
	if d < 0 {
		return math.NaN()
	}
	return float64(d) / float64(time.Millisecond)
}
