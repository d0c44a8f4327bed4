// Package router is the run-time API of RATED for agent runtimes: Select ranks the tools of a
// live catalog for a query with a selection policy of pkg/bandit (the recommended policy by
// default) and returns a decision id; Report feeds the outcome of executing a tool back to the
// policy. Tools can be added, changed and removed while it runs, every method is safe for
// concurrent use, every acknowledged report is durable (pkg/state), and every decision and
// outcome can go to a decision log (pkg/decisionlog).
//
// Time: the policies count time in steps (a tool's evidence decays with a half-life in steps,
// health-check masks last so many steps). By default one Select is one step, as one query is
// one step of the simulator; Config.StepEvery makes a step a fixed span of wall-clock time.
package router

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/decisionlog"
	"github.com/rated-dev/rated/pkg/state"
)

// Config configures a Router.
type Config struct {
	// Frontend is the first stage (required): NewDenseFrontend or NewLexicalFrontend.
	Frontend Frontend
	// Policy is the selection policy (nil: bandit.RecommendedSpec()).
	Policy *bandit.Spec
	// Weights are the fusion weights of the paper's policies (zero: 0.75/0.15/0.10).
	Weights bandit.FusionWeights
	// K is the number of candidates per decision (default 10); Select may ask for fewer.
	K int
	// Tools seed the catalog: each is added, or updated when it differs from the stored one;
	// stored tools absent from Tools stay unless PruneCatalog.
	Tools        []catalog.Tool
	PruneCatalog bool
	// Prior weighs the static prior r_static (zero: the paper's).
	Prior catalog.PriorConfig
	// Calibrator maps retrieval features to P(relevant) for policies that need it. When nil, the
	// state's stored one is used, else Calibrate is called once and its result stored.
	Calibrator      *bandit.Calibrator
	CalibrationNote string
	Calibrate       func() (*bandit.Calibrator, string, error)
	// Store keeps the state (nil: state.NewMemory(), nothing durable). A shared store
	// (state.Shared: Redis) makes the router one replica among several (replica.go); it needs
	// StepEvery.
	Store state.Store
	// FollowEvery is how often a replica reads the records the other replicas appended
	// (default DefaultFollowEvery); shared stores only.
	FollowEvery time.Duration
	// Log receives every decision and outcome (nil: none); LogContext adds the context vector.
	Log        *decisionlog.Writer
	LogContext bool
	// Clock gives the time (nil: time.Now); StepEvery > 0 makes one step that much wall-clock
	// time instead of one Select.
	Clock     func() time.Time
	StepEvery time.Duration
	// Seed seeds the policy's random choices (batch_grpo).
	Seed uint64
	// DecisionTTL is how long a decision accepts reports (default 1 h); MaxPending bounds the
	// decisions held for reports (default 50,000; the oldest go first).
	DecisionTTL time.Duration
	MaxPending  int
	// SnapshotEvery is the number of records between snapshots (default 10,000).
	SnapshotEvery int
	// MaxBatch bounds the records of one durable commit (default 4,096); MaxQueue the reports
	// waiting for one (default 65,536; beyond it Report fails with ErrOverloaded).
	MaxBatch, MaxQueue int
	// Hooks observe the router (metrics); any may be nil.
	Hooks Hooks
	// Progress, when set, is called while the catalog is embedded at start.
	Progress func(done, total int)
}

// Hooks observe the router's durable work.
type Hooks struct {
	// Commit is called after each durable commit of n records.
	Commit func(n int, took time.Duration, err error)
	// Snapshot is called after each snapshot of size bytes.
	Snapshot func(size int, took time.Duration, err error)
}

// Router selects tools and learns from their outcomes. Create it with New; Close it to flush a
// final snapshot.
type Router struct {
	cfg      Config
	spec     bandit.Spec
	specJSON string
	front    Frontend
	store    state.Store
	shared   state.Shared // store, when it is shared by replicas; else nil
	clock    func() time.Time
	k        int

	// mu guards the policy, the step clock and the pending decisions.
	mu    sync.Mutex
	pol   bandit.Policy
	steps int64
	epoch time.Time
	// learnedStep is the step unit the loaded state was learned under (snapshot or latest boot
	// record); -1 when the state predates its recording or is new.
	learnedStep time.Duration
	boot        uint64
	maxBoot     uint64 // the highest boot number another replica recorded (shared stores)
	pending     map[string]*decision
	order       *list.List // pending decisions, oldest first
	providers   []int      // provider index per tool index, owned by the policy's layer

	// catMu serialises catalog changes; view is the current catalog, read without locks.
	catMu     sync.Mutex
	view      atomic.Pointer[catalogView]
	provIndex map[string]int // provider key → index (under catMu and mu)
	provKeys  []string
	memo      *memoSimilarity

	calibrator  *bandit.Calibrator
	calibration string

	nextID    atomic.Uint64
	unshared  atomic.Uint64 // decisions a shared store did not take (replica.go)
	sharing   *sharer       // writes decisions to a shared store (replica.go)
	loadedSeq uint64        // last record applied by load
	commits   *committer
	closed    atomic.Bool
	stopJan   chan struct{}
	janDone   chan struct{}
}

// Outcome is what the agent runtime observed after executing a tool.
type Outcome struct {
	// Executed: the call returned without an error or a timeout.
	Executed bool
	// Task: the tool served the request (a judge's or the user's verdict), when the runtime
	// observed it; nil otherwise. A tool that did not execute cannot have served it.
	Task *bool
}

// SelectOptions refine one Select.
type SelectOptions struct {
	// K limits the candidates (0: the router's K; at most the router's K).
	K int
	// Exclude lists tools already tried for this request (a fallback after a failure): they are
	// kept among the candidates, as the policy's context, but never chosen.
	Exclude []string
}

// Selection is the answer to Select.
type Selection struct {
	// DecisionID identifies the decision in Report ("" when no tool matched the query: then
	// there is no decision and Tools is empty).
	DecisionID string
	// Tools are the candidates in the policy's order: Tools[0] is its choice, the rest the order
	// it would fall back in absent feedback. Excluded tools are not listed.
	Tools []RankedTool
	// Step is the policy's step clock at the decision.
	Step int64
}

// RankedTool is one ranked candidate and the parts of its score.
type RankedTool struct {
	ID string
	// Score is the policy's fused score; Relevance its relevance model's estimate; Reliability
	// the estimated probability that the tool executes now. NaN when the policy has no such
	// part.
	Score, Relevance, Reliability float64
	// Semantic is S_sem, Calibrated P(relevant | retrieval features), Prior r_static.
	Semantic, Calibrated, Prior float64
	// Masked: a health check excludes the tool now (it is ranked after every unmasked tool).
	Masked bool
	// Propensity is the probability that the policy chose this tool: 1 or 0 for the
	// deterministic policies, the draw's probability for a sampling one.
	Propensity float64
}

// Receipt acknowledges a durable report.
type Receipt struct {
	// Duplicate: the same outcome was already recorded for this decision and tool; nothing new
	// was written.
	Duplicate bool
}

// Errors of the API. Client errors are *InputError or wrap ErrUnknownDecision,
// ErrUnknownTool, ErrConflict or ErrNoTools; the others are the server's state.
var (
	ErrUnknownDecision = errors.New("unknown or expired decision")
	ErrUnknownTool     = errors.New("unknown tool")
	ErrConflict        = errors.New("conflicting report")
	ErrNoTools         = errors.New("the catalog has no tools")
	ErrClosed          = errors.New("router is closed")
	ErrOverloaded      = errors.New("too many reports waiting for storage")
)

// InputError is a client error in one field of a request.
type InputError struct {
	Field, Message string
}

// Error names the field and what is wrong with it.
func (e *InputError) Error() string { return e.Field + ": " + e.Message }

func inputErr(field, format string, args ...any) error {
	return &InputError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Limits on client input.
const (
	MaxQueryBytes = 8 << 10
	MaxIDBytes    = 512
	MaxK          = 100
)

type reportState int

const (
	reportNone reportState = iota
	reportInFlight
	reportDone
)

// reported is the report state of one candidate of a decision.
type reported struct {
	state reportState
	fb    bandit.Feedback
	// settled is closed once an in-flight report's commit has an outcome (reportInFlight only):
	// a retry that finds the slot in flight waits for it, then answers from the settled state.
	settled chan struct{}
}

// decision is a pending decision, accepting reports until it expires.
type decision struct {
	id       string
	created  time.Time
	query    string
	step     *step
	chosen   int
	reported []reported
	elem     *list.Element
}

// New builds the router: it loads the state (snapshot, then the records after it), reconciles
// cfg.Tools into the catalog, records the start, and starts the durable writer.
func New(ctx context.Context, cfg Config) (*Router, error) {
	if cfg.Frontend == nil {
		return nil, errors.New("router: Config.Frontend is required")
	}
	if cfg.Frontend.Dim() <= 0 {
		return nil, fmt.Errorf("router: frontend %s has dimension %d", cfg.Frontend.Name(), cfg.Frontend.Dim())
	}
	spec, err := resolveSpec(cfg.Policy)
	if err != nil {
		return nil, err
	}
	if bandit.IsOracle(spec.Kind) {
		return nil, fmt.Errorf("router: policy %s is a simulator upper bound (%s), not a runtime policy", spec.Name, spec.Kind)
	}
	specJSON, _ := json.Marshal(spec)
	if cfg.K <= 0 {
		cfg.K = 10
	}
	if cfg.K > MaxK {
		return nil, fmt.Errorf("router: K = %d exceeds %d", cfg.K, MaxK)
	}
	if cfg.Weights == (bandit.FusionWeights{}) {
		cfg.Weights = bandit.FusionWeights{Semantic: 0.75, Bandit: 0.15, Prior: 0.10}
	}
	if err := cfg.Weights.Validate("router weights"); err != nil {
		return nil, err
	}
	if cfg.Prior.SourceWeights == nil {
		cfg.Prior = catalog.PaperPriorConfig()
	}
	if err := cfg.Prior.Validate(); err != nil {
		return nil, err
	}
	if cfg.Store == nil {
		cfg.Store = state.NewMemory()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.DecisionTTL <= 0 {
		cfg.DecisionTTL = time.Hour
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = 50000
	}
	if cfg.SnapshotEvery <= 0 {
		cfg.SnapshotEvery = 10000
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 4096
	}
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = 65536
	}
	if cfg.FollowEvery <= 0 {
		cfg.FollowEvery = DefaultFollowEvery
	}
	shared, _ := cfg.Store.(state.Shared)
	if shared != nil && cfg.StepEvery <= 0 {
		return nil, errors.New("router: a shared state (replicas) needs wall-clock steps (Config.StepEvery, rated serve --step): replicas count their selections apart, so a selection clock would run at another speed on each")
	}
	var r *Router
	var loadStart time.Time
	for tries := 1; ; tries++ {
		r = &Router{
			cfg: cfg, spec: spec, specJSON: string(specJSON), front: cfg.Frontend, store: cfg.Store, shared: shared,
			clock: cfg.Clock, k: cfg.K, pending: map[string]*decision{}, order: list.New(), learnedStep: -1,
			provIndex: map[string]int{}, memo: newMemoSimilarity(cfg.Frontend.Similarity()),
			stopJan: make(chan struct{}), janDone: make(chan struct{}),
		}
		loadStart = time.Now()
		err := r.load(ctx)
		if errors.Is(err, state.ErrTrimmed) && tries < 5 {
			continue // a replica's snapshot dropped records while this one read them: read again
		}
		if err != nil {
			return nil, err
		}
		break
	}
	if err := r.ensureCalibration(); err != nil {
		return nil, err
	}
	r.commits = newCommitter(r)
	if shared != nil {
		r.startSharing()
		r.commits.ticker = time.NewTicker(cfg.FollowEvery)
		r.commits.followStart.Store(loadStart.UnixNano()) // load read the whole log
	}
	go r.commits.run()
	fail := func(err error) (*Router, error) {
		r.stopSharing()
		r.commits.stop()
		return nil, err
	}
	if err := r.recordStart(ctx); err != nil {
		return fail(fmt.Errorf("router: recording the start: %w", err))
	}
	if err := r.reconcile(ctx, cfg.Tools, cfg.PruneCatalog); err != nil {
		return fail(err)
	}
	go r.janitor()
	return r, nil
}

func resolveSpec(p *bandit.Spec) (bandit.Spec, error) {
	if p == nil {
		return bandit.RecommendedSpec()
	}
	if err := p.Validate("policy"); err != nil {
		return bandit.Spec{}, err
	}
	return *p, nil
}

// ensureCalibration settles the calibrator: the configured one, else the stored one, else one
// from cfg.Calibrate; a policy that needs one and gets none is an error.
func (r *Router) ensureCalibration() error {
	switch {
	case r.cfg.Calibrator != nil:
		r.calibrator, r.calibration = r.cfg.Calibrator, r.cfg.CalibrationNote
	case r.calibrator != nil:
		// Stored in the state by an earlier start.
	case r.cfg.Calibrate != nil && r.spec.NeedsCalibration():
		c, note, err := r.cfg.Calibrate()
		if err != nil {
			return fmt.Errorf("router: calibration for policy %s: %w", r.spec.Name, err)
		}
		r.calibrator, r.calibration = c, note
	}
	if r.calibrator == nil && r.spec.NeedsCalibration() {
		return fmt.Errorf("router: policy %s reads calibrated relevance, but no calibrator was given or stored", r.spec.Name)
	}
	// The view load built may predate this calibrator: bind it to the view's tools.
	if cur := r.view.Load(); cur != nil {
		r.view.Store(cur.withCalibrator(r.calibrator))
	}
	return nil
}

// now returns the current step: the Select count, or the wall-clock steps since the epoch.
// Called under mu.
func (r *Router) now(advance bool) int64 {
	if r.cfg.StepEvery > 0 {
		return int64(r.clock().Sub(r.epoch) / r.cfg.StepEvery)
	}
	if advance {
		r.steps++
	}
	return r.steps
}

// Select ranks the catalog's tools for query with the policy and opens a decision.
func (r *Router) Select(ctx context.Context, query string, opts SelectOptions) (*Selection, error) {
	start := r.clock()
	if r.closed.Load() {
		return nil, ErrClosed
	}
	if err := checkText("query", query, MaxQueryBytes); err != nil {
		return nil, err
	}
	k := r.k
	switch {
	case opts.K < 0 || opts.K > r.k:
		return nil, inputErr("k", "must be between 1 and %d (0: the server's %d), got %d", r.k, r.k, opts.K)
	case opts.K > 0:
		k = opts.K
	}
	if len(opts.Exclude) > MaxK {
		return nil, inputErr("exclude", "at most %d tools, got %d", MaxK, len(opts.Exclude))
	}
	for i, id := range opts.Exclude {
		if err := checkText(fmt.Sprintf("exclude[%d]", i), id, MaxIDBytes); err != nil {
			return nil, err
		}
	}
	view := r.view.Load()
	if len(view.live) == 0 {
		return nil, ErrNoTools
	}
	ctxVec, err := r.front.Context(query)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	found, err := view.index.Search(query, ctxVec, k)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		// A lexical frontend found no tool sharing a term: no decision, the clock where it is.
		r.mu.Lock()
		now := r.now(false)
		r.mu.Unlock()
		return &Selection{Step: now}, nil
	}
	st := &step{context: ctxVec, cands: make([]bandit.Candidate, len(found)), excluded: make([]bool, len(found))}
	for i, c := range found {
		e := view.byID[c.ID]
		st.cands[i] = bandit.Candidate{Tool: e.index, Sem: c.Score, Prior: view.priors[e.index]}
	}
	if view.calibrator != nil {
		view.calibrator.Apply(st.cands)
	}
	for _, id := range opts.Exclude {
		for i, c := range found {
			if c.ID == id {
				st.excluded[i] = true
			}
		}
	}
	for _, ex := range st.excluded {
		if ex {
			st.attempt++
		}
	}
	if st.attempt == len(found) {
		return nil, inputErr("exclude", "excludes every one of the query's %d candidates: the excluded tools count against k, ask for a larger k to fall back", len(found))
	}
	// As in the simulator: the attempts the policy's budget leaves for this request.
	st.remaining = max(1, min(r.spec.AttemptBudget(), len(found))-st.attempt)

	r.mu.Lock()
	st.t = r.now(true)
	bs := st.bandit(st.t)
	rank := bandit.Rank(r.pol, bs)
	d := &decision{id: r.newID(), created: r.clock(), query: query, step: st, chosen: rank.Order[0],
		reported: make([]reported, len(found))}
	r.addPending(d)
	var blob []byte
	if r.shared != nil {
		blob = encodeDecision(d)
	}
	r.mu.Unlock()
	if blob != nil {
		r.shareDecision(d.id, blob)
	}

	sel := &Selection{DecisionID: d.id, Step: st.t}
	for _, pos := range rank.Order {
		c := st.cands[pos]
		t := RankedTool{ID: found[pos].ID, Score: math.NaN(), Relevance: math.NaN(), Reliability: math.NaN(),
			Semantic: c.Sem, Calibrated: c.Relevance, Prior: c.Prior, Propensity: rank.Propensity[pos]}
		if rank.Parts != nil {
			p := rank.Parts[pos]
			t.Score, t.Relevance, t.Reliability, t.Masked = p.Score, p.Relevance, p.Reliability, p.Masked
		}
		sel.Tools = append(sel.Tools, t)
	}
	if r.cfg.Log != nil {
		if err := r.cfg.Log.Write(r.decisionRecord(d, found, rank, start)); err != nil {
			r.mu.Lock()
			r.dropPending(d)
			r.mu.Unlock()
			return nil, err
		}
	}
	return sel, nil
}

// newID returns a decision id unique across restarts: the boot number and a counter.
func (r *Router) newID() string {
	return "d" + strconv.FormatUint(r.boot, 36) + "-" + strconv.FormatUint(r.nextID.Add(1), 36)
}

func (r *Router) addPending(d *decision) {
	for r.order.Len() >= r.cfg.MaxPending {
		r.dropPending(r.order.Front().Value.(*decision))
	}
	d.elem = r.order.PushBack(d)
	r.pending[d.id] = d
}

func (r *Router) dropPending(d *decision) {
	if d.elem != nil {
		r.order.Remove(d.elem)
		d.elem = nil
	}
	delete(r.pending, d.id)
}

// janitor drops expired decisions every few seconds.
func (r *Router) janitor() {
	defer close(r.janDone)
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-r.stopJan:
			return
		case <-tick.C:
			r.expire()
		}
	}
}

func (r *Router) expire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	cutoff := r.clock().Add(-r.cfg.DecisionTTL)
	for r.order.Len() > 0 {
		d := r.order.Front().Value.(*decision)
		if d.created.After(cutoff) {
			return
		}
		r.dropPending(d)
	}
}

// Report records the outcome of executing tool for decision decisionID; latency is the tool's
// execution time (negative: not measured). It returns once the report is durable. A repeated
// report with the same outcome is acknowledged as a duplicate; one with another outcome is
// ErrConflict. A repeat that arrives while an earlier copy is still being committed waits for
// that commit and answers from its outcome (a duplicate once it is durable; if it failed, the
// repeat is recorded itself). A report whose ctx ends first may still be committed; its repeat
// is then answered the same way, so one outcome is recorded once.
func (r *Router) Report(ctx context.Context, decisionID, tool string, outcome Outcome, latency time.Duration) (Receipt, error) {
	if r.closed.Load() {
		return Receipt{}, ErrClosed
	}
	if err := checkText("decision_id", decisionID, MaxIDBytes); err != nil {
		return Receipt{}, err
	}
	if err := checkText("tool", tool, MaxIDBytes); err != nil {
		return Receipt{}, err
	}
	fb := bandit.Feedback{Executed: outcome.Executed}
	if outcome.Task != nil {
		if *outcome.Task && !outcome.Executed {
			return Receipt{}, inputErr("task_success", "a tool that did not execute cannot have served the task")
		}
		fb.TaskKnown, fb.Task = true, *outcome.Task
	}
	view := r.view.Load()
	r.mu.Lock()
	d, ok := r.pending[decisionID]
	if !ok {
		r.mu.Unlock()
		var err error
		if d, err = r.sharedDecision(ctx, decisionID); err != nil { // another replica's (replica.go)
			return Receipt{}, err
		}
		view = r.view.Load()
		r.mu.Lock()
	}
	// The janitor drops expired decisions only every few seconds (and a restored snapshot's
	// may have expired while the server was down): the TTL is checked here, on the same clock.
	if !d.created.After(r.clock().Add(-r.cfg.DecisionTTL)) {
		if r.pending[d.id] == d {
			r.dropPending(d)
		}
		r.mu.Unlock()
		return Receipt{}, fmt.Errorf("%w: %s (older than the decision TTL, %v)", ErrUnknownDecision, decisionID, r.cfg.DecisionTTL)
	}
	pos := -1
	for i, c := range d.step.cands {
		if c.Tool < len(view.entries) && view.entries[c.Tool].tool.ID == tool {
			pos = i
		}
	}
	if pos < 0 {
		r.mu.Unlock()
		return Receipt{}, fmt.Errorf("%w: %s is not a candidate of decision %s", ErrUnknownTool, tool, decisionID)
	}
	if d.step.excluded[pos] {
		// The request excluded it (an earlier attempt, already reported there): the decision
		// never offered it, and learning it again would count one outcome twice.
		r.mu.Unlock()
		return Receipt{}, fmt.Errorf("%w: %s was excluded from decision %s (report it on the decision that offered it)", ErrUnknownTool, tool, decisionID)
	}
	// A report of this decision and tool in flight (a retry that arrived before the first
	// copy's commit settled, or after its client gave up waiting): wait for its outcome. The
	// slot is settled by the committer, whether or not the first copy's caller still waits, so
	// one outcome is recorded once; a failed commit frees the slot and this copy takes it.
	for d.reported[pos].state == reportInFlight {
		settled := d.reported[pos].settled
		r.mu.Unlock()
		select {
		case <-settled:
		case <-ctx.Done():
			return Receipt{}, ctx.Err()
		case <-r.commits.finished:
			return Receipt{}, ErrClosed
		}
		r.mu.Lock()
	}
	if rp := d.reported[pos]; rp.state == reportDone {
		r.mu.Unlock()
		if rp.fb != fb {
			return Receipt{}, fmt.Errorf("%w: decision %s already has another outcome for %s", ErrConflict, decisionID, tool)
		}
		return Receipt{Duplicate: true}, nil
	}
	settled := make(chan struct{})
	d.reported[pos] = reported{state: reportInFlight, fb: fb, settled: settled}
	rec := &reportRecord{decision: d.id, t: r.now(false), step: d.step, pos: pos, fb: fb, latency: latencyMS(latency)}
	r.mu.Unlock()

	apply := func() { r.applyReport(rec) } // under mu, once durable
	// settle runs under mu once the commit has an outcome, even when ctx ended first.
	settle := func(status state.ClaimStatus, err error) {
		if cur := d.reported[pos]; cur.state == reportInFlight && cur.settled == settled {
			switch {
			case err == nil && (status == state.Appended || status == state.Duplicate):
				// Durable here, or another replica took the same outcome (it reaches this
				// replica through the log).
				d.reported[pos] = reported{state: reportDone, fb: fb}
			default:
				d.reported[pos] = reported{} // not recorded: the slot is free again
			}
		}
		close(settled)
	}
	status, err := r.commits.submitClaimed(ctx, apply, settle, r.reportClaims(d.id, pos, fb), rec.encode())
	switch {
	case err != nil:
		return Receipt{}, err
	case status == state.Duplicate:
		return Receipt{Duplicate: true}, nil
	case status != state.Appended:
		return Receipt{}, fmt.Errorf("%w: decision %s already has another outcome for %s (reported to another replica)", ErrConflict, decisionID, tool)
	}
	if r.cfg.Log != nil {
		if err := r.cfg.Log.Write(r.outcomeRecord(rec, tool, d.chosen == pos)); err != nil {
			// The report is durable and applied; only its log line is missing.
			return Receipt{}, fmt.Errorf("report recorded, but its decision-log line was not: %w", err)
		}
	}
	return Receipt{}, nil
}

// applyReport feeds a durable report to the policy (under mu), live or on replay.
func (r *Router) applyReport(rec *reportRecord) {
	r.pol.Observe(rec.step.bandit(rec.t), rec.pos, rec.fb)
	if d, ok := r.pending[rec.decision]; ok && rec.pos < len(d.reported) {
		d.reported[rec.pos] = reported{state: reportDone, fb: rec.fb}
	}
	if r.cfg.StepEvery == 0 && rec.t > r.steps {
		r.steps = rec.t
	}
}

// checkText validates a client string: present, valid UTF-8, without control characters, at
// most limit bytes.
func checkText(field, s string, limit int) error {
	switch {
	case strings.TrimSpace(s) == "":
		return inputErr(field, "is required")
	case len(s) > limit:
		return inputErr(field, "is %d bytes, the limit is %d", len(s), limit)
	case !utf8.ValidString(s):
		return inputErr(field, "is not valid UTF-8")
	}
	for _, c := range s {
		if c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
			return inputErr(field, "contains the control character %U", c)
		}
	}
	return nil
}

// Frontend returns the router's first stage.
func (r *Router) Frontend() Frontend { return r.front }

// Info describes the router.
type Info struct {
	Policy, Frontend, Calibration string
	Dim, K, Tools, Pending        int
	Step                          int64
	Boot                          uint64
	// Degraded is the last storage error, "" when the last write succeeded.
	Degraded string
	// Applied is the sequence number of the last record of the state's log applied.
	Applied uint64
	// Replica: the state is shared with other replicas (replica.go). FollowAge is then the age
	// of the replica's last complete read of the others' records: every report any replica
	// acknowledged before now − FollowAge is applied here. UnsharedDecisions counts selections
	// the shared store did not take (reportable on this replica only).
	Replica           bool
	FollowAge         time.Duration
	UnsharedDecisions uint64
}

// Info returns the router's description and counters.
func (r *Router) Info() Info {
	view := r.view.Load()
	r.mu.Lock()
	defer r.mu.Unlock()
	info := Info{Policy: r.spec.Name, Frontend: r.front.Name(), Calibration: r.calibration, Dim: r.front.Dim(), K: r.k,
		Tools: len(view.live), Pending: len(r.pending), Step: r.now(false), Boot: r.boot, Degraded: r.commits.degraded(),
		Applied: r.commits.seq, Replica: r.shared != nil, UnsharedDecisions: r.unshared.Load()}
	if info.Replica {
		info.FollowAge = time.Since(time.Unix(0, r.commits.followStart.Load()))
		if stall := max(time.Second, 20*r.cfg.FollowEvery); info.Degraded == "" && info.FollowAge > stall {
			info.Degraded = fmt.Sprintf("the replica has not read the shared log for %s", info.FollowAge.Round(time.Millisecond))
		}
	}
	return info
}

// Close stops accepting requests, waits for the reports in flight, writes a final snapshot and
// closes the store and the decision log.
func (r *Router) Close() error {
	if !r.closed.CompareAndSwap(false, true) {
		return nil
	}
	close(r.stopJan)
	<-r.janDone
	var errs []error
	r.stopSharing()
	r.commits.stop()
	if err := r.snapshot(context.Background(), true); err != nil {
		errs = append(errs, fmt.Errorf("final snapshot: %w", err))
	}
	if r.cfg.Log != nil {
		errs = append(errs, r.cfg.Log.Close())
	}
	errs = append(errs, r.store.Close())
	return errors.Join(errs...)
}
