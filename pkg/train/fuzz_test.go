package train

import (
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
