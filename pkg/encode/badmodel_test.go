package encode

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
)

// Minimal protobuf writer for hand-built ONNX test models (field numbers from onnx.proto3).
func pbVarint(v uint64) []byte {
	var b []byte
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func pbInt(field int, v uint64) []byte {
	return append(pbVarint(uint64(field)<<3), pbVarint(v)...)
}

func pbBytes(field int, data []byte) []byte {
	b := pbVarint(uint64(field)<<3 | 2)
	b = append(b, pbVarint(uint64(len(data)))...)
	return append(b, data...)
}

func pbCat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// onnxValueInfo describes a tensor of ONNX element type elem (1 float, 7 int64) with symbolic
// dimensions named by dims.
func onnxValueInfo(name string, elem uint64, dims ...string) []byte {
	var shape []byte
	for _, d := range dims {
		shape = append(shape, pbBytes(1, pbBytes(2, []byte(d)))...) // Dimension.dim_param
	}
	tensor := pbCat(pbInt(1, elem), pbBytes(2, shape))                     // TypeProto.Tensor
	return pbCat(pbBytes(1, []byte(name)), pbBytes(2, pbBytes(1, tensor))) // ValueInfoProto
}

// identityModel is a valid ONNX model whose one node copies input `in` to output `out`.
func identityModel(in, out string, elem uint64) []byte {
	node := pbCat(pbBytes(1, []byte(in)), pbBytes(2, []byte(out)), pbBytes(4, []byte("Identity")))
	graph := pbCat(pbBytes(1, node), pbBytes(2, []byte("g")),
		pbBytes(11, onnxValueInfo(in, elem, "batch", "seq")),
		pbBytes(12, onnxValueInfo(out, elem, "batch", "seq")))
	return pbCat(pbInt(1, 8), pbBytes(7, graph), pbBytes(8, pbInt(2, 17)))
}

const goodYAML = "name: t\nmodel: model.onnx\ntokenizer: tokenizer.json\npooling: cls\nmax_length: 64\n"

// TestBadModelFolders checks that every broken model folder gives an error naming the broken
// file, never a panic or a model that returns zero vectors.
func TestBadModelFolders(t *testing.T) {
	realModel := ""
	if _, err := os.Stat(filepath.Join(testassets.Dir(t), "models", "bge-small-en-v1.5", "model.onnx")); err == nil || testassets.Required() {
		realModel = filepath.Join(testassets.Model(t, "bge-small-en-v1.5"), "model.onnx")
	}
	failingLoader := func(path string) (Tokenizer, error) {
		return nil, errors.New("unsupported tokenizer model type BPE")
	}
	tests := []struct {
		name      string
		yaml      string            // rated.yaml content; "" = no file
		files     map[string][]byte // extra files
		linkModel bool              // model.onnx -> the installed bge-small model
		loader    TokenizerLoader
		needsORT  bool
		wantFile  string // file the error must name
		wantText  string
	}{
		{name: "no rated.yaml", wantFile: "", wantText: "no rated.yaml"},
		{name: "bad yaml", yaml: "name: [unclosed\n", wantFile: "rated.yaml", wantText: "yaml"},
		{name: "unknown field", yaml: goodYAML + "poolling: mean\n", wantFile: "rated.yaml", wantText: "poolling"},
		{name: "bad pooling", yaml: strings.Replace(goodYAML, "cls", "max", 1), wantFile: "rated.yaml", wantText: `pooling "max"`},
		{name: "negative batch_tokens", yaml: goodYAML + "batch_tokens: -1\n", wantFile: "rated.yaml", wantText: "batch_tokens -1"},
		{name: "no model named", yaml: "tokenizer: tokenizer.json\n", wantFile: "rated.yaml", wantText: "no model file"},
		{name: "missing tokenizer", yaml: goodYAML, files: map[string][]byte{"model.onnx": []byte("x")}, wantFile: "tokenizer.json", wantText: "no such file"},
		{name: "unsupported tokenizer", yaml: goodYAML, files: map[string][]byte{"tokenizer.json": []byte("{}")}, loader: failingLoader, wantFile: "tokenizer.json", wantText: "unsupported tokenizer"},
		{name: "BPE tokenizer.json", yaml: goodYAML, files: map[string][]byte{"tokenizer.json": []byte(`{"version":"1.0","model":{"type":"BPE","vocab":{},"merges":[]}}`)}, loader: defaultTokenizerLoader, wantFile: "tokenizer.json", wantText: `unsupported model type "BPE"`},
		{name: "missing model", yaml: goodYAML, files: map[string][]byte{"tokenizer.json": []byte("{}")}, needsORT: true, wantFile: "model.onnx", wantText: "not found"},
		{name: "empty model", yaml: goodYAML, files: map[string][]byte{"tokenizer.json": []byte("{}"), "model.onnx": nil}, needsORT: true, wantFile: "model.onnx", wantText: "empty"},
		{name: "corrupt model", yaml: goodYAML, files: map[string][]byte{"tokenizer.json": []byte("{}"), "model.onnx": []byte("this is not a protobuf \x00\xff\xfe")}, needsORT: true, wantFile: "model.onnx", wantText: "not a loadable ONNX model"},
		{name: "wrong input name", yaml: goodYAML, files: map[string][]byte{"tokenizer.json": []byte("{}"), "model.onnx": identityModel("text", "out", 7)}, needsORT: true, wantFile: "model.onnx", wantText: `unsupported input "text"`},
		{name: "float input", yaml: goodYAML, files: map[string][]byte{"tokenizer.json": []byte("{}"), "model.onnx": identityModel("input_ids", "out", 1)}, needsORT: true, wantFile: "model.onnx", wantText: "want int64"},
		{name: "int64 output", yaml: goodYAML, files: map[string][]byte{"tokenizer.json": []byte("{}"), "model.onnx": identityModel("input_ids", "out", 7)}, needsORT: true, wantFile: "model.onnx", wantText: "want float32"},
		{name: "wrong dimension", yaml: goodYAML + "dim: 768\n", files: map[string][]byte{"tokenizer.json": []byte("{}")}, linkModel: true, needsORT: true, wantFile: "model.onnx", wantText: "dimension 384 but rated.yaml says dim 768"},
		{name: "wrong output name", yaml: goodYAML + "output: sentence_embedding\n", files: map[string][]byte{"tokenizer.json": []byte("{}")}, linkModel: true, needsORT: true, wantFile: "model.onnx", wantText: `no output "sentence_embedding"`},
		{name: "pooling none on token states", yaml: strings.Replace(goodYAML, "cls", "none", 1), files: map[string][]byte{"tokenizer.json": []byte("{}")}, linkModel: true, needsORT: true, wantFile: "model.onnx", wantText: "set pooling to cls or mean"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := NewRuntime(filepath.Join(t.TempDir(), "no-library.so"))
			if tc.needsORT {
				rt = sharedRuntime(t)
			}
			if tc.linkModel && realModel == "" {
				t.Skip("model bge-small-en-v1.5 not installed: run rated setup models")
			}
			dir := t.TempDir()
			if tc.yaml != "" {
				if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(tc.yaml), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for name, data := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.linkModel {
				if err := os.Symlink(realModel, filepath.Join(dir, "model.onnx")); err != nil {
					t.Fatal(err)
				}
			}
			loader := tc.loader
			if loader == nil {
				loader = noTokenizer
			}
			m, err := Open(dir, Options{Runtime: rt, LoadTokenizer: loader})
			if err == nil {
				m.Close()
				t.Fatalf("Open succeeded, want an error mentioning %q", tc.wantText)
			}
			msg := err.Error()
			if !strings.Contains(msg, filepath.Join(dir, tc.wantFile)) {
				t.Errorf("error %q does not name %s", msg, filepath.Join(dir, tc.wantFile))
			}
			if !strings.Contains(msg, tc.wantText) {
				t.Errorf("error %q does not say %q", msg, tc.wantText)
			}
		})
	}
}

// TestMissingTower checks that a folder with only a doc tower refuses queries with an error.
func TestMissingTower(t *testing.T) {
	rt := sharedRuntime(t)
	src := filepath.Join(testassets.Model(t, "all-minilm-l6-v2"), "model.onnx")
	dir := t.TempDir()
	if err := os.Symlink(src, filepath.Join(dir, "doc.onnx")); err != nil {
		t.Fatal(err)
	}
	yaml := "doc_model: doc.onnx\ntokenizer: tokenizer.json\npooling: mean\n"
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Open(dir, Options{Runtime: rt, LoadTokenizer: noTokenizer})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Config().Towers != TowersDoc {
		t.Errorf("towers = %q, want doc", m.Config().Towers)
	}
	if _, err := m.EncodeQueries([]string{"q"}); err == nil || !strings.Contains(err.Error(), "no query tower") {
		t.Errorf("EncodeQueries error = %v, want 'no query tower'", err)
	}
}

// TestCUDAUnavailable checks that asking the CPU-only library for CUDA is a clear error.
func TestCUDAUnavailable(t *testing.T) {
	rt := sharedRuntime(t)
	dir := testassets.Model(t, "all-minilm-l6-v2")
	m, err := Open(dir, Options{Runtime: rt, Device: DeviceCUDA, LoadTokenizer: noTokenizer})
	if err == nil {
		m.Close()
		t.Skip("this ONNX Runtime library has a working CUDA execution provider")
	}
	if !strings.Contains(err.Error(), "CUDA execution provider unavailable") || !strings.Contains(err.Error(), rt.LibraryPath()) {
		t.Errorf("error %q, want one saying the CUDA execution provider is unavailable in %s", err, rt.LibraryPath())
	}
	if _, err := Open(dir, Options{Runtime: rt, Device: "tpu", LoadTokenizer: noTokenizer}); err == nil || !strings.Contains(err.Error(), `device "tpu"`) {
		t.Errorf("device tpu: error %v", err)
	}
}
