package encode

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// digestCache remembers the sha256 of the files a Runtime's models read, keyed by path and
// checked against size and modification time. A folder opened several times in one process (eval
// offline opens one per retriever, eval latency two) is then hashed once; a file rewritten in
// between is hashed again. The zero value is ready to use.
type digestCache struct {
	mu sync.Mutex
	m  map[string]digestEntry
}

type digestEntry struct {
	size  int64
	mtime time.Time
	sum   string
}

// sum returns the sha256 of the file at path; data, when not nil, is its content already read
// (hashed instead of reading the file again).
func (c *digestCache) sum(path string, data []byte) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	c.mu.Lock()
	e, ok := c.m[abs]
	c.mu.Unlock()
	if ok && e.size == st.Size() && e.mtime.Equal(st.ModTime()) {
		return e.sum, nil
	}
	if data == nil {
		if data, err = os.ReadFile(abs); err != nil {
			return "", fmt.Errorf("hashing %s: %w", path, err)
		}
	}
	h := sha256.Sum256(data)
	sum := hex.EncodeToString(h[:])
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]digestEntry{}
	}
	c.m[abs] = digestEntry{size: st.Size(), mtime: st.ModTime(), sum: sum}
	c.mu.Unlock()
	return sum, nil
}

// modelFiles lists the folder's distinct ONNX files in tower order (query first), the order in
// which source.model_sha256 lists their digests.
func (c *Config) modelFiles() []string {
	var files []string
	for _, tower := range []string{TowerQuery, TowerDoc} {
		if !c.HasTower(tower) {
			continue
		}
		if f := c.TowerModel(tower); len(files) == 0 || files[len(files)-1] != f {
			files = append(files, f)
		}
	}
	return files
}

// verifyRecorded checks the sha256 that rated.yaml records (source.model_sha256: one digest per
// ONNX file in tower order, space-separated; source.tokenizer_sha256: the tokenizer of the first
// tower) against the files, and refuses a mismatch: a folder whose files changed after it was
// written (a partial copy, another model dropped in) must not silently produce other vectors. A
// folder that records no digest is not checked. sum hashes a file.
func verifyRecorded(dir string, cfg *Config, sum func(path string) (string, error)) error {
	cfgPath := filepath.Join(dir, ConfigFile)
	want := strings.Fields(cfg.Source.ModelSHA256)
	files := cfg.modelFiles()
	if len(want) > len(files) {
		return fmt.Errorf("%s: source.model_sha256 lists %d digests for %d model file(s) %v", cfgPath, len(want), len(files), files)
	}
	check := func(file, want, key string) error {
		path := filepath.Join(dir, file)
		got, err := sum(path)
		if err != nil {
			return err
		}
		if !strings.EqualFold(got, want) {
			return fmt.Errorf("model folder %s: %s has sha256 %s, but %s records %s (%s): the file changed after the folder was written; reinstall it (rated setup models, rated model import) or fix %s",
				dir, file, got, ConfigFile, want, key, key)
		}
		return nil
	}
	for i, w := range want {
		if err := check(files[i], w, "source.model_sha256"); err != nil {
			return err
		}
	}
	if w := cfg.Source.TokenizerSHA256; w != "" {
		tower := TowerQuery
		if !cfg.HasTower(tower) {
			tower = TowerDoc
		}
		if err := check(cfg.TowerTokenizer(tower), w, "source.tokenizer_sha256"); err != nil {
			return err
		}
	}
	return nil
}
