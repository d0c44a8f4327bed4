package retrieve

import (
	"fmt"
	"math"

	"github.com/rated-dev/rated/pkg/bench"
)

// LuceneBM25Params are the parameters of LuceneBM25.
type LuceneBM25Params struct {
	// K1 saturates term frequency.
	K1 float64
	// B is the strength of document length normalisation (0 = none, 1 = full).
	B float64
}

// PyseriniBM25Params returns Pyserini's and Anserini's BM25 defaults: k1 = 0.9, b = 0.4.
func PyseriniBM25Params() LuceneBM25Params { return LuceneBM25Params{K1: 0.9, B: 0.4} }

// LuceneBM25 is BM25 as Lucene (8 and later) scores it, over EnglishAnalyzer's terms: the
// stronger lexical baseline of Anserini and Pyserini. Its scores equal those of bm25s's
// BM25(method="lucene") in float64 given the same terms:
//
//	idf(t)      = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))
//	score(q, d) = Σ_{t in q, with repeats} idf(t) * tf(t,d) / (K1*((1 - B) + B*|d|/avgdl) + tf(t,d))
//
// where N is the number of documents, n(t) the number containing t and |d| the number of terms
// of d. (Lucene itself stores |d| in one byte, so its scores differ from these by that rounding;
// its ranking function is the same.) A LuceneBM25 is safe for concurrent use.
type LuceneBM25 struct {
	params LuceneBM25Params
	ix     *lexicalIndex
}

// NewLuceneBM25 indexes docs (in corpus order, which breaks ties in Search) with EnglishAnalyzer.
func NewLuceneBM25(docs []bench.Doc, params LuceneBM25Params) *LuceneBM25 {
	ix, tc := buildLexicalIndex(docs, EnglishAnalyzer)
	n := float64(len(docs))
	total := 0
	for _, l := range tc.docLen {
		total += l
	}
	avgdl := 0.0
	if len(docs) > 0 {
		avgdl = float64(total) / n
	}
	k1, b := params.K1, params.B
	j := 0
	for _, ps := range tc.postings {
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			// Same operation order as bm25s: tf / (k1*((1-b) + b*dl/avgdl) + tf).
			ix.postW[j] = idf * (tf / (k1*((1-b)+b*float64(tc.docLen[p.doc])/avgdl) + tf))
			j++
		}
	}
	return &LuceneBM25{params: params, ix: ix}
}

// Name returns "BM25 (English, k1=…, b=…)".
func (m *LuceneBM25) Name() string {
	return fmt.Sprintf("BM25 (English, k1=%g, b=%g)", m.params.K1, m.params.B)
}

// Scores returns the score of every document for query, in corpus order (bm25s's get_scores).
func (m *LuceneBM25) Scores(query string) []float64 {
	return m.ix.unitScores(query)
}

// Search returns the k documents with the highest positive score, best first, ties broken by
// corpus order; documents sharing no term with the query are never returned.
func (m *LuceneBM25) Search(query string, k int) ([]Candidate, error) {
	// A repeated query term counts again, as in a Lucene bag-of-words query boosted by its count.
	terms, qw := m.ix.unitTerms(query)
	return m.ix.search(terms, qw, k), nil
}

// SearchBatch runs Search for every query, in parallel on GOMAXPROCS goroutines; results are in
// query order.
func (m *LuceneBM25) SearchBatch(queries []string, k int) ([][]Candidate, error) {
	return searchParallel(queries, k, m.Search)
}
