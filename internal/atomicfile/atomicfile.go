// Package atomicfile writes files so that readers see either the old content or the complete new
// content, never a half-written file: data goes to a temporary file in the same directory, is
// synced, and is renamed over the target.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// Write calls fill with a buffered writer on a temporary file beside path and, if fill and the
// flush succeed, atomically renames it to path. On any error the target is left untouched.
func Write(path string, fill func(w io.Writer) error) error {
	p, err := Prepare(path, fill)
	if err != nil {
		return err
	}
	return p.Commit()
}

// Pending is a complete, synced temporary file waiting to be renamed over its target, so that
// several files can be written first and put in place together (renames need no disk space).
type Pending struct {
	tmp, path string
}

// Prepare writes the content of path to a synced temporary file beside it, without touching
// path. Commit puts it in place; Discard removes it.
func Prepare(path string, fill func(w io.Writer) error) (_ *Pending, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create directory %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create temporary file for %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<16)
	if err = fill(bw); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return nil, fmt.Errorf("sync %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return nil, fmt.Errorf("close %s: %w", path, err)
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return nil, fmt.Errorf("chmod %s: %w", path, err)
	}
	return &Pending{tmp: tmp.Name(), path: path}, nil
}

// Commit renames the temporary file over the target.
func (p *Pending) Commit() error {
	if err := os.Rename(p.tmp, p.path); err != nil {
		os.Remove(p.tmp)
		return fmt.Errorf("rename into %s: %w", p.path, err)
	}
	return nil
}

// CommitAll puts several pending files in place as one set: if a rename fails, the targets
// already renamed get their earlier content back (kept as hard links taken before the first
// rename; a target that did not exist is removed again) and the rest are discarded, so a reader
// never finds a new file beside an old one of the same set.
func CommitAll(ps ...*Pending) error {
	type saved struct {
		path, backup string // backup "": the target did not exist
	}
	var done []saved
	var backups []string
	defer func() {
		for _, b := range backups {
			os.Remove(b)
		}
	}()
	undo := func() {
		for i := len(done) - 1; i >= 0; i-- {
			if done[i].backup == "" {
				os.Remove(done[i].path)
			} else {
				os.Rename(done[i].backup, done[i].path)
			}
		}
	}
	for i, p := range ps {
		backup := ""
		if st, err := os.Lstat(p.path); err == nil && st.Mode().IsRegular() {
			backup = fmt.Sprintf("%s.prev-%d-%d", filepath.Join(filepath.Dir(p.path), "."+filepath.Base(p.path)), os.Getpid(), i)
			os.Remove(backup)
			if err := os.Link(p.path, backup); err != nil {
				undo()
				for _, q := range ps[i:] {
					q.Discard()
				}
				return fmt.Errorf("keep %s until its set is in place: %w", p.path, err)
			}
			backups = append(backups, backup)
		}
		if err := p.Commit(); err != nil {
			undo()
			for _, q := range ps[i+1:] {
				q.Discard()
			}
			return err
		}
		done = append(done, saved{p.path, backup})
	}
	return nil
}

// Discard removes the temporary file; the target is left as it was.
func (p *Pending) Discard() {
	if p != nil {
		os.Remove(p.tmp)
	}
}

// WriteBytes atomically replaces path with data.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// CheckDir reports, without creating anything, whether files can later be written into dir:
// dir is a directory, or its nearest existing ancestor is one (Prepare creates the rest). A
// command calls it on its output directory before any work, so that a bad --out fails at once
// and not after the work is done.
func CheckDir(dir string) error {
	for p := filepath.Clean(dir); ; {
		st, err := os.Stat(p)
		switch {
		case err == nil && st.IsDir():
			return nil
		case err == nil:
			if p == filepath.Clean(dir) {
				return fmt.Errorf("%s is not a directory", dir)
			}
			return fmt.Errorf("%s: %s is not a directory", dir, p)
		case !os.IsNotExist(err) && !errors.Is(err, syscall.ENOTDIR): // ENOTDIR: a file above; found next
			return fmt.Errorf("%s: %w", dir, err)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}
