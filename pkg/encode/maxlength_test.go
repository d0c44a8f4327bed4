package encode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
)

// TestMaxLengthZeroIsRefused (issue 16): an explicit max_length: 0 used to become 512 silently;
// only a missing key takes the default.
func TestMaxLengthZeroIsRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(yaml string) {
		if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("model: model.onnx\ntokenizer: tokenizer.json\nmax_length: 0\n")
	if _, err := LoadConfig(dir); err == nil || !strings.Contains(err.Error(), "max_length 0") || !strings.Contains(err.Error(), filepath.Join(dir, ConfigFile)) {
		t.Fatalf("max_length 0: error %v", err)
	}
	write("model: model.onnx\ntokenizer: tokenizer.json\nmax_length: -3\n")
	if _, err := LoadConfig(dir); err == nil || !strings.Contains(err.Error(), "max_length -3") {
		t.Fatalf("max_length -3: error %v", err)
	}
	write("model: model.onnx\ntokenizer: tokenizer.json\n")
	c, err := LoadConfig(dir)
	if err != nil || c.MaxLength != DefaultMaxLength {
		t.Fatalf("no max_length: %v, %d", err, c.MaxLength)
	}
}

// TestMaxLengthBeyondPositionTable (issue 16): max_length 100000 used to load and fail deep in
// ONNX Runtime on the first long text; Open now compares it with the model's position-embedding
// table (512 rows in bge-small) and names both files.
func TestMaxLengthBeyondPositionTable(t *testing.T) {
	rt := sharedRuntime(t)
	src := filepath.Join(testassets.Model(t, "bge-small-en-v1.5"), "model.onnx")
	dir := t.TempDir()
	if err := os.Symlink(src, filepath.Join(dir, "model.onnx")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(dir, ConfigFile), []byte("model: model.onnx\ntokenizer: tokenizer.json\npooling: cls\nmax_length: 100000\n"), 0o644)
	_, err := Open(dir, Options{Runtime: rt, LoadTokenizer: noTokenizer})
	if err == nil || !strings.Contains(err.Error(), "max_length 100000") || !strings.Contains(err.Error(), "512") ||
		!strings.Contains(err.Error(), filepath.Join(dir, ConfigFile)) || !strings.Contains(err.Error(), filepath.Join(dir, "model.onnx")) {
		t.Fatalf("error %v", err)
	}
	// Without max_length the folder takes the smaller of 512 and the table.
	os.WriteFile(filepath.Join(dir, ConfigFile), []byte("model: model.onnx\ntokenizer: tokenizer.json\npooling: cls\n"), 0o644)
	m, err := Open(dir, Options{Runtime: rt, LoadTokenizer: noTokenizer})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Config().MaxLength != 512 {
		t.Fatalf("max_length %d, want 512", m.Config().MaxLength)
	}
}

// TestPositionLimit reads the position-embedding rows of hand-built ONNX files.
func TestPositionLimit(t *testing.T) {
	tensor := func(name string, dims ...uint64) []byte {
		var b []byte
		for _, d := range dims {
			b = append(b, pbInt(1, d)...)
		}
		return pbCat(b, pbInt(2, 1), pbBytes(8, []byte(name)))
	}
	model := func(tensors ...[]byte) []byte {
		var g []byte
		for _, t := range tensors {
			g = append(g, pbBytes(5, t)...)
		}
		return pbCat(pbInt(1, 8), pbBytes(7, g))
	}
	for _, c := range []struct {
		model []byte
		want  int
	}{
		{model(tensor("embeddings.word_embeddings.weight", 30522, 8), tensor("embeddings.position_embeddings.weight", 128, 8)), 128},
		{model(tensor("bert.embeddings.position_embeddings.weight", 514, 8)), 514},
		{model(tensor("embeddings.word_embeddings.weight", 30522, 8)), 0},
		{identityModel("input_ids", "out", 1), 0},
	} {
		got, err := positionLimit(c.model)
		if err != nil || got != c.want {
			t.Errorf("positionLimit = %d, %v; want %d", got, err, c.want)
		}
	}
	if _, err := positionLimit([]byte("not protobuf \xff\xff\xff")); err == nil {
		t.Error("garbage: no error")
	}
}
