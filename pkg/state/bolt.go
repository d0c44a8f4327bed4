package state

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Why bbolt: the state is a key-value log plus one snapshot, which a B+tree with ordered keys
// stores directly (no SQL layer or schema); bbolt is pure Go (no cgo, one static binary), a
// single file, and crash-safe by construction: copy-on-write pages and two checksummed meta
// pages, so a commit torn by kill -9 or power loss is invisible and the previous one is read.
// A commit is one fsync of its pages and one of its meta page; the router batches many reports
// into one Append, which is the group commit that makes thousands of durable reports per second
// possible. A pure-Go SQLite (modernc.org/sqlite) would give the same guarantees with WAL mode,
// but through a transpiled C engine several times larger, for queries this store never makes.

// BoltFile is the database file inside a state directory.
const BoltFile = "state.db"

var (
	bucketLog  = []byte("log")
	bucketMeta = []byte("meta")
	keySnap    = []byte("snapshot")
	keySnapSeq = []byte("snapshot_seq")
	keyFormat  = []byte("format")
)

// boltFormat is written on creation and checked on open.
const boltFormat = "rated-state/1"

// BoltOptions configures OpenBolt.
type BoltOptions struct {
	// LockTimeout bounds the wait for the file lock another process holds (default 1 s).
	LockTimeout time.Duration
}

// Bolt is the embedded Store: dir/state.db, a bbolt database with a "log" bucket keyed by
// big-endian sequence numbers and a "meta" bucket holding the snapshot. One process opens a
// state directory at a time (bbolt's file lock).
type Bolt struct {
	path string
	mu   sync.RWMutex // guards db against Close during use
	db   *bolt.DB

	// The records a snapshot covers are deleted in the background, a chunk per transaction, so
	// that a snapshot never holds the single writer for long.
	prune     chan struct{}
	pruneStop chan struct{}
	pruneDone chan struct{}
}

// pruneChunk is the number of covered records deleted per transaction.
const pruneChunk = 1024

var _ Store = (*Bolt)(nil)

// OpenBolt opens (creating when needed) the store in dir.
func OpenBolt(dir string, opts BoltOptions) (*Bolt, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = time.Second
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, classify("state directory "+dir, err)
	}
	path := filepath.Join(dir, BoltFile)
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout: opts.LockTimeout,
		// The freelist is rebuilt from the pages on open instead of being written by every
		// commit: fewer pages per commit, which is what bounds durable reports per second.
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("state %s is locked by another process (one rated serve per state directory)", path)
	}
	if err != nil {
		return nil, classify("open state "+path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketLog); err != nil {
			return err
		}
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		switch f := meta.Get(keyFormat); {
		case f == nil:
			return meta.Put(keyFormat, []byte(boltFormat))
		case string(f) != boltFormat:
			return fmt.Errorf("holds format %q, this build reads %q", f, boltFormat)
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, classify("state "+path, err)
	}
	b := &Bolt{path: path, db: db, prune: make(chan struct{}, 1), pruneStop: make(chan struct{}), pruneDone: make(chan struct{})}
	go b.pruner()
	b.prune <- struct{}{} // records a crash left behind a snapshot
	return b, nil
}

// pruner deletes the records covered by the snapshot, pruneChunk per transaction, whenever
// SaveSnapshot signals.
func (b *Bolt) pruner() {
	defer close(b.pruneDone)
	for {
		select {
		case <-b.pruneStop:
			return
		case <-b.prune:
		}
		for {
			select {
			case <-b.pruneStop:
				return
			default:
			}
			more, err := b.pruneOnce()
			if err != nil || !more {
				break // a failure (disk full) is retried at the next snapshot
			}
		}
	}
}

// pruneOnce deletes up to pruneChunk covered records and reports whether more remain.
func (b *Bolt) pruneOnce() (more bool, err error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.db == nil {
		return false, ErrClosed
	}
	// Only write when something is covered: an empty commit would still be a transaction.
	covered := false
	b.db.View(func(tx *bolt.Tx) error {
		s := tx.Bucket(bucketMeta).Get(keySnapSeq)
		k, _ := tx.Bucket(bucketLog).Cursor().First()
		covered = len(s) == 8 && k != nil && bytes.Compare(k, s) <= 0
		return nil
	})
	if !covered {
		return false, nil
	}
	err = b.db.Update(func(tx *bolt.Tx) error {
		s := tx.Bucket(bucketMeta).Get(keySnapSeq)
		if len(s) != 8 {
			return nil
		}
		end := s
		c := tx.Bucket(bucketLog).Cursor()
		n := 0
		for k, _ := c.First(); k != nil && bytes.Compare(k, end) <= 0; k, _ = c.First() {
			if n == pruneChunk {
				more = true
				return nil
			}
			if err := c.Delete(); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return more, err
}

// Path is the database file.
func (b *Bolt) Path() string { return b.path }

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// Append implements Store: one bbolt transaction, one commit (fsync) for all records.
func (b *Bolt) Append(ctx context.Context, records [][]byte) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.db == nil {
		return 0, ErrClosed
	}
	var last uint64
	err := b.db.Update(func(tx *bolt.Tx) error {
		log := tx.Bucket(bucketLog)
		log.FillPercent = 1 // keys only ever grow: pack pages full
		for _, rec := range records {
			seq, err := log.NextSequence()
			if err != nil {
				return err
			}
			if err := log.Put(seqKey(seq), rec); err != nil {
				return err
			}
			last = seq
		}
		if len(records) == 0 {
			last = log.Sequence()
		}
		return nil
	})
	if err != nil {
		return 0, classify("append to state "+b.path, err)
	}
	return last, nil
}

// Records implements Store.
func (b *Bolt) Records(ctx context.Context, after uint64, fn func(seq uint64, rec []byte) error) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.db == nil {
		return ErrClosed
	}
	return b.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketLog).Cursor()
		for k, v := c.Seek(seqKey(after + 1)); k != nil; k, v = c.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			if len(k) != 8 {
				return fmt.Errorf("state %s: log key %x is not a sequence number", b.path, k)
			}
			if err := fn(binary.BigEndian.Uint64(k), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// SaveSnapshot implements Store: one transaction writes the snapshot and its sequence number;
// the records it covers are then deleted in the background (Records callers pass the
// snapshot's sequence number, so they never see them).
func (b *Bolt) SaveSnapshot(ctx context.Context, seq uint64, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.db == nil {
		return ErrClosed
	}
	err := b.db.Update(func(tx *bolt.Tx) error {
		log := tx.Bucket(bucketLog)
		if seq > log.Sequence() {
			return fmt.Errorf("%w: snapshot at %d, log ends at %d", ErrSequence, seq, log.Sequence())
		}
		meta := tx.Bucket(bucketMeta)
		if err := meta.Put(keySnap, data); err != nil {
			return err
		}
		return meta.Put(keySnapSeq, seqKey(seq))
	})
	if err != nil {
		return classify("snapshot to state "+b.path, err)
	}
	select {
	case b.prune <- struct{}{}:
	default: // a prune is pending already
	}
	return nil
}

// LoadSnapshot implements Store.
func (b *Bolt) LoadSnapshot(ctx context.Context) (seq uint64, data []byte, ok bool, err error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.db == nil {
		return 0, nil, false, ErrClosed
	}
	err = b.db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		s, d := meta.Get(keySnapSeq), meta.Get(keySnap)
		if s == nil || d == nil {
			return nil
		}
		if len(s) != 8 {
			return fmt.Errorf("state %s: snapshot sequence %x is corrupt", b.path, s)
		}
		seq, data, ok = binary.BigEndian.Uint64(s), bytes.Clone(d), true
		return nil
	})
	return seq, data, ok, err
}

// Check verifies the database's page structure (bbolt's consistency check).
func (b *Bolt) Check() error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.db == nil {
		return ErrClosed
	}
	return b.db.View(func(tx *bolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
}

// Close implements Store.
func (b *Bolt) Close() error {
	select {
	case <-b.pruneStop:
	default:
		close(b.pruneStop)
	}
	<-b.pruneDone
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.db == nil {
		return nil
	}
	err := b.db.Close()
	b.db = nil
	return err
}
