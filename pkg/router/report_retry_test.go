package router_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rated-dev/rated/pkg/router"
	"github.com/rated-dev/rated/pkg/state"
)

// gatedStore holds the next Append while armed until release is closed, then fails it when
// fail is set; entered tells that the Append is held.
type gatedStore struct {
	state.Store
	armed   atomic.Bool
	fail    bool
	entered chan struct{}
	release chan struct{}
}

func newGatedStore(fail bool) *gatedStore {
	return &gatedStore{Store: state.NewMemory(), fail: fail, entered: make(chan struct{}, 1), release: make(chan struct{})}
}

func (g *gatedStore) Append(ctx context.Context, recs [][]byte) (uint64, error) {
	if g.armed.CompareAndSwap(true, false) {
		g.entered <- struct{}{}
		<-g.release
		if g.fail {
			return 0, errors.New("disk on fire")
		}
	}
	return g.Store.Append(ctx, recs)
}

// reportRecords counts the report records (tag 1, persist.go) in the store's log.
func reportRecords(t *testing.T, s state.Store) int {
	t.Helper()
	n := 0
	err := s.Records(context.Background(), 0, func(_ uint64, raw []byte) error {
		if len(raw) > 0 && raw[0] == 1 {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitingCtx tells (asked, once) when Report first asks for its Done channel, that is when it
// waits for something: a commit, or a report of the same decision and tool in flight.
type waitingCtx struct {
	context.Context
	once  sync.Once
	asked chan struct{}
}

func newWaitingCtx(parent context.Context) *waitingCtx {
	return &waitingCtx{Context: parent, asked: make(chan struct{})}
}

func (c *waitingCtx) Done() <-chan struct{} {
	c.once.Do(func() { close(c.asked) })
	return c.Context.Done()
}

type reportResult struct {
	rc  router.Receipt
	err error
}

// A retry that arrives while the first copy is being committed must not be acknowledged before
// that commit succeeds: here it fails, so the retry must record the outcome itself.
func TestRetryDuringAFailingCommitIsNotAcknowledgedEarly(t *testing.T) {
	g := newGatedStore(true)
	r := newRouter(t, g, nil)
	defer r.Close()
	sel, err := r.Select(context.Background(), "shorten a url", router.SelectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tool := sel.Tools[0].ID
	before := reportRecords(t, g.Store)
	g.armed.Store(true)
	first := make(chan error, 1)
	go func() {
		_, err := r.Report(context.Background(), sel.DecisionID, tool, router.Outcome{Executed: true}, -1)
		first <- err
	}()
	<-g.entered // the first copy is in its commit, not durable yet

	ctx := newWaitingCtx(context.Background())
	retry := make(chan reportResult, 1)
	go func() {
		rc, err := r.Report(ctx, sel.DecisionID, tool, router.Outcome{Executed: true}, -1)
		retry <- reportResult{rc, err}
	}()
	var res reportResult
	select {
	case <-ctx.asked: // the retry waits for the first copy's outcome
		close(g.release)
		res = <-retry
	case res = <-retry: // answered while the first copy was still in its commit
		close(g.release)
	}
	if ferr := <-first; ferr == nil {
		t.Fatal("the first copy's commit failed, but its report was acknowledged")
	}
	if res.err != nil || res.rc.Duplicate {
		t.Fatalf("retry after the first copy's failed commit: receipt %+v, error %v; want a new durable report", res.rc, res.err)
	}
	if got := reportRecords(t, g.Store) - before; got != 1 {
		t.Fatalf("%d report records in the log after one acknowledged report, want 1", got)
	}
	rc, err := r.Report(context.Background(), sel.DecisionID, tool, router.Outcome{Executed: true}, -1)
	if err != nil || !rc.Duplicate {
		t.Fatalf("third copy: receipt %+v, error %v; want duplicate", rc, err)
	}
}

// A report whose caller stopped waiting stays queued and is committed; a retry must then be
// answered from that outcome (duplicate, or conflict for another outcome), never recorded twice.
func TestRetryAfterACancelledReportIsRecordedOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		retry    router.Outcome
		conflict bool
	}{
		{"same outcome", router.Outcome{Executed: true}, false},
		{"another outcome", router.Outcome{Executed: false}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGatedStore(false)
			r := newRouter(t, g, nil)
			defer r.Close()
			sel, err := r.Select(context.Background(), "shorten a url", router.SelectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			other, err := r.Select(context.Background(), "shorten a url", router.SelectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			before := reportRecords(t, g.Store)
			// Another report holds the writer in its commit.
			g.armed.Store(true)
			blocker := make(chan error, 1)
			go func() {
				_, err := r.Report(context.Background(), other.DecisionID, other.Tools[0].ID, router.Outcome{Executed: false}, -1)
				blocker <- err
			}()
			<-g.entered

			// The client's report is queued behind it, and its client gives up.
			cancelled, cancel := context.WithCancel(context.Background())
			cancel()
			tool := sel.Tools[0].ID
			if _, err := r.Report(cancelled, sel.DecisionID, tool, router.Outcome{Executed: true}, -1); !errors.Is(err, context.Canceled) {
				t.Fatalf("report with a cancelled context: %v, want context.Canceled", err)
			}
			// The client retries while the first copy is still queued.
			ctx := newWaitingCtx(context.Background())
			retry := make(chan reportResult, 1)
			go func() {
				rc, err := r.Report(ctx, sel.DecisionID, tool, tc.retry, -1)
				retry <- reportResult{rc, err}
			}()
			var res reportResult
			select {
			case <-ctx.asked:
				close(g.release)
				res = <-retry
			case res = <-retry:
				close(g.release)
			}
			if err := <-blocker; err != nil {
				t.Fatal(err)
			}
			if tc.conflict {
				if !errors.Is(res.err, router.ErrConflict) {
					t.Fatalf("retry with another outcome: receipt %+v, error %v; want ErrConflict", res.rc, res.err)
				}
			} else if res.err != nil || !res.rc.Duplicate {
				t.Fatalf("retry: receipt %+v, error %v; want duplicate", res.rc, res.err)
			}
			if err := r.Sync(context.Background()); err != nil { // waits for the queued writes
				t.Fatal(err)
			}
			// The blocker's report and the client's first copy: 2.
			if got := reportRecords(t, g.Store) - before; got != 2 {
				t.Fatalf("%d report records in the log, want 2 (the client's outcome once)", got)
			}
		})
	}
}
