package router

import (
	"container/list"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rated-dev/rated/internal/binenc"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/state"
)

// Replicas. When the store is shared (state.Shared: Redis), several routers (the replicas of
// `rated serve` behind a load balancer) use one log. Every replica applies every record of the
// log in log order, its own and the others', through the same code as a restart's replay, so
// all replicas' learned state is the same function of the log:
//
//   - Its own records: the single writer appends a batch in one atomic step, applies the other
//     replicas' records that precede the batch in the log, then its own, at their places.
//   - The others' records: every FollowEvery (and before each batch of its own) the writer reads
//     the records after the last one it applied. A report acknowledged by any replica is applied
//     by every other within FollowEvery plus the time of one read (Info.FollowAge says how old
//     the replica's last complete read is).
//   - Decisions: Select stores each decision in the shared store for DecisionTTL, so a report can
//     reach any replica. A report is appended under a claim on (decision, position): the same
//     outcome sent to two replicas is appended once (the second is a duplicate), another outcome
//     is a conflict, exactly as with one router.
//   - Catalog: a new tool claims its index and its id, so two replicas never give one index to
//     two tools (the loser catches up and tries again); starts claim their boot number, so
//     decision ids stay unique.
//   - Time: steps are wall-clock (Config.StepEvery is required), from the first start's epoch,
//     so every replica has the same clock.
//   - A replica that finds records missing after the last one it applied (another replica's
//     snapshot covered them and they were trimmed) reloads the snapshot.
//   - The store unreachable: Select answers from the replica's current state, Report fails (503)
//     and Info.Degraded says why; once the store answers, the replica reads what it missed.
//
// Parts of a policy changed by its choices rather than by outcomes (a breaker's half-open
// trials, the random draws of batch_grpo and of exploring wrappers) stay per replica.

// DefaultFollowEvery is how often a replica reads the other replicas' records by default.
const DefaultFollowEvery = 50 * time.Millisecond

// follower is the committer's state for a shared store (zero otherwise).
type follower struct {
	ticker *time.Ticker
	// entries is the catalog being changed by records applied since the view was last built;
	// nil when the view is current. Touched by the committer goroutine under r.mu only.
	entries []*entry
	// followStart is the unix nanoseconds at which the last complete read of the log began.
	followStart atomic.Int64
}

var errStopFollow = errors.New("stop following")

// tick returns the follower's ticker channel, nil (never ready) without a shared store.
func (c *committer) tick() <-chan time.Time {
	if c.ticker == nil {
		return nil
	}
	return c.ticker.C
}

// followTick reads and applies the records the other replicas appended.
func (c *committer) followTick() {
	start := time.Now()
	err := c.follow(0, true)
	if err == nil {
		err = c.publish()
	}
	if err != nil {
		c.noteErr(err)
		return
	}
	c.followStart.Store(start.UnixNano())
	c.lastErr.Store(nil)
}

func (c *committer) noteErr(err error) {
	msg := err.Error()
	c.lastErr.Store(&msg)
}

// processShared appends a batch to a shared store under its claims and applies it in log order.
func (c *committer) processShared(batch []*op) {
	r := c.r
	batches := make([]state.Batch, len(batch))
	offered := 0
	for i, o := range batch {
		batches[i] = state.Batch{Records: o.recs, Claims: o.claims}
		offered += len(o.recs)
	}
	start := time.Now()
	last, status, err := r.shared.AppendBatches(context.Background(), batches)
	if h := r.cfg.Hooks.Commit; h != nil && offered > 0 {
		h(offered, time.Since(start), err)
	}
	if err != nil {
		c.noteErr(err)
		c.finish(batch, err)
		return
	}
	appended := 0
	for i, o := range batch {
		o.status = status[i]
		if o.status == state.Appended {
			appended += len(o.recs)
		}
	}
	first := last - uint64(appended) + 1
	if err := c.follow(first-1, false); err != nil {
		// Ours are durable but cannot be applied in log order now: acknowledge them; the next
		// complete read applies them from the log like the others'.
		c.noteErr(err)
		c.finish(batch, nil)
		return
	}
	r.mu.Lock()
	if c.seq == first-1 { // else a reloaded snapshot already covers them
		for _, o := range batch {
			if o.status == state.Appended && o.apply != nil {
				o.apply()
			}
		}
		c.seq = last
	}
	r.mu.Unlock()
	if err := c.publish(); err != nil {
		c.noteErr(err)
	} else {
		c.lastErr.Store(nil)
	}
	c.finish(batch, nil)
	c.sinceSnap += appended
}

// follow applies the records after c.seq, up to upTo or to the end of the log.
func (c *committer) follow(upTo uint64, toEnd bool) error {
	if !toEnd && upTo <= c.seq {
		return nil
	}
	for reloads := 0; ; reloads++ {
		gap := false
		err := c.r.store.Records(context.Background(), c.seq, func(seq uint64, raw []byte) error {
			if !toEnd && seq > upTo {
				return errStopFollow
			}
			if seq != c.seq+1 {
				gap = true
				return errStopFollow
			}
			c.r.mu.Lock()
			defer c.r.mu.Unlock()
			if err := c.replayLive(raw); err != nil {
				return fmt.Errorf("shared state record %d: %w", seq, err)
			}
			c.seq = seq
			return nil
		})
		if errors.Is(err, state.ErrTrimmed) {
			gap, err = true, nil
		}
		if err != nil && !errors.Is(err, errStopFollow) {
			return err
		}
		if !gap {
			return nil
		}
		if reloads == 3 {
			return fmt.Errorf("shared state: records after %d keep disappearing under snapshots", c.seq)
		}
		if err := c.reload(); err != nil {
			return err
		}
		if !toEnd && c.seq >= upTo {
			return nil
		}
	}
}

// work returns the catalog entries being changed (a copy of the view's at first). Under r.mu.
func (c *committer) work() []*entry {
	if c.entries == nil {
		c.entries = slices.Clone(c.r.view.Load().entries)
	}
	return c.entries
}

// replayLive applies one record of the shared log to the running router. Under r.mu.
func (c *committer) replayLive(raw []byte) error {
	r := c.r
	if len(raw) > 0 && raw[0] == recBoot {
		// Another replica's start: its boot number is taken, and the clock's origin is the
		// earliest start's (replicas that started at once settle on one epoch).
		boot, epoch, _, err := decodeBoot(raw[1:])
		if err != nil {
			return err
		}
		r.maxBoot = max(r.maxBoot, boot)
		if e := time.Unix(0, epoch); e.Before(r.epoch) {
			r.epoch = e
		}
		return nil
	}
	if len(raw) > 0 && raw[0] == recReport {
		return r.replay(raw, nil, r.front.Dim())
	}
	entries := c.work()
	err := r.replay(raw, &entries, r.front.Dim())
	c.entries = entries
	return err
}

// publish rebuilds the catalog view when records changed it (committer goroutine).
func (c *committer) publish() error {
	if c.entries == nil {
		return nil
	}
	view, err := c.r.buildView(c.entries)
	if err != nil {
		return fmt.Errorf("shared state: rebuilding the catalog: %w", err)
	}
	c.r.mu.Lock()
	c.entries = nil
	c.r.mu.Unlock()
	c.r.view.Store(view)
	return nil
}

// reload replaces the replica's learned state and catalog by the store's (its snapshot and the
// records after it), keeping its own pending decisions and boot number.
func (c *committer) reload() error {
	r := c.r
	var fresh *Router
	for tries := 1; ; tries++ {
		fresh = &Router{cfg: r.cfg, spec: r.spec, specJSON: r.specJSON, front: r.front, store: r.store, shared: r.shared,
			clock: r.clock, k: r.k, pending: map[string]*decision{}, order: list.New(), provIndex: map[string]int{}, memo: r.memo, learnedStep: -1}
		err := fresh.load(context.Background())
		if errors.Is(err, state.ErrTrimmed) && tries < 5 {
			continue // trimmed again while reading: another snapshot
		}
		if err != nil {
			return fmt.Errorf("reloading the shared state: %w", err)
		}
		break
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pol, r.providers, r.provIndex, r.provKeys = fresh.pol, fresh.providers, fresh.provIndex, fresh.provKeys
	r.maxBoot = max(r.maxBoot, fresh.boot)
	if fresh.epoch.Before(r.epoch) {
		r.epoch = fresh.epoch
	}
	c.seq, c.entries = fresh.loadedSeq, nil
	// fresh bound its view to the snapshot's calibrator, which another replica wrote: keep this
	// replica's own (its configuration or its start's), as its notes and snapshots say.
	r.view.Store(fresh.view.Load().withCalibrator(r.calibrator))
	return nil
}

// recordStart appends the start's boot record. On a shared store it is appended under a claim on
// its boot number: while another replica holds the number, this one catches up and takes the next.
func (r *Router) recordStart(ctx context.Context) error {
	var nonce [12]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return err
	}
	for range 100 {
		r.mu.Lock()
		r.boot = max(r.boot, r.maxBoot) + 1
		rec := encodeBoot(r.boot, r.epoch.UnixNano(), r.cfg.StepEvery)
		claims := r.bootClaims(r.boot, hex.EncodeToString(nonce[:]))
		r.mu.Unlock()
		status, err := r.commits.submitClaimed(ctx, nil, nil, claims, rec)
		if err != nil || status == state.Appended {
			return err
		}
	}
	return errors.New("no free boot number after 100 tries")
}

// Sync applies every record the shared store holds now (the other replicas' reports and catalog
// changes) before it returns; without a shared store it only waits for the writes queued before
// it.
func (r *Router) Sync(ctx context.Context) error {
	if r.closed.Load() {
		return ErrClosed
	}
	_, err := r.commits.submitClaimed(ctx, nil, nil, nil)
	return err
}

// Claims and shared decisions.

func decisionBlobKey(id string) string { return "decision/" + id }

// reportClaims makes a report conditional on its (decision, position) being unreported.
func (r *Router) reportClaims(decisionID string, pos int, fb bandit.Feedback) []state.Claim {
	if r.shared == nil {
		return nil
	}
	v := []byte{'0', '0', '0'}
	for i, b := range []bool{fb.Executed, fb.TaskKnown, fb.Task} {
		if b {
			v[i] = '1'
		}
	}
	return []state.Claim{{Set: "reports/" + decisionID, Field: strconv.Itoa(pos), Value: v, TTL: r.cfg.DecisionTTL}}
}

// toolClaims makes the records of new tools (index >= firstNew) conditional on their index and
// id being free.
func (r *Router) toolClaims(recs []*toolRecord, firstNew int) []state.Claim {
	if r.shared == nil {
		return nil
	}
	var out []state.Claim
	for _, rec := range recs {
		if rec.e.index < firstNew {
			continue
		}
		ix := strconv.Itoa(rec.e.index)
		out = append(out, state.Claim{Set: "tool-index", Field: ix, Value: []byte(rec.e.tool.ID)},
			state.Claim{Set: "tool-id", Field: rec.e.tool.ID, Value: []byte(ix)})
	}
	return out
}

// bootClaims makes a start's record conditional on its boot number being free.
func (r *Router) bootClaims(boot uint64, nonce string) []state.Claim {
	if r.shared == nil {
		return nil
	}
	return []state.Claim{{Set: "boots", Field: strconv.FormatUint(boot, 10), Value: []byte(nonce)}}
}

// encodeDecision serialises a pending decision for the other replicas. Under r.mu.
func encodeDecision(d *decision) []byte {
	w := binenc.NewWriter(nil)
	writeDecision(w, d)
	return w.Bytes()
}

// sharer writes the replica's decisions to the shared store in the background, every decision
// waiting in one round trip: a selection does not wait for Redis (with appendfsync always, each
// write waits for an fsync). A report that reaches another replica before its decision is
// written waits for it (sharedDecision).
type sharer struct {
	mu     sync.RWMutex // a selection in flight never sends on the closed queue
	closed bool
	queue  chan state.Blob
	done   chan struct{}
}

func (r *Router) startSharing() {
	r.sharing = &sharer{queue: make(chan state.Blob, r.cfg.MaxPending), done: make(chan struct{})}
	go func() {
		defer close(r.sharing.done)
		batch := make([]state.Blob, 0, 1024)
		for b := range r.sharing.queue {
			batch = append(batch[:0], b)
		fill:
			for len(batch) < cap(batch) {
				select {
				case b, ok := <-r.sharing.queue:
					if !ok {
						break fill
					}
					batch = append(batch, b)
				default:
					break fill
				}
			}
			if err := r.shared.PutBlobs(context.Background(), batch, r.cfg.DecisionTTL); err != nil {
				r.unshared.Add(uint64(len(batch)))
				r.commits.noteErr(fmt.Errorf("sharing %d decisions: %w", len(batch), err))
			}
		}
	}()
}

// shareDecision queues d's blob for the other replicas; a full queue leaves the decision
// reportable on this replica only (counted in Info.UnsharedDecisions).
func (r *Router) shareDecision(id string, blob []byte) {
	r.sharing.mu.RLock()
	defer r.sharing.mu.RUnlock()
	if !r.sharing.closed {
		select {
		case r.sharing.queue <- state.Blob{Key: decisionBlobKey(id), Data: blob}:
			return
		default:
		}
	}
	r.unshared.Add(1)
}

// stopSharing writes the decisions still queued and ends the sharer.
func (r *Router) stopSharing() {
	if r.sharing == nil {
		return
	}
	r.sharing.mu.Lock()
	if !r.sharing.closed {
		r.sharing.closed = true
		close(r.sharing.queue)
	}
	r.sharing.mu.Unlock()
	<-r.sharing.done
}

// sharedWait bounds how long a report waits for its decision to reach the shared store.
var sharedWait = []time.Duration{2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond}

// sharedDecision finds a decision another replica made and makes it pending here.
func (r *Router) sharedDecision(ctx context.Context, id string) (*decision, error) {
	if r.shared == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnknownDecision, id)
	}
	blob, ok, err := r.shared.GetBlob(ctx, decisionBlobKey(id))
	for _, wait := range sharedWait { // its replica may not have written it yet
		if ok || err != nil {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		blob, ok, err = r.shared.GetBlob(ctx, decisionBlobKey(id))
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownDecision, id)
	}
	rd := binenc.NewReader(blob)
	d := readDecision(rd, r.front.Dim())
	if err := rd.End(); err != nil {
		return nil, fmt.Errorf("shared decision %s: %w", id, err)
	}
	if d.id != id {
		return nil, fmt.Errorf("shared decision %s holds decision %s", id, d.id)
	}
	// A decision over tools this replica has not read yet: catch up first.
	for _, c := range d.step.cands {
		if c.Tool >= len(r.view.Load().entries) {
			if err := r.Sync(ctx); err != nil {
				return nil, err
			}
			break
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, ok := r.pending[id]; ok {
		return cur, nil
	}
	r.addPending(d)
	return d, nil
}

// StateDigest returns the sequence number of the last record of the log applied and the sha256
// of the policy's learned state then (bandit.Snapshot): routers that applied the same log agree.
func (r *Router) StateDigest() (applied uint64, digest string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	snap, err := bandit.Snapshot(r.pol)
	if err != nil {
		return 0, "", err
	}
	sum := sha256.Sum256(snap)
	return r.commits.seq, hex.EncodeToString(sum[:]), nil
}
