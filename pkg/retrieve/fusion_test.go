package retrieve

import (
	"math"
	"testing"
)

// fixedRuns returns a fixed ranking per query.
type fixedRuns struct {
	name string
	runs map[string][]Candidate
}

func (f fixedRuns) Name() string { return f.name }
func (f fixedRuns) Search(q string, k int) ([]Candidate, error) {
	r := f.runs[q]
	return r[:min(k, len(r))], nil
}

func TestRRFHandComputed(t *testing.T) {
	a := fixedRuns{"A", map[string][]Candidate{"q": {{ID: "x", Index: 0}, {ID: "y", Index: 1}, {ID: "z", Index: 2}}}}
	b := fixedRuns{"B", map[string][]Candidate{"q": {{ID: "z", Index: 2}, {ID: "w", Index: 3}}}}
	f, err := NewRRF(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != "RRF(A + B)" {
		t.Errorf("name %q", f.Name())
	}
	got, err := f.Search("q", 10)
	if err != nil {
		t.Fatal(err)
	}
	// z: 1/63 + 1/61; x: 1/61; w: 1/62; y: 1/62 (tie with w: corpus order, y first).
	want := []struct {
		id    string
		score float64
	}{{"z", 1.0/63 + 1.0/61}, {"x", 1.0 / 61}, {"y", 1.0 / 62}, {"w", 1.0 / 62}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i, w := range want {
		if got[i].ID != w.id || math.Abs(got[i].Score-w.score) > 1e-15 {
			t.Errorf("rank %d: %+v, want %s %.17g", i, got[i], w.id, w.score)
		}
	}
	if top, _ := f.Search("q", 1); len(top) != 1 || top[0].ID != "z" {
		t.Errorf("k=1: %+v", top)
	}
	bad := fixedRuns{"C", map[string][]Candidate{"q": {{ID: "other", Index: 0}}}}
	g, _ := NewRRF(a, bad)
	if _, err := g.Search("q", 5); err == nil {
		t.Error("retrievers over different corpora were fused")
	}
	if _, err := NewRRF(a); err == nil {
		t.Error("fusion of one retriever accepted")
	}
}
