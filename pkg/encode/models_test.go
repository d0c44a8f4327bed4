package encode

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
)

// TestModelsOpenOnce checks one Model per folder (however the path is spelled) and that
// Uncached shares its sessions but never touches the cache.
func TestModelsOpenOnce(t *testing.T) {
	rt := sharedRuntime(t)
	dir := testassets.Model(t, "all-minilm-l6-v2")
	cacheDir := t.TempDir()
	set := NewModels(Options{Runtime: rt, Threads: 1, CacheDir: cacheDir})
	defer set.Close()
	a, err := set.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := set.Open(filepath.Join(dir, "..", filepath.Base(dir)))
	if err != nil {
		t.Fatal(err)
	}
	if a != b || set.Len() != 1 {
		t.Fatalf("two opens of %s gave different models (%d open)", dir, set.Len())
	}
	texts := []string{"send an email", "weather in Paris"}
	fresh, err := a.Uncached().EncodeDocs(texts)
	if err != nil {
		t.Fatal(err)
	}
	if files, _ := filepath.Glob(filepath.Join(cacheDir, "*", "*.bin")); len(files) != 0 {
		t.Fatalf("Uncached wrote the cache: %v", files)
	}
	cached, err := a.EncodeDocs(texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		if !slices.Equal(fresh[i], cached[i]) {
			t.Errorf("text %d: uncached and cached-path vectors differ", i)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(cacheDir, "*", "doc.bin")); len(files) != 1 {
		t.Errorf("EncodeDocs wrote %v, want one doc.bin", files)
	}
	if err := set.Close(); err != nil || set.Len() != 0 {
		t.Fatalf("Close: %v, %d left open", err, set.Len())
	}
}

// TestModelBatchTokensCap: a folder's batch_tokens lowers the command's budget, never raises it.
func TestModelBatchTokensCap(t *testing.T) {
	rt := sharedRuntime(t)
	dir := testassets.Model(t, "splade-tiny")
	for _, c := range []struct{ asked, want int }{{2048, 512}, {0, 512}, {256, 256}} {
		m, err := Open(dir, Options{Runtime: rt, BatchTokens: c.asked})
		if err != nil {
			t.Fatal(err)
		}
		if m.opts.BatchTokens != c.want {
			t.Errorf("--batch-tokens %d: budget %d, want %d (rated.yaml batch_tokens 512)", c.asked, m.opts.BatchTokens, c.want)
		}
		m.Close()
	}
}

// TestEncodeDocsProgressStopsWithItsContext: a context ended after the first batch stops the
// corpus between batches with the context's error, and the batch embedded before is in the cache,
// so the next call starts from it.
func TestEncodeDocsProgressStopsWithItsContext(t *testing.T) {
	rt := sharedRuntime(t)
	m, err := Open(testassets.Model(t, "all-minilm-l6-v2"), Options{Runtime: rt, Threads: 1, BatchSize: 2, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	texts := []string{"send an email", "weather in Paris", "convert currency", "book a flight", "translate text"}
	ctx, cancel := context.WithCancel(context.Background())
	var calls [][2]int
	_, err = m.EncodeDocsProgress(ctx, texts, func(done, total int) {
		calls = append(calls, [2]int{done, total})
		if done > 0 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ended after the first batch: error %v, want context.Canceled", err)
	}
	if want := [][2]int{{0, 5}, {2, 5}}; !slices.Equal(calls, want) {
		t.Fatalf("progress %v, want %v (one batch of 2, then stopped)", calls, want)
	}
	calls = nil
	vecs, err := m.EncodeDocsProgress(context.Background(), texts, func(done, total int) { calls = append(calls, [2]int{done, total}) })
	if err != nil || len(vecs) != 5 {
		t.Fatalf("resumed: %d vectors, %v", len(vecs), err)
	}
	if want := [][2]int{{2, 5}, {4, 5}, {5, 5}}; !slices.Equal(calls, want) {
		t.Errorf("resumed progress %v, want %v (the first batch from the cache)", calls, want)
	}
}
