package encode

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
)

// referenceTexts are varied inputs: tool descriptions, queries, punctuation, accents, CJK,
// emoji, an empty string and texts longer than every max_length (truncation).
var referenceTexts = []string{
	"Get the current weather and a 7-day forecast for any city.",
	"search_flights: Find flights between two airports (IATA codes) on a date; returns prices in USD.",
	"I need to convert 250 EUR to JPY and then email the result to my accountant.",
	"Slack: post a message to a channel",
	"",
	"   ",
	"Crème brûlée recipes — naïve café façade, Ångström, Straße.",
	"北京的天气怎么样？ 東京の天気は？ 서울 날씨",
	"Send 🚀 emoji notifications via Telegram bot API!!!",
	"GitHub: create an issue, list pull requests, merge branches (requires OAuth token).",
	"What's the stock price of AAPL, MSFT & GOOG right now?",
	"n8n-nodes-base.httpRequest: Makes an HTTP request and returns the response data",
	"UPPER CASE TEXT WITH NUMBERS 1234567890 AND SYMBOLS #@$%^&*()",
	strings.Repeat("The tool retrieves documents from a vector database and reranks them. ", 60),
	strings.Repeat("supercalifragilisticexpialidocious ", 120),
	"tab\tseparated\nnew line\r\nwindows",
	"a",
	"Translate 'good morning' into French, German and Spanish.",
}

func pythonHasTokenizers(t *testing.T, python string) {
	t.Helper()
	if err := exec.Command(python, "-c", "import tokenizers, onnxruntime").Run(); err != nil {
		if testassets.Required() {
			t.Fatalf("reference venv %s lacks tokenizers/onnxruntime (RATED_REQUIRE_ASSETS=1): run rated setup venv", python)
		}
		t.Skipf("reference venv %s lacks tokenizers/onnxruntime: run rated setup venv", python)
	}
}

// textReferenceModels are the installed folders whose embeddings are checked against Python: the
// two default encoders, E5 in fp32 and int8 (rated setup baselines) and the SPLADE encoder, whose
// "embedding" is an unnormalised 30,522-term weight vector (output splade, pooling none).
//
// perText runs the Go side one text per ONNX Runtime call, as the Python side does. An int8
// export quantises its activations dynamically, with one scale per tensor, i.e. per batch: a
// text's embedding then depends on the texts batched with it (measured on e5-small-v2-q: cosine
// 0.9967-0.9983 between batched and one-at-a-time embeddings of the same text), so only
// one-at-a-time runs can be compared.
var textReferenceModels = []struct {
	name    string
	perText bool
}{{"bge-small-en-v1.5", false}, {"all-minilm-l6-v2", false}, {"e5-small-v2", false}, {"e5-small-v2-q", true}, {"splade-tiny", false}}

// TestTextEmbeddingsMatchPython embeds texts end to end (prefix, pkg/encode/tokenizer, batched
// ONNX Runtime with dynamic padding, pooling, normalisation, embedding cache) and compares each
// vector with Hugging Face tokenizers + Python onnxruntime on the same model: cosine >= 0.9999.
// A second model over the same cache folder must return the cached vectors bit for bit.
// RATED_TEXT_REFERENCE_DIRS (folders separated by commas) checks more folders the same way, e.g.
// the two towers of a rated finetune --towers dual output, each against its own ONNX file.
func TestTextEmbeddingsMatchPython(t *testing.T) {
	rt := sharedRuntime(t)
	python := testassets.Python(t)
	pythonHasTokenizers(t, python)
	models := slices.Clone(textReferenceModels)
	for _, dir := range strings.Split(os.Getenv("RATED_TEXT_REFERENCE_DIRS"), ",") {
		if dir != "" {
			models = append(models, struct {
				name    string
				perText bool
			}{dir, false})
		}
	}
	for _, rm := range models {
		name := rm.name
		t.Run(filepath.Base(name), func(t *testing.T) {
			dir := name
			if !filepath.IsAbs(dir) && !strings.Contains(dir, string(filepath.Separator)) {
				dir = testassets.Model(t, name)
			}
			cacheDir := t.TempDir()
			// A small token budget: the long texts run alone, short ones five at a time, so rows
			// of one call go through batches of several shapes.
			batch := 5
			if rm.perText {
				batch = 1
			}
			m, err := Open(dir, Options{Runtime: rt, Threads: 1, BatchSize: batch, BatchTokens: 96, CacheDir: cacheDir})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			cfg := m.Config()
			for _, tower := range []string{TowerQuery, TowerDoc} {
				prefix := cfg.QueryPrefix
				encodeFn := m.EncodeQueries
				if tower == TowerDoc {
					prefix, encodeFn = cfg.DocPrefix, m.EncodeDocs
				}
				i := slices.IndexFunc(m.Towers(), func(ti TowerInfo) bool { return ti.Tower == tower })
				if i < 0 {
					t.Fatalf("%s: no %s tower", dir, tower)
				}
				info := m.Towers()[i]
				got, err := encodeFn(referenceTexts)
				if err != nil {
					t.Fatal(err)
				}
				prefixed := make([]string, len(referenceTexts))
				for i, s := range referenceTexts {
					prefixed[i] = prefix + s
				}
				body, _ := json.Marshal(map[string]any{
					"model": info.ModelFile, "tokenizer": info.TokenizerFile,
					"pooling": cfg.Pooling, "max_length": cfg.MaxLength, "texts": prefixed,
					"output": info.Output, "normalize": cfg.NormalizeEnabled(),
				})
				cmd := exec.Command(python, "testdata/text_reference.py")
				cmd.Stdin = bytes.NewReader(body)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("python reference: %v\n%s", err, stderr.String())
				}
				var ref struct {
					Vectors [][]float64 `json:"vectors"`
					Lengths []int       `json:"lengths"`
				}
				if err := json.Unmarshal(out, &ref); err != nil {
					t.Fatal(err)
				}
				if slices.Max(ref.Lengths) != cfg.MaxLength {
					t.Errorf("no reference text reached max_length %d (lengths %v): truncation untested", cfg.MaxLength, ref.Lengths)
				}
				worst := 1.0
				for i := range referenceTexts {
					c := cosine(got[i], ref.Vectors[i])
					worst = min(worst, c)
					if c < 0.9999 {
						t.Errorf("%s tower, text %d %.40q (%d tokens): cosine %.6f, want >= 0.9999", tower, i, referenceTexts[i], ref.Lengths[i], c)
					}
				}
				t.Logf("%s %s tower: %d texts, worst cosine %.7f", name, tower, len(referenceTexts), worst)

				// The cache: a fresh model over the same folder returns identical vectors.
				m2, err := Open(dir, Options{Runtime: rt, Threads: 1, CacheDir: cacheDir})
				if err != nil {
					t.Fatal(err)
				}
				again, err := map[string]func([]string) ([][]float32, error){TowerQuery: m2.EncodeQueries, TowerDoc: m2.EncodeDocs}[tower](referenceTexts)
				m2.Close()
				if err != nil {
					t.Fatal(err)
				}
				for i := range got {
					if !slices.Equal(got[i], again[i]) {
						t.Fatalf("%s tower text %d: cached vector differs", tower, i)
					}
				}
			}
			files, _ := filepath.Glob(filepath.Join(cacheDir, "*", "*.bin"))
			if len(files) != 2 {
				t.Errorf("cache files %v, want query.bin and doc.bin", files)
			}
			for _, f := range files {
				st, _ := os.Stat(f)
				// header + one record (32-byte key + dim float32) per distinct text.
				distinct := len(referenceTexts)
				if want := int64(len(cacheMagic) + 4 + distinct*(32+4*m.Dim())); st.Size() != want {
					t.Errorf("%s: %d bytes, want %d", f, st.Size(), want)
				}
			}
		})
	}
}
