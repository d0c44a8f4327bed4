// Package state keeps the run-time router's durable state behind one small interface: an
// append-only log of opaque records (reports and catalog changes, encoded by pkg/router) and a
// snapshot that covers a prefix of the log. The router rebuilds its state on start from the
// latest snapshot plus the records after it; Append returning nil is the promise that a record
// survives a crash, so the router acknowledges a report only after its Append.
//
// The default backend is an embedded bbolt database (OpenBolt); Memory keeps everything in the
// process (tests, --ephemeral). Other backends (Redis for several replicas) implement the same
// interface and pass the same conformance tests (pkg/state/statetest).
package state

import (
	"context"
	"errors"

	"github.com/rated-dev/rated/internal/diskfull"
)

// Store is the durable state of one router.
type Store interface {
	// Append writes records to the end of the log and returns the sequence number of the last
	// one; sequence numbers start at 1 and grow by one per record, never reused. When Append
	// returns nil every record is on stable storage; on error none of them is in the log.
	Append(ctx context.Context, records [][]byte) (last uint64, err error)
	// Records calls fn, in order, for every record with a sequence number greater than after.
	// rec is only valid during the call. An error from fn stops the walk and is returned.
	Records(ctx context.Context, after uint64, fn func(seq uint64, rec []byte) error) error
	// SaveSnapshot durably stores data as the state after every record up to seq, replacing
	// the previous snapshot; records up to seq may then be dropped.
	SaveSnapshot(ctx context.Context, seq uint64, data []byte) error
	// LoadSnapshot returns the latest snapshot; ok is false when none was saved.
	LoadSnapshot(ctx context.Context) (seq uint64, data []byte, ok bool, err error)
	// Close releases the store; later calls fail with ErrClosed.
	Close() error
}

// ErrFull is wrapped by errors caused by a full disk, an exhausted quota or a file-size limit:
// the write was refused as a whole and the store is unchanged, so it can be retried once space
// is freed. Servers answer it with 503. It is diskfull.ErrFull, shared with the decision log.
var ErrFull = diskfull.ErrFull

// ErrUnavailable is wrapped by errors of a store that could not be reached (a network store:
// connection refused, reset or timed out, or the server still loading its data): nothing or
// everything of the write may have happened, and the same call may succeed later. Servers answer
// it with 503.
var ErrUnavailable = errors.New("state store unavailable")

// ErrClosed is returned by a closed store.
var ErrClosed = errors.New("state store is closed")

// ErrSequence is wrapped when a snapshot names a sequence number beyond the log.
var ErrSequence = errors.New("snapshot sequence beyond the log")

// classify wraps err with ErrFull when the kernel refused a write for lack of space.
func classify(where string, err error) error { return diskfull.Classify(where, err) }
