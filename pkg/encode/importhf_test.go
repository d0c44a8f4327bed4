package encode

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rated-dev/rated/internal/testassets"
)

// hfFixture returns the all-MiniLM-L6-v2 configuration files of testdata/hf-minilm as a map,
// plus the given ONNX and tokenizer contents.
func hfFixture(t testing.TB, onnxPath, onnx, tokenizer string) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{onnxPath: {Data: []byte(onnx)}, "tokenizer.json": {Data: []byte(tokenizer)}}
	root := filepath.Join("testdata", "hf-minilm")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, "README.md") {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		m[filepath.ToSlash(rel)] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The settings read from sentence-transformers' files are those published for all-MiniLM-L6-v2:
// mean pooling, 256 tokens, 384 dimensions, a Normalize module.
func TestReadHFFolder(t *testing.T) {
	m, err := ReadHFFolder(hfFixture(t, "onnx/model.onnx", "x", "{}"), "")
	if err != nil {
		t.Fatal(err)
	}
	want := HFModel{ONNX: "onnx/model.onnx", Tokenizer: "tokenizer.json", Pooling: PoolingMean, Normalize: true, MaxLength: 256, Dim: 384,
		Upstream: "nreimers/MiniLM-L6-H384-uncased", ModelType: "bert"}
	if *m != want {
		t.Errorf("got %+v\nwant %+v", *m, want)
	}
}

// Each broken folder is refused with an error naming the file and what is wrong.
func TestReadHFFolderRefusesWhatItCannotRun(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(fstest.MapFS)
		onnx  string
		wants string
	}{
		{"no onnx", func(m fstest.MapFS) { delete(m, "onnx/model.onnx") }, "", "no ONNX export: looked for model.onnx, onnx/model.onnx"},
		{"external weights", func(m fstest.MapFS) { m["onnx/model.onnx_data"] = &fstest.MapFile{Data: []byte("w")} }, "", "external file onnx/model.onnx_data"},
		{"named onnx missing", nil, "onnx/model_quantized.onnx", "looked for onnx/model_quantized.onnx"},
		{"no tokenizer", func(m fstest.MapFS) { delete(m, "tokenizer.json") }, "", "tokenizer.json"},
		{"bad json", func(m fstest.MapFS) { m["config.json"] = &fstest.MapFile{Data: []byte("{")} }, "", "config.json: unexpected end of JSON input"},
		{"dense head", func(m fstest.MapFS) {
			m["modules.json"] = &fstest.MapFile{Data: []byte(`[{"path":"","type":"sentence_transformers.models.Transformer"},{"path":"1_Pooling","type":"sentence_transformers.models.Pooling"},{"path":"2_Dense","type":"sentence_transformers.models.Dense"}]`)}
		}, "", "module 2 is \"sentence_transformers.models.Dense\""},
		{"max pooling", func(m fstest.MapFS) {
			m["1_Pooling/config.json"] = &fstest.MapFile{Data: []byte(`{"word_embedding_dimension": 384, "pooling_mode_max_tokens": true}`)}
		}, "", "1_Pooling/config.json: pooling_mode_max_tokens is not supported"},
		{"two poolings", func(m fstest.MapFS) {
			m["1_Pooling/config.json"] = &fstest.MapFile{Data: []byte(`{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": true}`)}
		}, "", "want exactly one of"},
		{"pooling outside", func(m fstest.MapFS) {
			m["modules.json"] = &fstest.MapFile{Data: []byte(`[{"path":"","type":"x.Transformer"},{"path":"../p","type":"x.Pooling"}]`)}
		}, "", `Pooling module path "../p"`},
		{"fractional dim", func(m fstest.MapFS) {
			m["1_Pooling/config.json"] = &fstest.MapFile{Data: []byte(`{"word_embedding_dimension": 3.5, "pooling_mode_cls_token": true}`)}
		}, "", "word_embedding_dimension = 3.5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := hfFixture(t, "onnx/model.onnx", "x", "{}")
			if c.edit != nil {
				c.edit(m)
			}
			_, err := ReadHFFolder(m, c.onnx)
			if err == nil || !strings.Contains(err.Error(), c.wants) {
				t.Errorf("error %v, want it to contain %q", err, c.wants)
			}
		})
	}
}

// Without sentence_bert_config.json the length is config.json's max_position_embeddings capped at
// 512; a CLS model with prompts gives its query and document prefixes.
func TestReadHFFolderDefaultsAndPrompts(t *testing.T) {
	m := hfFixture(t, "model.onnx", "x", "{}")
	delete(m, "sentence_bert_config.json")
	m["1_Pooling/config.json"] = &fstest.MapFile{Data: []byte(`{"word_embedding_dimension": 384, "pooling_mode_cls_token": true}`)}
	m["config_sentence_transformers.json"] = &fstest.MapFile{Data: []byte(`{"prompts": {"query": "query: ", "passage": "passage: "}}`)}
	got, err := ReadHFFolder(m, "")
	if err != nil {
		t.Fatal(err)
	}
	if got.MaxLength != 512 || got.Pooling != PoolingCLS || got.QueryPrefix != "query: " || got.DocPrefix != "passage: " || got.ONNX != "model.onnx" {
		t.Errorf("got %+v", got)
	}
}

// FuzzReadHFFolder: any content of the three configuration files gives a model or an error,
// never a panic, and an accepted model is runnable (known pooling, positive sizes).
func FuzzReadHFFolder(f *testing.F) {
	base := hfFixture(f, "model.onnx", "x", "{}")
	f.Add(base["config.json"].Data, base["modules.json"].Data, base["1_Pooling/config.json"].Data)
	f.Add([]byte(`{"hidden_size": 768}`), []byte(`[{"type":"a.Transformer"},{"path":"p","type":"a.Pooling"}]`), []byte(`{"pooling_mode_cls_token": true}`))
	f.Add([]byte(`{}`), []byte(`[]`), []byte(`{"word_embedding_dimension": -1, "pooling_mode_mean_tokens": true}`))
	f.Fuzz(func(t *testing.T, config, modules, pooling []byte) {
		m := fstest.MapFS{}
		for k, v := range base {
			m[k] = v
		}
		m["config.json"] = &fstest.MapFile{Data: config}
		m["modules.json"] = &fstest.MapFile{Data: modules}
		m["1_Pooling/config.json"] = &fstest.MapFile{Data: pooling}
		got, err := ReadHFFolder(m, "")
		if err != nil {
			return
		}
		if (got.Pooling != PoolingCLS && got.Pooling != PoolingMean) || got.Dim <= 0 || got.MaxLength < 2 {
			t.Fatalf("accepted an unrunnable model %+v", got)
		}
	})
}

// Importing the HF layout of all-MiniLM-L6-v2 (its published configuration files around the
// installed ONNX export) gives the settings the set-up's folder was written with by hand, the
// digests of the copied files, and the same embeddings.
func TestImportHFMatchesTheInstalledFolder(t *testing.T) {
	lib := testassets.ORTLibrary(t)
	installed := testassets.Model(t, "all-minilm-l6-v2")
	src := t.TempDir()
	for rel, f := range hfFixture(t, "onnx/model.onnx", "", "") {
		if rel == "onnx/model.onnx" || rel == "tokenizer.json" {
			continue
		}
		writeFile(t, filepath.Join(src, rel), f.Data)
	}
	for from, to := range map[string]string{"model.onnx": "onnx/model.onnx", "tokenizer.json": "tokenizer.json"} {
		data, err := os.ReadFile(filepath.Join(installed, from))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(src, to), data)
	}
	models := t.TempDir()
	dir, cfg, err := ImportHF(src, models, ImportOptions{Name: "minilm-imported"})
	if err != nil {
		t.Fatal(err)
	}
	want, err := LoadConfig(installed)
	if err != nil {
		t.Fatal(err)
	}
	got, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Pooling != want.Pooling || got.MaxLength != want.MaxLength || got.Dim != want.Dim || got.QueryPrefix != want.QueryPrefix ||
		got.Source.ModelSHA256 != want.Source.ModelSHA256 || got.Source.TokenizerSHA256 != want.Source.TokenizerSHA256 || cfg.Name != "minilm-imported" {
		t.Errorf("imported %+v\ninstalled %+v", got, want)
	}
	if _, _, err := ImportHF(src, models, ImportOptions{Name: "minilm-imported"}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second import: %v", err)
	}
	rt := NewRuntime(lib)
	texts := []string{"find cheap flights to Rome", "send an email to my manager"}
	var vecs [2][][]float32
	for i, d := range []string{installed, dir} {
		m, err := Open(d, Options{Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		if vecs[i], err = m.EncodeDocs(texts); err != nil {
			t.Fatal(err)
		}
		m.Close()
	}
	for i := range texts {
		for j := range vecs[0][i] {
			if math.Abs(float64(vecs[0][i][j]-vecs[1][i][j])) > 1e-6 {
				t.Fatalf("text %d dim %d: installed %v, imported %v", i, j, vecs[0][i][j], vecs[1][i][j])
			}
		}
	}
	// A byte changed in the imported model is refused on the next load.
	onnx := filepath.Join(dir, "model.onnx")
	data, _ := os.ReadFile(onnx)
	data[len(data)/2] ^= 1
	writeFile(t, onnx, data)
	if _, err := Open(dir, Options{Runtime: NewRuntime(lib)}); err == nil || !strings.Contains(err.Error(), "source.model_sha256") {
		t.Errorf("tampered model opened: %v", err)
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
