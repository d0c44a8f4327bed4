package outdir

import (
	"errors"
	"fmt"
	"io/fs"
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
	for try := 0; ; try++ {
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
		// Release removes the file: a lock taken on a file that its holder removed meanwhile
		// (opened before the removal) guards nothing, so it is taken again on the file there now.
		if same, err := lockedFileIsCurrent(f, p); err != nil || !same {
			unlock(f)
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("lock %s: %w", target, err)
			}
			if try == 10 {
				return nil, fmt.Errorf("lock %s: its lock file kept being replaced", target)
			}
			continue
		}
		f.Truncate(0)
		fmt.Fprintf(f, "rated %s%s\n", command, holderSuffix())
		return &Lock{f: f, path: p}, nil
	}
}

// lockedFileIsCurrent reports whether the open file f is still the file at p (not removed or
// replaced since it was opened).
func lockedFileIsCurrent(f *os.File, p string) (bool, error) {
	held, err := f.Stat()
	if err != nil {
		return false, err
	}
	now, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(held, now), nil
}

// holderSuffix ends the text a lock file holds, naming this process.
func holderSuffix() string { return fmt.Sprintf(", pid %d", os.Getpid()) }

// heldHere reports whether this process wrote target's lock file (it holds the lock while it
// has not released it).
func heldHere(target string) bool {
	holder, err := os.ReadFile(lockPath(target))
	return err == nil && strings.HasSuffix(strings.TrimSpace(string(holder)), holderSuffix())
}

// Release gives the lock up and removes the lock file (while still holding it), so none is
// left beside the output; Acquire retakes a lock whose file was removed under it.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	os.Remove(l.path)
	unlock(l.f)
	l.f.Close()
	l.f = nil
}
