package encode

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
)

// Models opens each model folder once and shares the opened Model between every user of a
// process (the dense retrievers, the prior's consistency, latency timing), with one set of
// options (runtime, threads, batching, cache). Opening a model builds its ONNX Runtime sessions
// (about a second each on the reference encoders), so a command that evaluates several
// retrievers over one encoder pays it once. Close closes them all. Safe for concurrent use.
type Models struct {
	opts Options

	mu   sync.Mutex
	open map[string]*Model
}

// NewModels returns an empty set that opens folders with opts.
func NewModels(opts Options) *Models { return &Models{opts: opts, open: map[string]*Model{}} }

// Options are the options every model of the set is opened with.
func (s *Models) Options() Options { return s.opts }

// Open returns the model of folder dir, opening it on first use.
func (s *Models) Open(dir string) (*Model, error) {
	key, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("model folder %s: %w", dir, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.open[key]; ok {
		return m, nil
	}
	m, err := Open(dir, s.opts)
	if err != nil {
		return nil, err
	}
	s.open[key] = m
	return m, nil
}

// Len is the number of folders opened so far.
func (s *Models) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}

// Close closes every opened model; the set can be used again afterwards.
func (s *Models) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for k, m := range s.open {
		errs = append(errs, m.Close())
		delete(s.open, k)
	}
	return errors.Join(errs...)
}
