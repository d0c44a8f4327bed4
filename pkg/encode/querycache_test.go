package encode

import (
	"fmt"
	"sync"
	"testing"
)

// countingEncoder embeds text t as [len(t), calls] and counts the texts it was asked for.
type countingEncoder struct {
	mu    sync.Mutex
	texts []string
}

func (e *countingEncoder) Name() string { return "counting" }
func (e *countingEncoder) Dim() int     { return 2 }
func (e *countingEncoder) EncodeDocs(texts []string) ([][]float32, error) {
	return e.EncodeQueries(texts)
}
func (e *countingEncoder) EncodeQueries(texts []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		e.texts = append(e.texts, t)
		out[i] = []float32{float32(len(t)), float32(len(e.texts))}
	}
	return out, nil
}

func TestQueryCacheLRU(t *testing.T) {
	inner := &countingEncoder{}
	c := NewQueryCache(inner, 2)
	v, _ := c.EncodeQueries([]string{"aa", "bbb", "aa"})
	// "aa" is a miss in both positions of the first call (not cached yet): encoded twice.
	if fmt.Sprint(inner.texts) != "[aa bbb aa]" || v[0][0] != 2 || v[1][0] != 3 {
		t.Fatalf("first call: inner saw %v, got %v", inner.texts, v)
	}
	v, _ = c.EncodeQueries([]string{"bbb"}) // hit; "bbb" becomes most recent
	if len(inner.texts) != 3 || v[0][1] != 2 {
		t.Fatalf("hit re-encoded or wrong vector: %v %v", inner.texts, v)
	}
	v[0][0] = 99                   // the caller owns its copy
	c.EncodeQueries([]string{"c"}) // evicts "aa", the least recently used
	c.EncodeQueries([]string{"aa", "bbb"})
	if fmt.Sprint(inner.texts) != "[aa bbb aa c aa]" {
		t.Fatalf("inner saw %v: eviction order wrong", inner.texts)
	}
	if w, _ := c.EncodeQueries([]string{"bbb"}); w[0][0] != 3 {
		t.Fatalf("cached vector was modified through a returned copy: %v", w)
	}
	hits, misses, size := c.Stats()
	if hits != 3 || misses != 5 || size != 2 {
		t.Fatalf("stats: %d hits, %d misses, %d cached", hits, misses, size)
	}
}
