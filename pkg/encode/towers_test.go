package encode

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
)

// TestDualTowerFolder builds a DRAGON-style folder whose query tower is all-MiniLM-L6-v2 and
// whose doc tower is bge-small-en-v1.5 (both BERT uncased vocabularies, 384 dims, CLS pooling
// here) and checks that each tower runs its own file: queries equal those of a MiniLM-only folder
// and documents those of a bge-only folder, bit for bit, with each tower's prefix.
func TestDualTowerFolder(t *testing.T) {
	rt := sharedRuntime(t)
	mini := testassets.Model(t, "all-minilm-l6-v2")
	bge := testassets.Model(t, "bge-small-en-v1.5")
	folder := func(yaml string, links map[string]string) string {
		dir := t.TempDir()
		for name, target := range links {
			if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dual := folder("query_model: query.onnx\ndoc_model: doc.onnx\ntokenizer: tokenizer.json\npooling: cls\nquery_prefix: \"q: \"\ndoc_prefix: \"d: \"\n",
		map[string]string{"query.onnx": filepath.Join(mini, "model.onnx"), "doc.onnx": filepath.Join(bge, "model.onnx"), "tokenizer.json": filepath.Join(bge, "tokenizer.json")})
	miniOnly := folder("model: model.onnx\ntokenizer: tokenizer.json\npooling: cls\nquery_prefix: \"q: \"\n",
		map[string]string{"model.onnx": filepath.Join(mini, "model.onnx"), "tokenizer.json": filepath.Join(bge, "tokenizer.json")})
	bgeOnly := folder("model: model.onnx\ntokenizer: tokenizer.json\npooling: cls\ndoc_prefix: \"d: \"\n",
		map[string]string{"model.onnx": filepath.Join(bge, "model.onnx"), "tokenizer.json": filepath.Join(bge, "tokenizer.json")})
	open := func(dir string) *Model {
		m, err := Open(dir, Options{Runtime: rt, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return m
	}
	d, mo, bo := open(dual), open(miniOnly), open(bgeOnly)
	if d.ModelSHA256(TowerQuery) == d.ModelSHA256(TowerDoc) {
		t.Fatal("dual folder: both towers report the same model file")
	}
	texts := []string{"book a table for two tonight", "Restaurant reservations: book tables at restaurants."}
	dq, err := d.EncodeQueries(texts)
	if err != nil {
		t.Fatal(err)
	}
	dd, err := d.EncodeDocs(texts)
	if err != nil {
		t.Fatal(err)
	}
	mq, _ := mo.EncodeQueries(texts)
	bd, _ := bo.EncodeDocs(texts)
	for i := range texts {
		if !slices.Equal(dq[i], mq[i]) {
			t.Errorf("text %d: dual query tower differs from the MiniLM folder", i)
		}
		if !slices.Equal(dd[i], bd[i]) {
			t.Errorf("text %d: dual doc tower differs from the bge folder", i)
		}
		if slices.Equal(dq[i], dd[i]) {
			t.Errorf("text %d: query and doc towers gave the same vector", i)
		}
	}
}
