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

// TestRRFTiesAreExact: x ranked 1, 7, 2 and y ranked 7, 2, 1 by three parts have the same
// reciprocal ranks; summed in part order their sums differed by an ulp (y came first). Summed in
// rank order they are equal, and corpus order puts x first.
func TestRRFTiesAreExact(t *testing.T) {
	// Each part ranks x and y at the given (1-based) positions, fillers of its own elsewhere
	// (each ranked by one part only, so below x and y).
	part := func(name string, base, xAt, yAt int) fixedRuns {
		r := make([]Candidate, 7)
		for i := range r {
			r[i] = Candidate{ID: name + string(rune('a'+i)), Index: base + i}
		}
		r[xAt-1], r[yAt-1] = Candidate{ID: "x", Index: 0}, Candidate{ID: "y", Index: 1}
		return fixedRuns{name, map[string][]Candidate{"q": r}}
	}
	f, err := NewRRF(part("A", 10, 1, 7), part("B", 20, 7, 2), part("C", 30, 2, 1))
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Search("q", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "x" || got[1].ID != "y" || got[0].Score != got[1].Score {
		t.Fatalf("top two %+v, want x then y with equal scores", got)
	}
}
