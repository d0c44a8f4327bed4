// Package statetest is the conformance suite of state.Store: every backend (the embedded bbolt
// store, the in-memory one, a Redis backend) runs it from its own tests.
package statetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/rated-dev/rated/pkg/state"
)

// Factory opens stores for the suite.
type Factory struct {
	// Open returns a new, empty store.
	Open func(t *testing.T) state.Store
	// Reopen closes s and opens the same store again; nil for a store that is not durable.
	Reopen func(t *testing.T, s state.Store) state.Store
}

// Run runs every check of the Store contract.
func Run(t *testing.T, f Factory) {
	t.Run("sequence", func(t *testing.T) { testSequence(t, f) })
	t.Run("snapshot", func(t *testing.T) { testSnapshot(t, f) })
	t.Run("concurrent", func(t *testing.T) { testConcurrent(t, f) })
	t.Run("errors", func(t *testing.T) { testErrors(t, f) })
	if f.Reopen != nil {
		t.Run("reopen", func(t *testing.T) { testReopen(t, f) })
	}
}

func rec(i int) []byte { return []byte(fmt.Sprintf("record-%d", i)) }

// collect returns the records after seq as "seq:payload" strings.
func collect(t *testing.T, s state.Store, after uint64) []string {
	t.Helper()
	var out []string
	err := s.Records(context.Background(), after, func(seq uint64, r []byte) error {
		out = append(out, fmt.Sprintf("%d:%s", seq, r))
		return nil
	})
	if err != nil {
		t.Fatalf("Records(%d): %v", after, err)
	}
	return out
}

func expect(t *testing.T, got []string, want ...string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records %v, want %v", got, want)
	}
}

func mustAppend(t *testing.T, s state.Store, want uint64, recs ...[]byte) {
	t.Helper()
	last, err := s.Append(context.Background(), recs)
	if err != nil {
		t.Fatal(err)
	}
	if last != want {
		t.Fatalf("Append of %d records returned last %d, want %d", len(recs), last, want)
	}
}

func testSequence(t *testing.T, f Factory) {
	s := f.Open(t)
	defer s.Close()
	mustAppend(t, s, 3, rec(1), rec(2), rec(3))
	mustAppend(t, s, 3) // nothing appended: the last sequence number
	mustAppend(t, s, 5, rec(4), rec(5))
	expect(t, collect(t, s, 0), "1:record-1", "2:record-2", "3:record-3", "4:record-4", "5:record-5")
	expect(t, collect(t, s, 3), "4:record-4", "5:record-5")
	expect(t, collect(t, s, 5))
	// A record is stored, not aliased.
	buf := []byte("mutable")
	mustAppend(t, s, 6, buf)
	copy(buf, "XXXXXXX")
	expect(t, collect(t, s, 5), "6:mutable")
}

func testSnapshot(t *testing.T, f Factory) {
	s := f.Open(t)
	defer s.Close()
	ctx := context.Background()
	if _, _, ok, err := s.LoadSnapshot(ctx); ok || err != nil {
		t.Fatalf("empty store: snapshot ok=%v err=%v", ok, err)
	}
	mustAppend(t, s, 5, rec(1), rec(2), rec(3), rec(4), rec(5))
	if err := s.SaveSnapshot(ctx, 3, []byte("snap-3")); err != nil {
		t.Fatal(err)
	}
	seq, data, ok, err := s.LoadSnapshot(ctx)
	if err != nil || !ok || seq != 3 || string(data) != "snap-3" {
		t.Fatalf("LoadSnapshot = %d %q %v %v", seq, data, ok, err)
	}
	expect(t, collect(t, s, 3), "4:record-4", "5:record-5")
	mustAppend(t, s, 6, rec(6)) // sequence numbers are never reused
	if err := s.SaveSnapshot(ctx, 9, []byte("x")); !errors.Is(err, state.ErrSequence) {
		t.Fatalf("snapshot beyond the log: %v, want ErrSequence", err)
	}
	if err := s.SaveSnapshot(ctx, 6, []byte("snap-6")); err != nil {
		t.Fatal(err)
	}
	expect(t, collect(t, s, 6))
	if seq, data, _, _ := s.LoadSnapshot(ctx); seq != 6 || string(data) != "snap-6" {
		t.Fatalf("second snapshot = %d %q", seq, data)
	}
}

func testConcurrent(t *testing.T, f Factory) {
	s := f.Open(t)
	defer s.Close()
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := s.Append(context.Background(), [][]byte{[]byte(fmt.Sprintf("w%d-%d", w, i)), []byte("pair")}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var seqs []uint64
	var payloads [][]byte
	err := s.Records(context.Background(), 0, func(seq uint64, r []byte) error {
		seqs = append(seqs, seq)
		payloads = append(payloads, bytes.Clone(r))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seqs) != 2*writers*each {
		t.Fatalf("%d records, want %d", len(seqs), 2*writers*each)
	}
	for i, seq := range seqs {
		if seq != uint64(i+1) {
			t.Fatalf("record %d has sequence %d: not contiguous", i, seq)
		}
		// Each Append's two records are adjacent: an Append is atomic.
		if i%2 == 1 && string(payloads[i]) != "pair" {
			t.Fatalf("record %d is %q: an Append was interleaved", i, payloads[i])
		}
	}
}

func testErrors(t *testing.T, f Factory) {
	s := f.Open(t)
	mustAppend(t, s, 2, rec(1), rec(2))
	stop := errors.New("stop")
	n := 0
	err := s.Records(context.Background(), 0, func(uint64, []byte) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("Records with a failing fn: err %v after %d calls", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Append(ctx, [][]byte{rec(3)}); err == nil {
		t.Fatal("Append with a cancelled context succeeded")
	}
	expect(t, collect(t, s, 0), "1:record-1", "2:record-2")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), [][]byte{rec(3)}); !errors.Is(err, state.ErrClosed) {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
}

func testReopen(t *testing.T, f Factory) {
	s := f.Open(t)
	ctx := context.Background()
	mustAppend(t, s, 4, rec(1), rec(2), rec(3), rec(4))
	if err := s.SaveSnapshot(ctx, 2, []byte("snap-2")); err != nil {
		t.Fatal(err)
	}
	s = f.Reopen(t, s)
	defer s.Close()
	seq, data, ok, err := s.LoadSnapshot(ctx)
	if err != nil || !ok || seq != 2 || string(data) != "snap-2" {
		t.Fatalf("after reopen: snapshot %d %q %v %v", seq, data, ok, err)
	}
	expect(t, collect(t, s, 2), "3:record-3", "4:record-4")
	mustAppend(t, s, 5, rec(5))
}
