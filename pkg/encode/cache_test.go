package encode

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEmbeddingCacheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m", "doc.bin")
	c := newEmbeddingCache(path, 3)
	if err := c.load(); err != nil { // no file yet
		t.Fatal(err)
	}
	k1, k2 := sha256.Sum256([]byte("a")), sha256.Sum256([]byte("b"))
	if err := c.add([]cacheEntry{{k1, []float32{1, 2, 3}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.add([]cacheEntry{{k2, []float32{-1, 0.5, 0}}, {k1, []float32{9, 9, 9}}}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := int64(32 + 4*3)
	if want := int64(len(cacheMagic)+4) + 2*rec; st.Size() != want { // k1 is not stored twice
		t.Fatalf("size %d, want %d", st.Size(), want)
	}
	// A partial trailing record (interrupted append) is dropped and the file repaired.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte("partial"))
	f.Close()
	r := newEmbeddingCache(path, 3)
	if err := r.load(); err != nil {
		t.Fatal(err)
	}
	if v, ok := r.get(k1); !ok || !slices.Equal(v, []float32{1, 2, 3}) {
		t.Errorf("k1 = %v %v, want [1 2 3]", v, ok)
	}
	if v, ok := r.get(k2); !ok || !slices.Equal(v, []float32{-1, 0.5, 0}) {
		t.Errorf("k2 = %v %v", v, ok)
	}
	if st2, _ := os.Stat(path); st2.Size() != st.Size() {
		t.Errorf("after repair: %d bytes, want %d", st2.Size(), st.Size())
	}
	// Wrong dimension and a foreign file are errors naming the file.
	if err := newEmbeddingCache(path, 4).load(); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "dimension 3") {
		t.Errorf("dim 4: error %v", err)
	}
	os.WriteFile(path, []byte("not a cache at all"), 0o644)
	if err := newEmbeddingCache(path, 3).load(); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("foreign file: error %v", err)
	}
}
