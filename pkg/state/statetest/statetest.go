// Package statetest is the conformance suite of state.Store: every backend (the embedded bbolt
// store, the in-memory one, a Redis backend) runs it from its own tests.
package statetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

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
	parallel(t, writers, func(w int) error {
		for i := range each {
			if _, err := s.Append(context.Background(), [][]byte{[]byte(fmt.Sprintf("w%d-%d", w, i)), []byte("pair")}); err != nil {
				return err
			}
		}
		return nil
	})
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

// parallel runs fn(0..n-1) in n goroutines and fails t with their errors.
func parallel(t *testing.T, n int, fn func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(i); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
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

// SharedFactory opens shared stores for RunShared.
type SharedFactory struct {
	// Open returns two handles (two processes' views) on one new, empty store.
	Open func(t *testing.T) (a, b state.Shared)
}

// RunShared runs the checks of the state.Shared contract.
func RunShared(t *testing.T, f SharedFactory) {
	t.Run("claims", func(t *testing.T) { testClaims(t, f) })
	t.Run("two-writers", func(t *testing.T) { testTwoWriters(t, f) })
	t.Run("older-snapshot", func(t *testing.T) { testOlderSnapshot(t, f) })
	t.Run("blobs", func(t *testing.T) { testBlobs(t, f) })
}

func claim(set, field, value string) state.Claim {
	return state.Claim{Set: set, Field: field, Value: []byte(value)}
}

func mustBatches(t *testing.T, s state.Shared, wantLast uint64, want []state.ClaimStatus, batches ...state.Batch) {
	t.Helper()
	last, st, err := s.AppendBatches(context.Background(), batches)
	if err != nil {
		t.Fatal(err)
	}
	if last != wantLast || fmt.Sprint(st) != fmt.Sprint(want) {
		t.Fatalf("AppendBatches = last %d %v, want %d %v", last, st, wantLast, want)
	}
}

func testClaims(t *testing.T, f SharedFactory) {
	a, b := f.Open(t)
	defer a.Close()
	defer b.Close()
	ok, dup, conflict := state.Appended, state.Duplicate, state.Conflict
	// A batch without claims, then claimed ones; a duplicate and a conflict append nothing.
	mustBatches(t, a, 3, []state.ClaimStatus{ok, ok},
		state.Batch{Records: [][]byte{rec(1)}},
		state.Batch{Records: [][]byte{rec(2), rec(3)}, Claims: []state.Claim{claim("d1", "0", "x"), claim("d1", "1", "y")}})
	mustBatches(t, b, 3, []state.ClaimStatus{dup}, state.Batch{Records: [][]byte{rec(99)}, Claims: []state.Claim{claim("d1", "0", "x"), claim("d1", "1", "y")}})
	mustBatches(t, b, 3, []state.ClaimStatus{conflict}, state.Batch{Records: [][]byte{rec(99)}, Claims: []state.Claim{claim("d1", "0", "z")}})
	// Part held (same value), part free: a conflict, and the free claim is not taken.
	mustBatches(t, b, 3, []state.ClaimStatus{conflict}, state.Batch{Records: [][]byte{rec(99)}, Claims: []state.Claim{claim("d1", "0", "x"), claim("d1", "2", "w")}})
	// The same field in two batches of one call: the second is the duplicate of the first.
	mustBatches(t, b, 5, []state.ClaimStatus{ok, dup, ok},
		state.Batch{Records: [][]byte{rec(4)}, Claims: []state.Claim{claim("d1", "2", "w")}},
		state.Batch{Records: [][]byte{rec(98)}, Claims: []state.Claim{claim("d1", "2", "w")}},
		state.Batch{Records: [][]byte{rec(5)}, Claims: []state.Claim{claim("d2", "2", "w")}})
	expect(t, collect(t, a, 0), "1:record-1", "2:record-2", "3:record-3", "4:record-4", "5:record-5")
	// A set with a TTL is forgotten once it expires.
	short := state.Claim{Set: "d3", Field: "0", Value: []byte("x"), TTL: 50 * time.Millisecond}
	mustBatches(t, a, 6, []state.ClaimStatus{ok}, state.Batch{Records: [][]byte{rec(6)}, Claims: []state.Claim{short}})
	time.Sleep(300 * time.Millisecond)
	short.Value = []byte("other")
	mustBatches(t, b, 7, []state.ClaimStatus{ok}, state.Batch{Records: [][]byte{rec(7)}, Claims: []state.Claim{short}})
}

// testTwoWriters: two handles append concurrently, each claiming the same fields as the other;
// every field is appended once and the log is contiguous and the same from both sides.
func testTwoWriters(t *testing.T, f SharedFactory) {
	a, b := f.Open(t)
	defer a.Close()
	defer b.Close()
	const fields = 200
	handles := []state.Shared{a, b}
	parallel(t, len(handles), func(h int) error {
		for i := 0; i < fields; i += 4 {
			var batches []state.Batch
			for j := i; j < i+4; j++ {
				id := fmt.Sprintf("f%d", j)
				batches = append(batches, state.Batch{Records: [][]byte{[]byte(id), []byte(id + "-pair")}, Claims: []state.Claim{claim("two", id, "v")}})
			}
			if _, _, err := handles[h].AppendBatches(context.Background(), batches); err != nil {
				return err
			}
		}
		return nil
	})
	fromA, fromB := collect(t, a, 0), collect(t, b, 0)
	if fmt.Sprint(fromA) != fmt.Sprint(fromB) {
		t.Fatal("the two handles read different logs")
	}
	if len(fromA) != 2*fields {
		t.Fatalf("%d records, want %d: a claimed field was appended twice or lost", len(fromA), 2*fields)
	}
	seen := map[string]bool{}
	for i, r := range fromA {
		seq, payload, _ := strings.Cut(r, ":")
		if seq != fmt.Sprint(i+1) {
			t.Fatalf("record %d has sequence %s", i, seq)
		}
		if i%2 == 1 {
			if payload != strings.TrimSuffix(payload, "-pair")+"-pair" {
				t.Fatalf("record %d is %q: a batch was split", i, payload)
			}
			continue
		}
		if seen[payload] {
			t.Fatalf("field %s appended twice", payload)
		}
		seen[payload] = true
	}
}

func testOlderSnapshot(t *testing.T, f SharedFactory) {
	a, b := f.Open(t)
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	mustAppend(t, a, 5, rec(1), rec(2), rec(3), rec(4), rec(5))
	if err := a.SaveSnapshot(ctx, 4, []byte("snap-4")); err != nil {
		t.Fatal(err)
	}
	if err := b.SaveSnapshot(ctx, 2, []byte("snap-2")); err != nil {
		t.Fatalf("an older snapshot must be ignored, not refused: %v", err)
	}
	if seq, data, _, _ := b.LoadSnapshot(ctx); seq != 4 || string(data) != "snap-4" {
		t.Fatalf("after an older snapshot: %d %q, want the newer one kept", seq, data)
	}
	expect(t, collect(t, b, 4), "5:record-5")
}

func testBlobs(t *testing.T, f SharedFactory) {
	a, b := f.Open(t)
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	if _, ok, err := b.GetBlob(ctx, "missing"); ok || err != nil {
		t.Fatalf("missing blob: ok %v err %v", ok, err)
	}
	if err := a.PutBlobs(ctx, []state.Blob{{Key: "k", Data: []byte("value\x00bytes")}, {Key: "k2", Data: []byte("two")}}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := b.GetBlob(ctx, "k"); !ok || err != nil || string(v) != "value\x00bytes" {
		t.Fatalf("GetBlob = %q %v %v", v, ok, err)
	}
	if v, ok, err := b.GetBlob(ctx, "k2"); !ok || err != nil || string(v) != "two" {
		t.Fatalf("GetBlob = %q %v %v", v, ok, err)
	}
	if err := a.PutBlobs(ctx, []state.Blob{{Key: "short", Data: []byte("x")}}, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, ok, _ := b.GetBlob(ctx, "short"); ok {
		t.Fatal("a blob outlived its TTL")
	}
}
