package encode

import (
	"container/list"
	"crypto/sha256"
	"sync"
	"sync/atomic"
)

// QueryCache is an Encoder that keeps the query embeddings of the last Capacity distinct queries
// in memory (least recently used evicted first), so a router answering repeated queries encodes
// each once. Keys are sha256 digests of the text, so memory is bounded by Capacity × (32 bytes +
// the vector) whatever the queries' length. Documents pass through to the inner encoder (a model
// folder's own disk cache covers them). It is safe for concurrent use when the inner encoder is.
type QueryCache struct {
	inner    Encoder
	capacity int

	mu      sync.Mutex
	order   *list.List // front = most recently used; values are *queryEntry
	entries map[[32]byte]*list.Element

	hits, misses atomic.Uint64
}

type queryEntry struct {
	key [32]byte
	vec []float32
}

var _ Encoder = (*QueryCache)(nil)

// NewQueryCache wraps inner with an LRU of capacity queries (at least 1).
func NewQueryCache(inner Encoder, capacity int) *QueryCache {
	return &QueryCache{inner: inner, capacity: max(1, capacity), order: list.New(), entries: map[[32]byte]*list.Element{}}
}

// Name implements Encoder.
func (c *QueryCache) Name() string { return c.inner.Name() }

// Dim implements Encoder.
func (c *QueryCache) Dim() int { return c.inner.Dim() }

// EncodeDocs implements Encoder, uncached.
func (c *QueryCache) EncodeDocs(texts []string) ([][]float32, error) {
	return c.inner.EncodeDocs(texts)
}

// EncodeQueries implements Encoder: cached vectors are copied out, the misses are encoded in one
// call to the inner encoder and remembered.
func (c *QueryCache) EncodeQueries(texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	keys := make([][32]byte, len(texts))
	var missing []int
	c.mu.Lock()
	for i, s := range texts {
		keys[i] = sha256.Sum256([]byte(s))
		if el, ok := c.entries[keys[i]]; ok {
			c.order.MoveToFront(el)
			out[i] = append([]float32(nil), el.Value.(*queryEntry).vec...)
		} else {
			missing = append(missing, i)
		}
	}
	c.mu.Unlock()
	c.hits.Add(uint64(len(texts) - len(missing)))
	c.misses.Add(uint64(len(missing)))
	if len(missing) == 0 {
		return out, nil
	}
	batch := make([]string, len(missing))
	for j, i := range missing {
		batch[j] = texts[i]
	}
	vecs, err := c.inner.EncodeQueries(batch)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for j, i := range missing {
		out[i] = vecs[j]
		if _, ok := c.entries[keys[i]]; ok {
			continue // encoded concurrently by another caller
		}
		c.entries[keys[i]] = c.order.PushFront(&queryEntry{key: keys[i], vec: append([]float32(nil), vecs[j]...)})
		if c.order.Len() > c.capacity {
			old := c.order.Back()
			c.order.Remove(old)
			delete(c.entries, old.Value.(*queryEntry).key)
		}
	}
	return out, nil
}

// Stats returns the hits and misses so far and the number of cached queries.
func (c *QueryCache) Stats() (hits, misses uint64, size int) {
	c.mu.Lock()
	size = c.order.Len()
	c.mu.Unlock()
	return c.hits.Load(), c.misses.Load(), size
}
