package state

import (
	"bytes"
	"context"
	"fmt"
	"sync"
)

// Memory is a Store that keeps everything in the process: nothing survives the process, so it
// serves tests and `rated serve --ephemeral`. It is safe for concurrent use.
type Memory struct {
	mu      sync.Mutex
	closed  bool
	next    uint64 // last sequence number handed out
	seqs    []uint64
	recs    [][]byte
	snap    []byte
	snapSeq uint64
	hasSnap bool
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{} }

// Append implements Store.
func (m *Memory) Append(ctx context.Context, records [][]byte) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0, ErrClosed
	}
	for _, r := range records {
		m.next++
		m.seqs = append(m.seqs, m.next)
		m.recs = append(m.recs, bytes.Clone(r))
	}
	return m.next, nil
}

// Records implements Store.
func (m *Memory) Records(ctx context.Context, after uint64, fn func(seq uint64, rec []byte) error) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	seqs, recs := append([]uint64(nil), m.seqs...), append([][]byte(nil), m.recs...)
	m.mu.Unlock()
	for i, s := range seqs {
		if s <= after {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(s, recs[i]); err != nil {
			return err
		}
	}
	return nil
}

// SaveSnapshot implements Store.
func (m *Memory) SaveSnapshot(ctx context.Context, seq uint64, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if seq > m.next {
		return fmt.Errorf("%w: snapshot at %d, log ends at %d", ErrSequence, seq, m.next)
	}
	m.snap, m.snapSeq, m.hasSnap = bytes.Clone(data), seq, true
	i := 0
	for i < len(m.seqs) && m.seqs[i] <= seq {
		i++
	}
	m.seqs, m.recs = append([]uint64(nil), m.seqs[i:]...), append([][]byte(nil), m.recs[i:]...)
	return nil
}

// LoadSnapshot implements Store.
func (m *Memory) LoadSnapshot(ctx context.Context) (uint64, []byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0, nil, false, ErrClosed
	}
	return m.snapSeq, bytes.Clone(m.snap), m.hasSnap, nil
}

// Close implements Store.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}
