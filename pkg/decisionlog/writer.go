package decisionlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/rated-dev/rated/internal/diskfull"
	"github.com/rated-dev/rated/internal/outdir"
)

// Options configures a Writer.
type Options struct {
	// Prefix names the files: <Prefix>-000001.jsonl, <Prefix>-000002.jsonl … (default
	// "decisions").
	Prefix string
	// MaxBytes rotates to the next file before a line would make the current one larger
	// (default 64 MiB; a single longer line gets a file of its own).
	MaxBytes int64
	// MaxFiles deletes the oldest files beyond this many (0 keeps all).
	MaxFiles int
}

// Writer appends records to size-rotated JSONL files in a directory. Each line reaches the
// file in one write(2), so a process killed at any moment leaves at most one torn last line,
// which Open removes; a write refused for lack of space is undone (the file is truncated back),
// so a full disk never leaves a partial line either. It is safe for concurrent use.
type Writer struct {
	dir  string
	opts Options

	lock *outdir.Lock // one writer per dir and prefix, across processes

	mu    sync.Mutex
	f     *os.File
	index int
	size  int64
	err   error // sticky after Close
	// torn: a failed write's partial line could not be cut off; the next write starts a new
	// file, so the partial line stays its file's torn tail, which readers skip, not a bad line
	// in the middle.
	torn bool
}

// Open opens dir (creating it), continuing the newest file of the prefix when it has room. A
// torn last line there (an interrupted write) is truncated away.
func Open(dir string, opts Options) (*Writer, error) {
	if opts.Prefix == "" {
		opts.Prefix = "decisions"
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 64 << 20
	}
	if strings.ContainsAny(opts.Prefix, `/\`) {
		return nil, fmt.Errorf("decision log prefix %q: must not contain a path separator", opts.Prefix)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, diskfull.Classify("decision log "+dir, err)
	}
	// Two writers appending to one file set would interleave rotations, retention and repairs
	// (replicas given one --decision-log): the second is refused, naming the first.
	lock, err := outdir.Acquire(filepath.Join(dir, opts.Prefix), "decision log")
	if err != nil {
		return nil, fmt.Errorf("decision log %s: %w", dir, err)
	}
	w := &Writer{dir: dir, opts: opts, lock: lock}
	if err := w.start(); err != nil {
		lock.Release()
		return nil, err
	}
	return w, nil
}

// start opens the newest file of the prefix (repairing its tail), or the first.
func (w *Writer) start() error {
	files, err := w.files()
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return w.use(w.openIndex(1))
	}
	last := files[len(files)-1]
	if err := repairTail(w.path(last)); err != nil {
		return err
	}
	if err := w.use(w.openIndex(last)); err != nil {
		return err
	}
	if w.size >= w.opts.MaxBytes {
		return w.rotate()
	}
	return nil
}

// Files lists the log files of prefix in dir, oldest first.
func Files(dir, prefix string) ([]string, error) {
	w := &Writer{dir: dir, opts: Options{Prefix: prefix}}
	idx, err := w.files()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(idx))
	for i, n := range idx {
		out[i] = w.path(n)
	}
	return out, nil
}

// FilesIn lists the *.jsonl files of dir, sorted: every file `rated eval replay --log DIR` reads,
// whatever its prefix. A dir that does not exist holds none. A run that must not mix with an
// earlier one (eval dynamic --decision-log; Open appends to what it finds) checks it first.
func FilesIn(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("decision log %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

func (w *Writer) path(index int) string {
	return filepath.Join(w.dir, fmt.Sprintf("%s-%06d.jsonl", w.opts.Prefix, index))
}

// files returns the indices of the prefix's files, ascending.
func (w *Writer) files() ([]int, error) {
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		return nil, fmt.Errorf("decision log %s: %w", w.dir, err)
	}
	var idx []int
	for _, e := range entries {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, w.opts.Prefix+"-")
		if !ok || !strings.HasSuffix(rest, ".jsonl") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(rest, ".jsonl"))
		if err == nil && n > 0 && len(rest) == len("000000.jsonl") {
			idx = append(idx, n)
		}
	}
	sort.Ints(idx)
	return idx, nil
}

// repairTail truncates a file that does not end with a newline back to its last newline.
func repairTail(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("decision log %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	// Scan backwards in blocks for the last newline.
	const block = 64 << 10
	end := st.Size()
	buf := make([]byte, block)
	for pos := end; pos > 0; {
		n := min(int64(block), pos)
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("decision log %s: %w", path, err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			if cut := pos + int64(i) + 1; cut != end {
				return diskfull.Classify("decision log "+path+": truncating a torn last line", f.Truncate(cut))
			}
			return nil
		}
	}
	return diskfull.Classify("decision log "+path+": truncating a torn only line", f.Truncate(0))
}

// openedFile is a log file opened for appending, not yet the writer's.
type openedFile struct {
	f     *os.File
	index int
	size  int64
	err   error
}

func (w *Writer) openIndex(index int) openedFile {
	f, err := os.OpenFile(w.path(index), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return openedFile{err: diskfull.Classify("decision log "+w.path(index), err)}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return openedFile{err: fmt.Errorf("decision log %s: %w", w.path(index), err)}
	}
	return openedFile{f: f, index: index, size: st.Size()}
}

// use makes o the current file.
func (w *Writer) use(o openedFile) error {
	if o.err != nil {
		return o.err
	}
	w.f, w.index, w.size = o.f, o.index, o.size
	return nil
}

// rotate moves to the next file. The next is opened before the current is closed, so a
// failed open (no space, no descriptors) leaves the writer on its current file, able to go on
// once the cause is gone.
func (w *Writer) rotate() error {
	next := w.openIndex(w.index + 1)
	if next.err != nil {
		return next.err
	}
	if err := w.f.Close(); err != nil {
		next.f.Close()
		return fmt.Errorf("decision log %s: %w", w.path(w.index), err)
	}
	w.use(next)
	w.torn = false
	if w.opts.MaxFiles > 0 {
		idx, err := w.files()
		if err != nil {
			return err
		}
		for len(idx) > w.opts.MaxFiles {
			if err := os.Remove(w.path(idx[0])); err != nil {
				return fmt.Errorf("decision log retention: %w", err)
			}
			idx = idx[1:]
		}
	}
	return nil
}

// Write appends v (a *Decision or *Outcome) as one line. On error nothing of the line stays in
// the file; errors caused by lack of space wrap diskfull.ErrFull.
func (w *Writer) Write(v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("decision log: %w", err)
	}
	line = append(line, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.torn || (w.size > 0 && w.size+int64(len(line)) > w.opts.MaxBytes) {
		if err := w.rotate(); err != nil {
			return err
		}
	}
	n, err := w.f.Write(line)
	if err != nil {
		if n > 0 && w.f.Truncate(w.size) != nil {
			w.torn = true // the partial line stays; it must stay the last line of its file
		}
		return diskfull.Classify("decision log "+w.path(w.index), err)
	}
	w.size += int64(n)
	return nil
}

// Sync flushes the current file to stable storage.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	return diskfull.Classify("decision log "+w.path(w.index), w.f.Sync())
}

// Close syncs and closes the current file; later writes fail.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return nil
	}
	w.err = errors.New("decision log is closed")
	defer w.lock.Release()
	err := w.f.Sync()
	return errors.Join(diskfull.Classify("decision log "+w.path(w.index), err), w.f.Close())
}
