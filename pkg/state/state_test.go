package state_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/testfs"
	"github.com/rated-dev/rated/pkg/state"
	"github.com/rated-dev/rated/pkg/state/statetest"
)

func TestMemoryConformance(t *testing.T) {
	statetest.Run(t, statetest.Factory{Open: func(*testing.T) state.Store { return state.NewMemory() }})
}

func openBolt(t *testing.T, dir string) *state.Bolt {
	t.Helper()
	b, err := state.OpenBolt(dir, state.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBoltConformance(t *testing.T) {
	statetest.Run(t, statetest.Factory{
		Open: func(t *testing.T) state.Store { return openBolt(t, t.TempDir()) },
		Reopen: func(t *testing.T, s state.Store) state.Store {
			dir := filepath.Dir(s.(*state.Bolt).Path())
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			return openBolt(t, dir)
		},
	})
}

func TestBoltOneProcessPerDirectory(t *testing.T) {
	dir := t.TempDir()
	b := openBolt(t, dir)
	defer b.Close()
	_, err := state.OpenBolt(dir, state.BoltOptions{LockTimeout: 50e6})
	if err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("second open: %v", err)
	}
}

func TestBoltRefusesAnotherFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, state.BoltFile), []byte(strings.Repeat("not a database ", 400)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := state.OpenBolt(dir, state.BoltOptions{}); err == nil || !strings.Contains(err.Error(), state.BoltFile) {
		t.Fatalf("open of a non-database: %v", err)
	}
}

// TestBoltTornCommitIsInvisible tears the last commit the way a crash during its meta-page write
// would (the newer of bbolt's two meta pages fails its checksum) and checks that the store opens
// with the previous commit's content, consistent.
func TestBoltTornCommitIsInvisible(t *testing.T) {
	dir := t.TempDir()
	b := openBolt(t, dir)
	ctx := context.Background()
	if _, err := b.Append(ctx, [][]byte{[]byte("acknowledged")}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append(ctx, [][]byte{[]byte("torn")}); err != nil {
		t.Fatal(err)
	}
	b.Close()
	path := filepath.Join(dir, state.BoltFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Meta pages: page 0 at offset 0, page 1 at offset pageSize. The page header is 16 bytes;
	// meta = magic, version, page size, flags (4 bytes each), root bucket (16), freelist (8),
	// high-water page id (8), txid (8), checksum (8).
	pageSize := int(binary.LittleEndian.Uint32(raw[16+8:]))
	txid := func(off int) uint64 { return binary.LittleEndian.Uint64(raw[off+16+16+16+8+8:]) }
	newest := 0
	if txid(pageSize) > txid(0) {
		newest = pageSize
	}
	raw[newest+16+16] ^= 0xff // the root bucket's page id: the checksum no longer matches
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	b = openBolt(t, dir)
	defer b.Close()
	if err := b.Check(); err != nil {
		t.Fatalf("consistency check after a torn commit: %v", err)
	}
	var got []string
	b.Records(ctx, 0, func(seq uint64, r []byte) error { got = append(got, fmt.Sprintf("%d:%s", seq, r)); return nil })
	if fmt.Sprint(got) != "[1:acknowledged]" {
		t.Fatalf("records after a torn commit: %v, want only the committed one", got)
	}
	if last, err := b.Append(ctx, [][]byte{[]byte("after")}); err != nil || last != 2 {
		t.Fatalf("append after recovery: last %d, err %v", last, err)
	}
}

// TestBoltDiskFull fills a real (tmpfs) file system: Append fails with ErrFull and changes
// nothing, the store stays usable, and after space is freed it appends again; a reopen finds
// exactly the acknowledged records.
func TestBoltDiskFull(t *testing.T) {
	dir := testfs.Tmpfs(t, 4<<20)
	b := openBolt(t, filepath.Join(dir, "state"))
	ctx := context.Background()
	filler := testfs.Fill(t, dir, 256<<10)
	big := make([]byte, 32<<10)
	var acked []uint64
	var fullErr error
	for i := 0; i < 200 && fullErr == nil; i++ {
		last, err := b.Append(ctx, [][]byte{big, big})
		if err != nil {
			fullErr = err
			break
		}
		acked = append(acked, last-1, last)
	}
	if !errors.Is(fullErr, state.ErrFull) {
		t.Fatalf("filling the disk: %v, want ErrFull", fullErr)
	}
	if !strings.Contains(fullErr.Error(), "no space left on device") || !strings.Contains(fullErr.Error(), state.BoltFile) {
		t.Fatalf("error does not say what and where: %v", fullErr)
	}
	if err := b.SaveSnapshot(ctx, 0, make([]byte, 1<<20)); !errors.Is(err, state.ErrFull) {
		t.Fatalf("snapshot on a full disk: %v, want ErrFull", err)
	}
	os.Remove(filler)
	last, err := b.Append(ctx, [][]byte{[]byte("after")})
	if err != nil {
		t.Fatalf("append after freeing space: %v", err)
	}
	acked = append(acked, last)
	b.Close()
	b = openBolt(t, filepath.Join(dir, "state"))
	defer b.Close()
	if err := b.Check(); err != nil {
		t.Fatalf("consistency check after disk full: %v", err)
	}
	var seqs []uint64
	b.Records(ctx, 0, func(seq uint64, _ []byte) error { seqs = append(seqs, seq); return nil })
	if fmt.Sprint(seqs) != fmt.Sprint(acked) {
		t.Fatalf("records after disk full: %v, want the acknowledged %v", seqs, acked)
	}
}

// TestBoltPrunesCoveredRecords: the records a snapshot covers disappear in the background,
// also after a restart interrupted the pruning.
func TestBoltPrunesCoveredRecords(t *testing.T) {
	dir := t.TempDir()
	b := openBolt(t, dir)
	ctx := context.Background()
	recs := make([][]byte, 3000)
	for i := range recs {
		recs[i] = []byte("r")
	}
	b.Append(ctx, recs)
	if err := b.SaveSnapshot(ctx, 2500, []byte("s")); err != nil {
		t.Fatal(err)
	}
	b.Close() // may interrupt the pruning
	b = openBolt(t, dir)
	defer b.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var first uint64
		n := 0
		b.Records(ctx, 0, func(seq uint64, _ []byte) error {
			if n == 0 {
				first = seq
			}
			n++
			return nil
		})
		if first == 2501 && n == 500 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s the log still starts at %d with %d records", first, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
