package encode

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/fuzzcount"
)

// FuzzLoadConfig feeds rated.yaml (seeds: the installed model folders' files and a dual-tower
// folder, testdata/fuzz/FuzzLoadConfig). Any input is an error naming the file, or a config whose
// defaults are filled and valid.
func FuzzLoadConfig(f *testing.F) {
	f.Add([]byte(goodYAML))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzLoadConfig")
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ConfigFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadConfig(dir)
		if err != nil {
			if !strings.Contains(err.Error(), dir) {
				t.Fatalf("error names no file: %v", err)
			}
			return
		}
		switch {
		case c.Name == "", c.Kind != KindBiEncoder && c.Kind != KindCrossEncoder:
			t.Fatalf("name %q kind %q", c.Name, c.Kind)
		case c.Pooling != PoolingCLS && c.Pooling != PoolingMean && c.Pooling != PoolingNone:
			t.Fatalf("pooling %q", c.Pooling)
		case c.MaxLength < 2 || c.Dim < 0:
			t.Fatalf("max_length %d dim %d", c.MaxLength, c.Dim)
		}
		for _, tower := range []string{TowerQuery, TowerDoc} {
			if c.HasTower(tower) && (c.TowerModel(tower) == "" || c.TowerTokenizer(tower) == "") {
				t.Fatalf("%s tower without files: %+v", tower, c)
			}
		}
	})
}

// FuzzEmbeddingCache feeds a cache file (seeds: the head of an installed embedding cache, whole
// and torn, testdata/fuzz/FuzzEmbeddingCache). Any input is an error naming the file, or entries
// that are finite vectors of the cache's dimension; a torn last record is cut off so that the
// file then loads the same entries again.
func FuzzEmbeddingCache(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzEmbeddingCache")
		path := filepath.Join(t.TempDir(), "doc.bin")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		const dim = 384
		c := newEmbeddingCache(path, dim)
		if err := c.load(); err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error names no file: %v", err)
			}
			return
		}
		for key, v := range c.entries {
			if len(v) != dim {
				t.Fatalf("entry %x has %d values", key[:4], len(v))
			}
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("entry %x holds %v: a corrupt cache must not hand out non-finite vectors", key[:4], x)
				}
			}
		}
		again := newEmbeddingCache(path, dim)
		if err := again.load(); err != nil || len(again.entries) != len(c.entries) {
			t.Fatalf("reload after repair: %v, %d entries, want %d", err, len(again.entries), len(c.entries))
		}
	})
}

// TestCorruptCacheIsRefused (found by FuzzEmbeddingCache, crasher f3f82cedbcde935e): a record
// holding NaN used to be handed out as an embedding; only finite embeddings are ever written, so
// such a file is corrupt and is refused, naming it.
func TestCorruptCacheIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.bin")
	c := newEmbeddingCache(path, 2)
	if err := c.add([]cacheEntry{{key: [32]byte{1}, vec: []float32{0.6, 0.8}}, {key: [32]byte{2}, vec: []float32{1, 0}}}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	nan := math.Float32bits(float32(math.NaN()))
	off := len(cacheMagic) + 4 + (32 + 8) + 32 + 4 // second record, second value
	data[off], data[off+1], data[off+2], data[off+3] = byte(nan), byte(nan>>8), byte(nan>>16), byte(nan>>24)
	os.WriteFile(path, data, 0o644)
	err := newEmbeddingCache(path, 2).load()
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "record 2 holds NaN") {
		t.Fatalf("error %v", err)
	}
}

// FuzzPositionLimit feeds ONNX bytes to the reader of the position-embedding table (seeds: the
// hand-built models of TestPositionLimit and the identity model): a limit is never negative, and
// a model it reads is one the graph reader reads too.
func FuzzPositionLimit(f *testing.F) {
	tensor := func(name string, dims ...uint64) []byte {
		var b []byte
		for _, d := range dims {
			b = append(b, pbInt(1, d)...)
		}
		return pbCat(b, pbInt(2, 1), pbBytes(8, []byte(name)))
	}
	f.Add(pbCat(pbInt(1, 8), pbBytes(7, pbBytes(5, tensor("embeddings.position_embeddings.weight", 512, 8)))))
	f.Add(identityModel("input_ids", "out", 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzPositionLimit")
		n, err := positionLimit(data)
		if err == nil && n < 0 {
			t.Fatalf("limit %d", n)
		}
	})
}
