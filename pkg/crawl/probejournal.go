package crawl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/rated-dev/rated/internal/textfile"
	"github.com/rated-dev/rated/pkg/catalog"
)

// ProbeJournal keeps the probe results of a crawl as they arrive, one JSON ProbeResult per line,
// synced, so a run interrupted after hours of probing (1 s between requests to a host) resumes
// where it stopped instead of probing everything again. It is safe for concurrent use.
type ProbeJournal struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

// OpenProbeJournal opens (or creates) the journal at path and returns the results it already
// holds by URL. A last line cut short by a crash is dropped (the file is truncated to the
// newline before it); any other malformed line is an error naming the file and line.
func OpenProbeJournal(path string) (*ProbeJournal, map[string]catalog.ProbeResult, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("probe journal: %w", err)
	}
	keep := len(data)
	if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) {
		keep = i + 1 // a torn last record
	}
	done := map[string]catalog.ProbeResult{}
	err = textfile.Lines(bytes.NewReader(data[:keep]), path, func(_ int, raw []byte) error {
		var r catalog.ProbeResult
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return fmt.Errorf("malformed probe result: %w", err)
		}
		if r.URL == "" || r.Status == "" {
			return fmt.Errorf("probe result without url or status")
		}
		done[r.URL] = r
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("probe journal: %w", err)
	}
	if err := f.Truncate(int64(keep)); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("probe journal %s: %w", path, err)
	}
	if _, err := f.Seek(int64(keep), 0); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("probe journal %s: %w", path, err)
	}
	return &ProbeJournal{path: path, f: f}, done, nil
}

// Append records one result and syncs it to disk.
func (j *ProbeJournal) Append(r catalog.ProbeResult) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("probe journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("probe journal %s: %w", j.path, err)
	}
	return nil
}

// Close closes the journal, keeping it for a later resume.
func (j *ProbeJournal) Close() error { return j.f.Close() }

// Remove closes the journal and deletes it: its results are in the written catalog.
func (j *ProbeJournal) Remove() error {
	j.f.Close()
	if err := os.Remove(j.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("probe journal: %w", err)
	}
	return nil
}
