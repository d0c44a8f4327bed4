package encode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/testassets"
)

// sha256("abc") and sha256("") from FIPS 180-2 / any sha256sum: independent of the code.
const (
	sha256ABC   = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	sha256Empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

func writeFolder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Open checks the digests rated.yaml records before anything is loaded, and refuses a mismatch
// naming the file, the key and both digests. No ONNX Runtime is needed to get there: a folder
// that passes the check fails afterwards on the missing library instead.
func TestOpenRefusesChangedFiles(t *testing.T) {
	rt := NewRuntime(filepath.Join(t.TempDir(), "no-library.so"))
	base := "name: t\nmodel: model.onnx\ntokenizer: tokenizer.json\npooling: cls\n"
	cases := []struct {
		name, source string
		files        map[string]string
		want         []string
	}{
		{"model changed", "source:\n  model_sha256: " + sha256Empty + "\n", map[string]string{"model.onnx": "abc", "tokenizer.json": ""},
			[]string{"model.onnx has sha256 " + sha256ABC, "records " + sha256Empty, "source.model_sha256"}},
		{"tokenizer changed", "source:\n  model_sha256: " + sha256ABC + "\n  tokenizer_sha256: " + sha256ABC + "\n", map[string]string{"model.onnx": "abc", "tokenizer.json": ""},
			[]string{"tokenizer.json has sha256 " + sha256Empty, "source.tokenizer_sha256"}},
		{"too many digests", "source:\n  model_sha256: " + sha256ABC + " " + sha256ABC + "\n", map[string]string{"model.onnx": "abc", "tokenizer.json": ""},
			[]string{"lists 2 digests for 1 model file(s)"}},
		{"matching digests pass", "source:\n  model_sha256: " + strings.ToUpper(sha256ABC) + "\n  tokenizer_sha256: " + sha256Empty + "\n",
			map[string]string{"model.onnx": "abc", "tokenizer.json": ""}, []string{"onnxruntime library", "not found"}},
		{"no digest recorded is not checked", "", map[string]string{"model.onnx": "abc", "tokenizer.json": ""}, []string{"onnxruntime library"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{ConfigFile: base + c.source}
			for k, v := range c.files {
				files[k] = v
			}
			dir := writeFolder(t, files)
			_, err := Open(dir, Options{Runtime: rt, LoadTokenizer: func(string) (Tokenizer, error) { return nil, nil }})
			if err == nil {
				t.Fatal("opened")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// Dual towers: model_sha256 lists the query file's digest, then the doc file's (rated finetune's
// layout); either one changed is refused.
func TestOpenChecksBothTowers(t *testing.T) {
	rt := NewRuntime(filepath.Join(t.TempDir(), "no-library.so"))
	yaml := "query_model: q.onnx\ndoc_model: d.onnx\ntokenizer: tokenizer.json\nsource:\n  model_sha256: " + sha256ABC + " " + sha256ABC + "\n"
	dir := writeFolder(t, map[string]string{ConfigFile: yaml, "q.onnx": "abc", "d.onnx": "abd", "tokenizer.json": ""})
	_, err := Open(dir, Options{Runtime: rt})
	if err == nil || !strings.Contains(err.Error(), "d.onnx has sha256") {
		t.Errorf("want d.onnx refused, got %v", err)
	}
}

// The digest cache hashes a file once per size and modification time: an unchanged file is not
// read again (shown by changing its content behind the cache's back, same size and mtime), and a
// file with a new mtime is hashed again.
func TestDigestCacheKeysOnSizeAndMTime(t *testing.T) {
	dir := writeFolder(t, map[string]string{"f": "abc"})
	path := filepath.Join(dir, "f")
	var c digestCache
	if got, err := c.sum(path, nil); err != nil || got != sha256ABC {
		t.Fatalf("first sum %s, %v", got, err)
	}
	st, _ := os.Stat(path)
	if err := os.WriteFile(path, []byte("xyz"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.sum(path, nil); got != sha256ABC {
		t.Errorf("unchanged size and mtime: got %s, want the cached %s", got, sha256ABC)
	}
	later := st.ModTime().Add(time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.sum(path, nil); got == sha256ABC {
		t.Errorf("new mtime: still the cached digest")
	}
}

// The installed folders record their digests (written by the set-up with sha256sum), and open.
func TestInstalledFoldersPassVerification(t *testing.T) {
	lib := testassets.ORTLibrary(t)
	rt := NewRuntime(lib)
	for _, name := range []string{"all-minilm-l6-v2", "bge-small-en-v1.5"} {
		dir := testassets.Model(t, name)
		cfg, err := LoadConfig(dir)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Source.ModelSHA256 == "" || cfg.Source.TokenizerSHA256 == "" {
			t.Fatalf("%s: rated.yaml records no digests", name)
		}
		m, err := Open(dir, Options{Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		id := m.EncoderIdentity()
		m.Close()
		if len(id.ModelSHA256) != 1 || id.ModelSHA256[0] != cfg.Source.ModelSHA256 || id.TokenizerSHA256 != cfg.Source.TokenizerSHA256 {
			t.Errorf("%s: identity %+v, rated.yaml %+v", name, id, cfg.Source)
		}
	}
}
