package retrieve

import (
	"math"

	"github.com/rated-dev/rated/pkg/bench"
)

// TFIDFParams choose the term-frequency weighting of the TF-IDF retriever.
type TFIDFParams struct {
	// Sublinear uses 1 + ln(tf) instead of the raw count tf (scikit-learn's sublinear_tf).
	Sublinear bool
}

// TFIDF ranks documents by the cosine similarity of TF-IDF vectors, as scikit-learn's
// TfidfVectorizer(norm="l2", use_idf=True, smooth_idf=True, sublinear_tf=Sublinear) followed by a
// dot product, given the same tokens:
//
//	idf(t)   = ln((1 + N) / (1 + n(t))) + 1          (smoothed; N documents, n(t) containing t)
//	w(t, x)  = tf(t, x) * idf(t)   (or (1 + ln tf(t, x)) * idf(t) when Sublinear)
//	score    = Σ_t w(t, q) w(t, d) / (‖w(·, q)‖ ‖w(·, d)‖)
//
// Query terms missing from the corpus vocabulary are ignored, as in TfidfVectorizer.transform.
// Text is tokenised with Tokenize, documents through DocText. A TFIDF is safe for concurrent use.
type TFIDF struct {
	params TFIDFParams
	idf    []float64
	ix     *lexicalIndex
}

// NewTFIDF indexes docs (in corpus order, which breaks ties in Search).
func NewTFIDF(docs []bench.Doc, params TFIDFParams) *TFIDF {
	ix, tc := buildLexicalIndex(docs, nil)
	n := len(docs)
	m := &TFIDF{params: params, ix: ix, idf: make([]float64, len(tc.postings))}
	for t, ps := range tc.postings {
		m.idf[t] = math.Log(float64(1+n)/float64(1+len(ps))) + 1
	}
	// Squared norms of the document vectors.
	norm2 := make([]float64, n)
	for t, ps := range tc.postings {
		for _, p := range ps {
			w := m.tf(float64(p.tf)) * m.idf[t]
			norm2[p.doc] += w * w
		}
	}
	j := 0
	for t, ps := range tc.postings {
		for _, p := range ps {
			ix.postW[j] = m.tf(float64(p.tf)) * m.idf[t] / math.Sqrt(norm2[p.doc])
			j++
		}
	}
	return m
}

// tf is the term-frequency weight of a count.
func (m *TFIDF) tf(count float64) float64 {
	if m.params.Sublinear {
		return 1 + math.Log(count)
	}
	return count
}

// Name returns "TF-IDF".
func (m *TFIDF) Name() string { return "TF-IDF" }

// queryWeights returns the normalised query vector as parallel term and weight slices (terms
// in first-occurrence order); nil when no query term is in the vocabulary.
func (m *TFIDF) queryWeights(query string) ([]int32, []float64) {
	all := m.ix.queryTerms(query, nil)
	if len(all) == 0 {
		return nil, nil
	}
	counts := make(map[int32]float64, len(all))
	var order []int32
	for _, t := range all {
		if _, ok := counts[t]; !ok {
			order = append(order, t)
		}
		counts[t]++
	}
	w := make([]float64, len(order))
	norm2 := 0.0
	for i, t := range order {
		w[i] = m.tf(counts[t]) * m.idf[t]
		norm2 += w[i] * w[i]
	}
	norm := math.Sqrt(norm2)
	for i := range w {
		w[i] /= norm
	}
	return order, w
}

// Scores returns the cosine similarity of query with every document, in corpus order.
func (m *TFIDF) Scores(query string) []float64 {
	out := make([]float64, len(m.ix.ids))
	terms, w := m.queryWeights(query)
	m.ix.scores(terms, w, out)
	return out
}

// Search returns the k documents with the highest positive cosine similarity, best first, ties
// broken by corpus order. Documents sharing no term with the query are never returned, so fewer
// than k candidates come back when fewer documents match. k <= 0 returns nothing.
func (m *TFIDF) Search(query string, k int) ([]Candidate, error) {
	terms, w := m.queryWeights(query)
	return m.ix.search(terms, w, k), nil
}

// SearchBatch runs Search for every query, in parallel on GOMAXPROCS goroutines; results are in
// query order.
func (m *TFIDF) SearchBatch(queries []string, k int) ([][]Candidate, error) {
	return searchParallel(queries, k, m.Search)
}
