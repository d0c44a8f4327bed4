package retrieve

import (
	"math"
	"testing"

	"github.com/rated-dev/rated/pkg/bench"
)

var _ Retriever = (*TFIDF)(nil)

// Hand-computed corpus: d0=[a b], d1=[a], d2=[c]; N=3, smoothed idf(a)=ln(4/3)+1,
// idf(b)=idf(c)=ln(4/2)+1.
func TestTFIDFHandComputed(t *testing.T) {
	docs := []bench.Doc{{ID: "d0", Text: "a b"}, {ID: "d1", Text: "A"}, {ID: "d2", Text: "c"}}
	ia, ib := math.Log(4.0/3.0)+1, math.Log(2)+1
	n0 := math.Hypot(ia, ib)
	cases := []struct {
		params TFIDFParams
		query  string
		want   []Candidate
	}{
		{TFIDFParams{}, "a", []Candidate{{"d1", 1, 1}, {"d0", 0, ia / n0}}},
		{TFIDFParams{}, "b a zzz", []Candidate{{"d0", 0, 1}, {"d1", 1, ia / n0}}},
		// Raw tf: q = (2 ia, ib); cos(q, d0) = (2 ia² + ib²) / (|q| n0), cos(q, d1) = 2 ia / |q|.
		{TFIDFParams{}, "a a b", []Candidate{
			{"d0", 0, (2*ia*ia + ib*ib) / (math.Hypot(2*ia, ib) * n0)},
			{"d1", 1, 2 * ia / math.Hypot(2*ia, ib)},
		}},
		// Sublinear tf: q = ((1+ln2) ia, ib).
		{TFIDFParams{Sublinear: true}, "a a b", []Candidate{
			{"d0", 0, ((1+math.Ln2)*ia*ia + ib*ib) / (math.Hypot((1+math.Ln2)*ia, ib) * n0)},
			{"d1", 1, (1 + math.Ln2) * ia / math.Hypot((1+math.Ln2)*ia, ib)},
		}},
		{TFIDFParams{}, "zzz", nil},
	}
	for _, c := range cases {
		m := NewTFIDF(docs, c.params)
		got, err := m.Search(c.query, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("%+v Search(%q) = %+v, want %+v", c.params, c.query, got, c.want)
		}
		for i := range got {
			if got[i].ID != c.want[i].ID || got[i].Index != c.want[i].Index || math.Abs(got[i].Score-c.want[i].Score) > 1e-12 {
				t.Errorf("%+v Search(%q)[%d] = %+v, want %+v", c.params, c.query, i, got[i], c.want[i])
			}
		}
	}
}
