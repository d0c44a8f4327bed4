package synth

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Record is one finished request in the journal: the queries generated for one tool (Syn) or the
// validator's verdict on one (query, tool) pair (Real), successful or failed.
type Record struct {
	// Key identifies the work item: "syn/n<queries asked>/<tool id>" or
	// "real/<query id>/<tool id>".
	Key string `json:"key"`
	OK  bool   `json:"ok"`
	// ToolID is the tool the item is about; QueryID and Query the real query (Real).
	ToolID  string `json:"tool_id,omitempty"`
	QueryID string `json:"query_id,omitempty"`
	Query   string `json:"query,omitempty"`
	// RetrievalScore is the retriever's score of the pair (Real).
	RetrievalScore float64 `json:"retrieval_score,omitempty"`
	// Raw is the model's answer (Syn: the text the queries were parsed from).
	Raw string `json:"raw,omitempty"`
	// Queries are the queries parsed from Raw (Syn).
	Queries []string `json:"queries,omitempty"`
	// Score is the validator's functional-match score (Real).
	Score    float64  `json:"score,omitempty"`
	Attempts int      `json:"attempts"`
	Faults   []string `json:"faults,omitempty"`
	// Error is the final error of a failed item.
	Error     string `json:"error,omitempty"`
	Seed      int64  `json:"seed"`
	ElapsedMS int64  `json:"elapsed_ms"`
	// Concurrency is the number of requests the run kept in flight beside this one.
	Concurrency int `json:"concurrency,omitempty"`
}

// Journal is an append-only JSONL file of Records, one fsync'd line per finished item, so a run
// killed at any point (kill -9 included) loses at most the requests in flight. Reopening drops a
// torn last line (a write cut short by the kill) and resumes after the last complete record.
type Journal struct {
	path string
	mu   sync.Mutex
	f    *os.File
	// latest holds the last record of each key: a failed item retried on a later run is
	// superseded by its new record.
	latest map[string]Record
	order  []string
	// Dropped is the number of bytes of a torn last line removed when the journal was opened.
	Dropped int
}

// OpenJournal opens (creating if needed) the journal at path and loads its records. A malformed
// line that is not the last one is an error naming the line: the file was not written by a
// Journal, and resuming from it could duplicate or lose work.
func OpenJournal(path string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	j := &Journal{path: path, f: f, latest: map[string]Record{}}
	if err := j.load(); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

func (j *Journal) load() error {
	data, err := io.ReadAll(j.f)
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	good := 0 // byte offset after the last complete, valid record
	line := 0
	for off := 0; off < len(data); {
		line++
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			// No newline: the last write was cut short. Drop it.
			break
		}
		raw := data[off : off+nl]
		next := off + nl + 1
		var r Record
		if err := json.Unmarshal(raw, &r); err != nil || r.Key == "" {
			if next == len(data) {
				break // a torn last line that happens to end in a newline byte
			}
			return fmt.Errorf("journal %s:%d: malformed record in the middle of the file: %v", j.path, line, err)
		}
		if _, seen := j.latest[r.Key]; !seen {
			j.order = append(j.order, r.Key)
		}
		j.latest[r.Key] = r
		off = next
		good = next
	}
	if good < len(data) {
		j.Dropped = len(data) - good
		if err := j.f.Truncate(int64(good)); err != nil {
			return fmt.Errorf("journal %s: dropping torn last line: %w", j.path, err)
		}
		if err := j.f.Sync(); err != nil {
			return fmt.Errorf("journal %s: %w", j.path, err)
		}
	}
	if _, err := j.f.Seek(int64(good), io.SeekStart); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return nil
}

// Done reports whether key has a successful record.
func (j *Journal) Done(key string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	r, ok := j.latest[key]
	return ok && r.OK
}

// Get returns the latest record of key.
func (j *Journal) Get(key string) (Record, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	r, ok := j.latest[key]
	return r, ok
}

// Records returns the latest record of every key, in the order keys first appeared.
func (j *Journal) Records() []Record {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]Record, 0, len(j.order))
	for _, k := range j.order {
		out = append(out, j.latest[k])
	}
	return out
}

// Append writes r as one line with a single write and fsyncs it before returning. A key that
// already has a successful record is not written again (so a rerun never duplicates work).
func (j *Journal) Append(r Record) error {
	if r.Key == "" {
		return errors.New("journal: record without key")
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	line = append(line, '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	if prev, ok := j.latest[r.Key]; ok && prev.OK {
		return nil
	}
	if _, err := j.f.Write(line); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if _, seen := j.latest[r.Key]; !seen {
		j.order = append(j.order, r.Key)
	}
	j.latest[r.Key] = r
	return nil
}

// Close closes the file.
func (j *Journal) Close() error { return j.f.Close() }

// readLines is a helper for tests and tools: the raw lines of a journal.
func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out, sc.Err()
}
