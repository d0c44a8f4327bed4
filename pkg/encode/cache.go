package encode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/rated-dev/rated/internal/atomicfile"
)

// cacheMagic opens every embedding cache file; the embedding size follows as a uint32.
const cacheMagic = "RATEDEMB1\n"

// embeddingCache keeps the embeddings of one tower of one model on disk: a header (magic, dim)
// followed by records of a 32-byte sha256 of the (prefixed) text and dim little-endian float32s.
// New records are appended with one write each batch; a trailing partial record (an interrupted
// write) is dropped on load and the file rewritten atomically. The folder name carries the model
// sha256 and the tokenizer/pooling settings, so a changed model never reads stale vectors.
type embeddingCache struct {
	path string
	dim  int

	mu      sync.RWMutex
	entries map[[32]byte][]float32
}

type cacheEntry struct {
	key [32]byte
	vec []float32
}

func newEmbeddingCache(path string, dim int) *embeddingCache {
	return &embeddingCache{path: path, dim: dim, entries: map[[32]byte][]float32{}}
}

func (c *embeddingCache) recordSize() int { return 32 + 4*c.dim }

// load reads the cache file if it exists.
func (c *embeddingCache) load() error {
	data, err := os.ReadFile(c.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("embedding cache %s: %w", c.path, err)
	}
	head := len(cacheMagic) + 4
	if len(data) < head || string(data[:len(cacheMagic)]) != cacheMagic {
		return fmt.Errorf("embedding cache %s: not a rated embedding cache (delete it to rebuild)", c.path)
	}
	if d := int(binary.LittleEndian.Uint32(data[len(cacheMagic):head])); d != c.dim {
		return fmt.Errorf("embedding cache %s: holds dimension %d, model has %d (delete it to rebuild)", c.path, d, c.dim)
	}
	body := data[head:]
	rs := c.recordSize()
	complete := len(body) / rs
	c.mu.Lock()
	defer c.mu.Unlock()
	for r := range complete {
		rec := body[r*rs : (r+1)*rs]
		var key [32]byte
		copy(key[:], rec[:32])
		vec := make([]float32, c.dim)
		for i := range vec {
			vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(rec[32+4*i:]))
			if math.IsNaN(float64(vec[i])) || math.IsInf(float64(vec[i]), 0) {
				// Only finite embeddings are ever written (checkFinite): the file is corrupt.
				return fmt.Errorf("embedding cache %s: record %d holds %v: the file is corrupt (delete it to rebuild)", c.path, r+1, vec[i])
			}
		}
		c.entries[key] = vec
	}
	if len(body)%rs != 0 {
		// An interrupted append left a partial record: rewrite the complete ones.
		return atomicfile.WriteBytes(c.path, data[:head+complete*rs])
	}
	return nil
}

// get returns a copy of the cached vector for key.
func (c *embeddingCache) get(key [32]byte) ([]float32, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	return append([]float32(nil), v...), true
}

// add stores new entries in memory and appends them to the file in one write.
func (c *embeddingCache) add(entries []cacheEntry) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var buf bytes.Buffer
	for _, e := range entries {
		if _, ok := c.entries[e.key]; ok {
			continue
		}
		if len(e.vec) != c.dim {
			return fmt.Errorf("embedding cache %s: vector of length %d, want %d", c.path, len(e.vec), c.dim)
		}
		c.entries[e.key] = append([]float32(nil), e.vec...)
		buf.Write(e.key[:])
		for _, x := range e.vec {
			buf.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(x)))
		}
	}
	if buf.Len() == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return fmt.Errorf("embedding cache %s: %w", c.path, err)
	}
	if _, err := os.Stat(c.path); errors.Is(err, os.ErrNotExist) {
		// A new file is created whole (header and first records) atomically.
		return atomicfile.Write(c.path, func(w io.Writer) error {
			if err := writeCacheHeader(w, c.dim); err != nil {
				return err
			}
			_, err := w.Write(buf.Bytes())
			return err
		})
	}
	f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("embedding cache %s: %w", c.path, err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("embedding cache %s: %w", c.path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("embedding cache %s: %w", c.path, err)
	}
	return nil
}

func writeCacheHeader(w io.Writer, dim int) error {
	if _, err := io.WriteString(w, cacheMagic); err != nil {
		return err
	}
	_, err := w.Write(binary.LittleEndian.AppendUint32(nil, uint32(dim)))
	return err
}
