package retrieve

import (
	"math"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/rated-dev/rated/pkg/bench"
)

var _ Retriever = (*BM25)(nil)

// Hand-computed corpus: tokens d0=[alpha beta beta], d1=[beta gamma], d2=[delta]; N=3, avgdl=2.
// idf(alpha)=idf(gamma)=idf(delta)=ln(2.5/1.5)=L; idf(beta)=ln(1.5/2.5)=-L < 0, so it is floored
// to 0.25 * mean idf = 0.25 * (3L-L)/4 = L/8. Length norms K1*(1-B+B*dl/avgdl): d0 2.0625,
// d1 1.5, d2 0.9375.
func handCorpus() []bench.Doc {
	return []bench.Doc{
		{ID: "d0", Title: "alpha", Text: "beta beta"},
		{ID: "d1", Title: "beta", Text: "gamma"},
		{ID: "d2", Title: "delta"},
	}
}

func TestBM25HandComputed(t *testing.T) {
	L := math.Log(5.0 / 3.0)
	m := NewBM25(handCorpus(), DefaultBM25Params())
	cases := []struct {
		query string
		k     int
		want  []Candidate
	}{
		// beta: d0 tf=2 -> L/8 * 2*2.5/(2+2.0625) = 2L/13; d1 tf=1 -> L/8 * 2.5/2.5 = L/8.
		{"beta", 10, []Candidate{{"d0", 0, 2 * L / 13}, {"d1", 1, L / 8}}},
		// Repeated query tokens count once per occurrence, as in rank-bm25.
		{"BETA beta", 10, []Candidate{{"d0", 0, 4 * L / 13}, {"d1", 1, L / 4}}},
		// d2: L*2.5/1.9375 = 40L/31; d1: L*2.5/2.5 = L; d0: L*2.5/3.0625 = 40L/49.
		{"Alpha, DELTA & gamma?", 10, []Candidate{{"d2", 2, 40 * L / 31}, {"d1", 1, L}, {"d0", 0, 40 * L / 49}}},
		{"Alpha, DELTA & gamma?", 2, []Candidate{{"d2", 2, 40 * L / 31}, {"d1", 1, L}}},
		{"nothing matches", 10, nil},
		{"alpha", 0, nil},
	}
	for _, c := range cases {
		got, err := m.Search(c.query, c.k)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("Search(%q, %d) = %+v, want %+v", c.query, c.k, got, c.want)
		}
		for i := range got {
			if got[i].ID != c.want[i].ID || got[i].Index != c.want[i].Index || math.Abs(got[i].Score-c.want[i].Score) > 1e-12 {
				t.Errorf("Search(%q, %d)[%d] = %+v, want %+v", c.query, c.k, i, got[i], c.want[i])
			}
		}
	}
	if idf, ok := m.IDF("beta"); !ok || math.Abs(idf-L/8) > 1e-15 {
		t.Errorf("IDF(beta) = %v, %v; want %v (epsilon floor)", idf, ok, L/8)
	}
	scores := m.Scores("beta zzz")
	want := []float64{2 * L / 13, L / 8, 0}
	for i := range want {
		if math.Abs(scores[i]-want[i]) > 1e-12 {
			t.Errorf("Scores(beta)[%d] = %v, want %v", i, scores[i], want[i])
		}
	}
}

func TestBM25TiesByCorpusOrder(t *testing.T) {
	docs := []bench.Doc{
		{ID: "a", Text: "a"}, {ID: "c1", Text: "c"}, {ID: "c2", Text: "c"}, {ID: "d", Text: "d"}, {ID: "e", Text: "e"},
	}
	m := NewBM25(docs, DefaultBM25Params())
	for k, want := range map[int][]string{1: {"c1"}, 2: {"c1", "c2"}, 5: {"c1", "c2"}} {
		got, _ := m.Search("c", k)
		if len(got) != len(want) {
			t.Fatalf("k=%d: got %+v, want %v", k, got, want)
		}
		for i := range want {
			if got[i].ID != want[i] {
				t.Errorf("k=%d: got %+v, want %v", k, got, want)
			}
		}
		if len(got) == 2 && got[0].Score != got[1].Score {
			t.Errorf("identical documents scored %v and %v", got[0].Score, got[1].Score)
		}
	}
}

func TestBM25EmptyCorpus(t *testing.T) {
	m := NewBM25(nil, DefaultBM25Params())
	got, err := m.Search("anything", 5)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty corpus: got %+v, %v", got, err)
	}
}

func TestBM25SearchBatchMatchesSearch(t *testing.T) {
	m := NewBM25(handCorpus(), DefaultBM25Params())
	queries := []string{"beta", "alpha delta gamma", "none", "", "beta beta gamma"}
	batch, err := m.SearchBatch(queries, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range queries {
		one, _ := m.Search(q, 2)
		if !reflect.DeepEqual(batch[i], one) {
			t.Errorf("SearchBatch[%d] = %+v, Search(%q) = %+v", i, batch[i], q, one)
		}
	}
}

// TestLexicalSearchMatchesBruteForce checks both accumulation paths of the inverted index (dense
// scan for long postings, touched list for short ones) against a plain sort of Scores: the
// documents sharing a token with the query (found by Tokenize, not by the index), those scoring
// > 0 first by score, then those scoring <= 0 by score, ties by corpus order. BM25 with Epsilon 0
// floors every term in more than half the corpus to idf 0, so its matches on such terms score 0
// and take the second group.
func TestLexicalSearchMatchesBruteForce(t *testing.T) {
	docs, queries := speedData()
	docs, queries = docs[:400], queries[:300]
	// Rare single-word queries take the touched-list path; long queries the dense path; "w0"
	// (in most documents) scores 0 everywhere under Epsilon 0.
	queries = append(queries, "w29000", "w17 w2999", "w5000 w5001 w5002", "w0", "w0 w29000", "w0 w1")
	docTokens := make([]map[string]bool, len(docs))
	for d, doc := range docs {
		docTokens[d] = map[string]bool{}
		for _, tok := range Tokenize(DocText(doc)) {
			docTokens[d][tok] = true
		}
	}
	zeroMatches := 0
	for _, m := range []scorer{
		NewBM25(docs, DefaultBM25Params()),
		NewBM25(docs, BM25Params{K1: 1.5, B: 0.75, Epsilon: 0}),
		NewTFIDF(docs, TFIDFParams{Sublinear: true}),
	} {
		for _, q := range queries {
			scores := m.Scores(q)
			var positive, rest []int
			for d := range docs {
				shares := false
				for _, tok := range Tokenize(q) {
					shares = shares || docTokens[d][tok]
				}
				switch {
				case !shares:
				case scores[d] > 0:
					positive = append(positive, d)
				default:
					rest = append(rest, d)
				}
			}
			zeroMatches += len(rest)
			byScore := func(ds []int) {
				sort.SliceStable(ds, func(a, b int) bool { return scores[ds[a]] > scores[ds[b]] })
			}
			byScore(positive)
			byScore(rest)
			want := append(positive, rest...)
			if len(want) > 20 {
				want = want[:20]
			}
			got, err := m.Search(q, 20)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s %q: %d candidates, want %d", m.Name(), q, len(got), len(want))
			}
			for i := range got {
				if got[i].Index != want[i] || got[i].Score != scores[want[i]] {
					t.Fatalf("%s %q rank %d: %+v, want doc %d score %v", m.Name(), q, i, got[i], want[i], scores[want[i]])
				}
			}
		}
	}
	if zeroMatches == 0 {
		t.Fatal("no query matched a document with a score <= 0: the second group went untested")
	}
}

// TestBM25TinyCatalogStillRanks: with two tools every term that occurs in one of them has
// idf = ln(2 - 1 + 0.5) - ln(1 + 0.5) = 0 and the vocabulary's mean idf is 0, so every score is
// 0 (rank-bm25 gives [0, 0] too) and Search returned nothing for any query. Matching documents
// come back, ranked by score then corpus order; a document sharing no term does not.
func TestBM25TinyCatalogStillRanks(t *testing.T) {
	m := NewBM25([]bench.Doc{{ID: "mail", Title: "mail", Text: "send an email"}, {ID: "slack", Title: "slack", Text: "post a message"}}, DefaultBM25Params())
	ids := func(q string) []string {
		got, err := m.Search(q, 5)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range got {
			if c.Score != 0 {
				t.Errorf("%q: %s scores %v, want 0", q, c.ID, c.Score)
			}
			out = append(out, c.ID)
		}
		return out
	}
	for q, want := range map[string][]string{"post it": {"slack"}, "email or post": {"mail", "slack"}, "weather": nil} {
		if got := ids(q); !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
	}
	// Positive scores first: in "a b", "a c", "d", term a (in 2 of 3) has a negative idf,
	// floored to 0.25 × the mean idf > 0, so both its documents score > 0 and rank by length.
	m3 := NewBM25([]bench.Doc{{ID: "1", Text: "a b"}, {ID: "2", Text: "a c"}, {ID: "3", Text: "d"}}, DefaultBM25Params())
	got, _ := m3.Search("a", 1)
	if len(got) != 1 || got[0].ID != "1" || !(got[0].Score > 0) {
		t.Fatalf("k = 1 over two positive matches: %+v", got)
	}
}
