package bench

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// A shipped benchmark (data/ecoagent) stores its files gzip-compressed, as name.gz; every reader
// of this package, and OpenFile for files read elsewhere (negatives.jsonl), accepts either.

// openFS opens name in fsys, or name.gz decompressed when name is absent.
func openFS(fsys fs.FS, name string) (io.ReadCloser, error) {
	f, err := fsys.Open(name)
	if err == nil {
		// With both forms there, which one is meant is a guess: refuse rather than pick.
		if _, gerr := fs.Stat(fsys, name+".gz"); gerr == nil {
			f.Close()
			return nil, fmt.Errorf("both %s and %s.gz exist: remove the one that is not meant", name, name)
		}
		return f, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	gz, gerr := fsys.Open(name + ".gz")
	if gerr != nil {
		return nil, err // the plain name's error: the file is missing in both forms
	}
	return newGzipReadCloser(gz, name+".gz")
}

// FileExists reports whether path, or path.gz, exists: what OpenFile would open.
func FileExists(path string) bool {
	for _, p := range []string{path, path + ".gz"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// OpenFile opens path, or path.gz decompressed when path is absent (os.ErrNotExist when neither
// exists).
func OpenFile(path string) (io.ReadCloser, error) {
	return openFS(os.DirFS(filepath.Dir(path)), filepath.Base(path))
}

// OpenedName is the name of the file rc reads, for errors: name.gz when OpenFile (or the
// benchmark reader) fell back to the compressed file, else name. A line error in
// corpus.jsonl.gz then names corpus.jsonl.gz, not a corpus.jsonl that does not exist.
func OpenedName(rc io.ReadCloser, name string) string {
	if _, ok := rc.(gzipReadCloser); ok {
		return name + ".gz"
	}
	return name
}

type gzipReadCloser struct {
	*gzip.Reader
	f    io.Closer
	name string
}

// Read names the compressed file in a decompression error (a truncated or corrupt .gz), which
// the line readers would otherwise report as malformed JSON of the plain name.
func (g gzipReadCloser) Read(p []byte) (int, error) {
	n, err := g.Reader.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: corrupt or truncated gzip data: %w", g.name, err)
	}
	return n, err
}

func newGzipReadCloser(f fs.File, name string) (io.ReadCloser, error) {
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return gzipReadCloser{zr, f, name}, nil
}

func (g gzipReadCloser) Close() error {
	err := g.Reader.Close()
	if cerr := g.f.Close(); err == nil {
		err = cerr
	}
	return err
}
