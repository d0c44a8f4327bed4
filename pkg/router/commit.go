package router

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rated-dev/rated/pkg/state"
)

// committer is the router's single writer: it takes the records waiting for storage in one
// batch, appends them in one durable commit (group commit), then applies them in log order
// under the router's lock and acknowledges them. So the live state is always exactly the
// durable state (a record that failed to commit was never applied), and a snapshot taken
// between batches covers a prefix of the log.
type committer struct {
	r        *Router
	queue    chan *op
	quit     chan struct{}
	finished chan struct{}
	stopOnce sync.Once

	seq       uint64 // last applied sequence number (committer goroutine, and under r.mu)
	sinceSnap int
	lastErr   atomic.Pointer[string]
	follower  // shared stores only (replica.go)
}

// op is one change: its records are appended in the same commit, so it is durable whole or
// not at all.
type op struct {
	recs  [][]byte
	apply func() // called under r.mu once the records are durable; may be nil
	// settle is called under r.mu once the op has an outcome (its status and error), whether or
	// not its submitter still waits for it; may be nil.
	settle func(status state.ClaimStatus, err error)
	done   chan error
	// claims make the records conditional on a shared store (state.Shared); status is their
	// fate, set before done is signalled. Other stores append unconditionally.
	claims []state.Claim
	status state.ClaimStatus
}

func newCommitter(r *Router) *committer {
	return &committer{r: r, seq: r.loadedSeq, queue: make(chan *op, r.cfg.MaxQueue), quit: make(chan struct{}), finished: make(chan struct{})}
}

// submitClaimed queues recs and waits until they are durable and applied. If ctx ends first they may
// still be committed later: settle (may be nil) learns their fate in every case.
//
// claims (state.Claim) make the records conditional on a shared store: they are appended and
// applied only when the returned status is state.Appended.
func (c *committer) submitClaimed(ctx context.Context, apply func(), settle func(state.ClaimStatus, error), claims []state.Claim, recs ...[]byte) (state.ClaimStatus, error) {
	o := &op{recs: recs, apply: apply, settle: settle, claims: claims, done: make(chan error, 1)}
	select {
	case <-c.quit:
		c.settleUnqueued(o, ErrClosed)
		return 0, ErrClosed
	default:
	}
	select {
	case c.queue <- o:
	default:
		c.settleUnqueued(o, ErrOverloaded)
		return 0, ErrOverloaded
	}
	select {
	case err := <-o.done:
		return o.status, err
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-c.finished:
		select {
		case err := <-o.done:
			return o.status, err
		default:
			// Queued after the writer's last look at the queue: it never will be committed.
			c.settleUnqueued(o, ErrClosed)
			return 0, ErrClosed
		}
	}
}

// settleUnqueued settles an op the writer never takes.
func (c *committer) settleUnqueued(o *op, err error) {
	if o.settle != nil {
		c.r.mu.Lock()
		o.settle(0, err)
		c.r.mu.Unlock()
	}
}

// finish settles the ops of a processed batch (err: the commit's error; each op's status is
// set) and acknowledges them.
func (c *committer) finish(batch []*op, err error) {
	c.r.mu.Lock()
	for _, o := range batch {
		if o.settle != nil {
			o.settle(o.status, err)
		}
	}
	c.r.mu.Unlock()
	for _, o := range batch {
		o.done <- err
	}
}

func (c *committer) run() {
	defer close(c.finished)
	if c.ticker != nil {
		defer c.ticker.Stop()
	}
	batch := make([]*op, 0, c.r.cfg.MaxBatch)
	for {
		select {
		case o := <-c.queue:
			batch = append(batch[:0], o)
		case <-c.tick():
			c.followTick()
			continue
		case <-c.quit:
			for {
				batch = batch[:0]
				for len(batch) < c.r.cfg.MaxBatch {
					select {
					case o := <-c.queue:
						batch = append(batch, o)
						continue
					default:
					}
					break
				}
				if len(batch) == 0 {
					return
				}
				c.process(batch)
			}
		}
	fill:
		for len(batch) < c.r.cfg.MaxBatch {
			select {
			case o := <-c.queue:
				batch = append(batch, o)
			default:
				break fill
			}
		}
		c.process(batch)
		if c.sinceSnap >= c.r.cfg.SnapshotEvery {
			c.sinceSnap = 0
			c.r.snapshot(context.Background(), false) // a failure is reported through hooks and degraded()
		}
	}
}

func (c *committer) process(batch []*op) {
	if c.r.shared != nil {
		c.processShared(batch)
		return
	}
	var recs [][]byte
	for _, o := range batch {
		recs = append(recs, o.recs...)
	}
	start := time.Now()
	last, err := c.r.store.Append(context.Background(), recs)
	if h := c.r.cfg.Hooks.Commit; h != nil {
		h(len(recs), time.Since(start), err)
	}
	if err != nil {
		msg := err.Error()
		c.lastErr.Store(&msg)
		c.finish(batch, err)
		return
	}
	c.lastErr.Store(nil)
	c.r.mu.Lock()
	for _, o := range batch {
		if o.apply != nil {
			o.apply()
		}
	}
	c.seq = last
	c.r.mu.Unlock()
	c.finish(batch, nil)
	c.sinceSnap += len(recs)
}

// degraded returns the last storage error, "" after a successful write.
func (c *committer) degraded() string {
	if p := c.lastErr.Load(); p != nil {
		return *p
	}
	return ""
}

// stop processes what is queued and ends the writer.
func (c *committer) stop() {
	c.stopOnce.Do(func() { close(c.quit) })
	<-c.finished
}
