package outdir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Lock is an exclusive hold on an output path, released when the process ends however it ends
// (an flock on Unix), so a killed run never leaves a stale lock.
type Lock struct {
	f    *os.File
	path string
}

// lockPath is the lock file of target: .NAME.lock beside it (not inside, since the set replaces
// the directory).
func lockPath(target string) string {
	return filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+".lock")
}

// Acquire takes the lock of target (a directory or file path) for command, or refuses when
// another process holds it, naming that process.
func Acquire(target, command string) (*Lock, error) {
	p := lockPath(target)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", target, err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", target, err)
	}
	if !held {
		holder, _ := os.ReadFile(p)
		f.Close()
		who := strings.TrimSpace(string(holder))
		if who == "" {
			who = "another process"
		}
		return nil, fmt.Errorf("%s is in use by another rated run (%s): wait for it to finish or choose another output", target, who)
	}
	f.Truncate(0)
	fmt.Fprintf(f, "rated %s%s\n", command, holderSuffix())
	return &Lock{f: f, path: p}, nil
}

// holderSuffix ends the text a lock file holds, naming this process.
func holderSuffix() string { return fmt.Sprintf(", pid %d", os.Getpid()) }

// heldHere reports whether this process wrote target's lock file (it holds the lock while it
// has not released it).
func heldHere(target string) bool {
	holder, err := os.ReadFile(lockPath(target))
	return err == nil && strings.HasSuffix(strings.TrimSpace(string(holder)), holderSuffix())
}

// Release gives the lock up. The lock file stays: removing it could let two processes lock
// different files of the same name.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	unlock(l.f)
	l.f.Close()
	l.f = nil
}
