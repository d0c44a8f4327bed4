package retrieve

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/bench"
)

// fixedRetriever returns a fixed candidate list (truncated to k).
type fixedRetriever []Candidate

func (f fixedRetriever) Name() string { return "fixed" }
func (f fixedRetriever) Search(_ string, k int) ([]Candidate, error) {
	return slices.Clone(f[:min(k, len(f))]), nil
}

// lengthScorer scores a document by the number of times the query's first word occurs in it.
type lengthScorer struct{ calls [][]string }

func (s *lengthScorer) Name() string { return "count" }
func (s *lengthScorer) Score(query string, docs []string) ([]float64, error) {
	s.calls = append(s.calls, docs)
	word := strings.Fields(query)[0]
	out := make([]float64, len(docs))
	for i, d := range docs {
		out[i] = float64(strings.Count(d, word))
	}
	return out, nil
}

func TestRerank(t *testing.T) {
	docs := []bench.Doc{
		{ID: "a", Title: "A", Text: "rain"},
		{ID: "b", Title: "B", Text: "rain rain rain"},
		{ID: "c", Title: "C", Text: "sun"},
		{ID: "d", Title: "D", Text: "rain rain"},
		{ID: "e", Title: "E", Text: "rain rain rain rain"}, // best, but outside the first stage's top 4
	}
	first := fixedRetriever{{ID: "c", Index: 2, Score: 9}, {ID: "a", Index: 0, Score: 8}, {ID: "d", Index: 3, Score: 7}, {ID: "b", Index: 1, Score: 6}, {ID: "e", Index: 4, Score: 5}}
	scorer := &lengthScorer{}
	r, err := NewRerank(first, scorer, docs, 4)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Search("rain please", 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []Candidate{{ID: "b", Index: 1, Score: 3}, {ID: "d", Index: 3, Score: 2}, {ID: "a", Index: 0, Score: 1}}
	if !slices.Equal(got, want) {
		t.Errorf("Search = %v, want %v", got, want)
	}
	if wantTexts := []string{"C: sun", "A: rain", "D: rain rain", "B: rain rain rain"}; !slices.Equal(scorer.calls[0], wantTexts) {
		t.Errorf("scored %q, want %q", scorer.calls[0], wantTexts)
	}
	// Ties keep the first stage's order: "sun" scores 0 for every doc without "sun".
	got, _ = r.Search("moon", 4)
	if ids := []string{got[0].ID, got[1].ID, got[2].ID, got[3].ID}; !slices.Equal(ids, []string{"c", "a", "d", "b"}) {
		t.Errorf("all-tie order %v, want first-stage order c a d b", ids)
	}
	if r.Name() != "fixed+rerank:count" {
		t.Errorf("Name = %s", r.Name())
	}
	if _, err := NewRerank(first, scorer, docs, 0); err == nil {
		t.Error("top-N 0: want an error")
	}
	bad, _ := NewRerank(fixedRetriever{{ID: "x", Index: 9}}, scorer, docs, 4)
	if _, err := bad.Search("rain", 1); err == nil {
		t.Error("index outside the corpus: want an error")
	}
	failing, _ := NewRerank(first, failScorer{}, docs, 4)
	if _, err := failing.Search("rain", 1); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("scorer failure: error %v", err)
	}
}

type failScorer struct{}

func (failScorer) Name() string                              { return "fail" }
func (failScorer) Score(string, []string) ([]float64, error) { return nil, errors.New("boom") }
