package train

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/bench"

	"github.com/rated-dev/rated/internal/fuzzcount"
)

// FuzzReadNegatives feeds negatives.jsonl (seed: the Syn fixture's first records,
// testdata/fuzz/FuzzReadNegatives): any input is an error naming the file and line, or negatives
// that are all corpus documents.
func FuzzReadNegatives(f *testing.F) {
	docs := map[string]bench.Doc{}
	for _, id := range []string{"crewai/composio-crewai/bitly_create_a_bitlink", "crewai/composio-crewai/serpapi_google_flights_search",
		"langchain/composio-langchain/whatsapp_send_message", "a", "b"} {
		docs[id] = bench.Doc{ID: id}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzReadNegatives")
		path := filepath.Join(t.TempDir(), "negatives.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, kinds := range [][]string{nil, {NegativeRandom}} {
			negs, err := readNegatives(path, docs, kinds)
			if err != nil {
				if !strings.Contains(err.Error(), path) {
					t.Fatalf("error names no file: %v", err)
				}
				return
			}
			for key, ids := range negs {
				for _, id := range ids {
					if _, ok := docs[id]; !ok {
						t.Fatalf("negative %q of %v is not in the corpus", id, key)
					}
				}
			}
		}
	})
}

// FuzzLoadArtifacts feeds artifacts.json (seed: the installed test artifacts' description,
// testdata/fuzz/FuzzLoadArtifacts): any input is an error naming the file, or a description
// whose shapes can size a step.
func FuzzLoadArtifacts(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzLoadArtifacts")
		dir := t.TempDir()
		for _, name := range []string{"training_model.onnx", "eval_model.onnx", "optimizer_model.onnx", "checkpoint"} {
			os.WriteFile(filepath.Join(dir, name), nil, 0o644)
		}
		if err := os.WriteFile(filepath.Join(dir, "artifacts.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := LoadArtifacts(dir)
		if err != nil {
			if !strings.Contains(err.Error(), dir) {
				t.Fatalf("error names no file: %v", err)
			}
			return
		}
		q, d := a.Rows()
		if q < 1 || d < 1 || !(a.Tau > 0) {
			t.Fatalf("artifacts %+v give rows %d, %d", a, q, d)
		}
	})
}

// FuzzFloatInitializers feeds ONNX model bytes (seed: a hand-encoded model with a packed, a raw
// and a non-float initializer): any input is an error, or float initializers that survive a
// rewrite with their own values bit for bit (replaceInitializers then floatInitializers).
func FuzzFloatInitializers(f *testing.F) {
	packed := tensorBytes("w", []byte{2}, 1, wrap(0x22, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}))
	raw := tensorBytes("c", []byte{1}, 1, wrap(0x4a, []byte{0, 0, 0x40, 0x40}))
	ints := tensorBytes("i", []byte{1}, 7, nil)
	graph := append(append(wrap(0x2a, packed), wrap(0x2a, raw)...), wrap(0x2a, ints)...)
	f.Add(append([]byte{0x08, 8}, wrap(0x3a, graph)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzFloatInitializers")
		got, err := floatInitializers(data)
		if err != nil {
			return
		}
		out, _, err := replaceInitializers(data, got)
		if err != nil {
			// Two initializers of one name with different sizes: the rewrite refuses one of them.
			return
		}
		again, err := floatInitializers(out)
		if err != nil {
			t.Fatalf("rewritten model does not parse: %v", err)
		}
		for n, v := range got {
			w := again[n]
			if len(w) != len(v) {
				t.Fatalf("%s: %d values, %d after the rewrite", n, len(v), len(w))
			}
			for i := range v {
				if math.Float32bits(v[i]) != math.Float32bits(w[i]) {
					t.Fatalf("%s[%d]: %x, %x after the rewrite", n, i, math.Float32bits(v[i]), math.Float32bits(w[i]))
				}
			}
		}
	})
}
