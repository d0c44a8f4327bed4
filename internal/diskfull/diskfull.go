// Package diskfull recognises writes the kernel refused for lack of space (a full disk, an
// exhausted quota, a file-size limit), so every durable writer of rated reports them the same
// way and servers can answer them with 503 rather than 500.
package diskfull

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrFull is wrapped by every error caused by lack of space.
var ErrFull = errors.New("storage is full")

// Classify returns nil for nil, err wrapped with ErrFull when it is ENOSPC, EDQUOT or EFBIG,
// and err with where prefixed otherwise.
func Classify(where string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EFBIG) {
		return fmt.Errorf("%w: %s: %w", ErrFull, where, err)
	}
	return fmt.Errorf("%s: %w", where, err)
}
