package state

import (
	"context"
	"errors"
	"time"
)

// Shared is a Store that several processes use at once: the replicas of `rated serve` on one
// Redis. Each replica follows the log (Records after the last record it applied) to learn what
// the others appended. Beyond Store it makes appends conditional on claims, so that a report
// retried on another replica, or a tool two replicas add at once, is appended once; and it keeps
// short-lived blobs (the pending decisions) that every replica can read.
//
// SaveSnapshot on a shared store ignores a snapshot older than the stored one (a replica that
// lags behind another one's snapshot must not replace it), and a replica that finds records
// missing after the sequence number it applied (they were covered by another replica's snapshot
// and dropped; Records says so with ErrTrimmed, or the next record it passes is not the next
// number) reloads from the snapshot.
type Shared interface {
	Store
	// AppendBatches appends, in one atomic step, the records of every batch whose claims are
	// all free, and takes those claims. A batch whose claims are all held already with the
	// same values is a duplicate, one with any other mix a conflict: neither appends anything.
	// last is the log's last sequence number after the step; the records appended are the last
	// ones of the log, contiguous, in batch order. On error nothing was appended, or, when the
	// connection broke after the server ran the step, everything was: a follower sees which.
	AppendBatches(ctx context.Context, batches []Batch) (last uint64, status []ClaimStatus, err error)
	// PutBlobs stores each blob's data under its key for ttl (> 0), replacing any value, in one
	// round trip.
	PutBlobs(ctx context.Context, blobs []Blob, ttl time.Duration) error
	// GetBlob returns the value stored under key; ok is false when there is none (or it expired).
	GetBlob(ctx context.Context, key string) (data []byte, ok bool, err error)
}

// ErrTrimmed is returned by a shared store's Records when the records after the given sequence
// number were dropped under a snapshot (another replica's): the reader must reload the snapshot.
var ErrTrimmed = errors.New("records were dropped under a newer snapshot")

// Blob is a short-lived value of a shared store.
type Blob struct {
	Key  string
	Data []byte
}

// Batch is one group of records appended whole or not at all, under its claims.
type Batch struct {
	Records [][]byte
	Claims  []Claim
}

// Claim names one field of a shared set and the value a batch holds it with: the first batch to
// claim a field takes it; later batches claiming it with the same value are duplicates of that
// one, with another value conflicts. TTL > 0 makes the set expire that long after its last
// claim (a decision's reports); 0 keeps it.
type Claim struct {
	Set, Field string
	Value      []byte
	TTL        time.Duration
}

// ClaimStatus is the fate of one batch of AppendBatches.
type ClaimStatus int

// The fates of a batch.
const (
	// Appended: the claims were free (or there were none); the records are in the log.
	Appended ClaimStatus = iota
	// Duplicate: every claim was held with the same value; nothing was appended.
	Duplicate
	// Conflict: some claim was held with another value (or only some were held); nothing was
	// appended.
	Conflict
)

// String is the status's lower-case name, as logs and metrics print it.
func (s ClaimStatus) String() string {
	switch s {
	case Appended:
		return "appended"
	case Duplicate:
		return "duplicate"
	case Conflict:
		return "conflict"
	}
	return "unknown"
}
