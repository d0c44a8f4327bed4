package retrieve

import (
	"math"

	"github.com/rated-dev/rated/pkg/bench"
)

// BM25Params are the Okapi BM25 parameters.
type BM25Params struct {
	// K1 saturates term frequency.
	K1 float64
	// B is the strength of document length normalisation (0 = none, 1 = full).
	B float64
	// Epsilon sets the IDF floor: a term whose IDF is negative (it occurs in more than half of
	// the documents) gets Epsilon times the average IDF of the vocabulary instead.
	Epsilon float64
}

// DefaultBM25Params returns the defaults of rank-bm25's BM25Okapi: k1 = 1.5, b = 0.75,
// epsilon = 0.25.
func DefaultBM25Params() BM25Params { return BM25Params{K1: 1.5, B: 0.75, Epsilon: 0.25} }

// BM25 is an Okapi BM25 retriever over an inverted index. Its scores equal those of rank-bm25's
// BM25Okapi (version pinned in scripts/requirements-ref.txt) given the same tokens:
//
//	idf(t)      = ln(N - n(t) + 0.5) - ln(n(t) + 0.5), replaced by Epsilon * mean idf when < 0
//	score(q, d) = Σ_{t in q, with repeats} idf(t) * tf(t,d)*(K1+1) / (tf(t,d) + K1*(1 - B + B*|d|/avgdl))
//
// where N is the number of documents, n(t) the number containing t, |d| the token count of d and
// the mean idf is taken over the whole vocabulary before the floor is applied. Text is tokenised
// with Tokenize, documents through DocText. A BM25 is safe for concurrent use.
type BM25 struct {
	params BM25Params
	idf    []float64
	ix     *lexicalIndex
}

// NewBM25 indexes docs (in corpus order, which breaks ties in Search).
func NewBM25(docs []bench.Doc, params BM25Params) *BM25 {
	ix, tc := buildLexicalIndex(docs, nil)
	n := len(docs)
	m := &BM25{params: params, ix: ix, idf: make([]float64, len(tc.postings))}
	// IDF in vocabulary first-occurrence order, as rank-bm25 sums it (dict insertion order).
	idfSum := 0.0
	var negative []int
	for t, ps := range tc.postings {
		df := float64(len(ps))
		v := math.Log(float64(n)-df+0.5) - math.Log(df+0.5)
		m.idf[t] = v
		idfSum += v
		if v < 0 {
			negative = append(negative, t)
		}
	}
	if len(m.idf) > 0 {
		eps := params.Epsilon * (idfSum / float64(len(m.idf)))
		for _, t := range negative {
			m.idf[t] = eps
		}
	}
	total := 0
	for _, l := range tc.docLen {
		total += l
	}
	avgdl := 0.0
	if n > 0 {
		avgdl = float64(total) / float64(n)
	}
	k1, b := params.K1, params.B
	j := 0
	for t, ps := range tc.postings {
		for _, p := range ps {
			tf := float64(p.tf)
			// Same operation order as rank-bm25 (numpy): q_freq*(k1+1) / (q_freq + k1*(1-b+b*dl/avgdl)).
			norm := k1 * (1 - b + b*float64(tc.docLen[p.doc])/avgdl)
			ix.postW[j] = m.idf[t] * (tf * (k1 + 1) / (tf + norm))
			j++
		}
	}
	return m
}

// Name returns "BM25".
func (m *BM25) Name() string { return "BM25" }

// Params returns the parameters the index was built with.
func (m *BM25) Params() BM25Params { return m.params }

// IDF returns the (floored) IDF of a token and whether it occurs in the corpus.
func (m *BM25) IDF(token string) (float64, bool) {
	t, ok := m.ix.terms[token]
	if !ok {
		return 0, false
	}
	return m.idf[t], true
}

// Scores returns the BM25 score of every document for query, in corpus order (rank-bm25's
// get_scores).
func (m *BM25) Scores(query string) []float64 {
	return m.ix.unitScores(query)
}

// Search returns the k documents with the highest BM25 score among those sharing a term with
// the query, best first, ties broken by corpus order. A matching document can score <= 0 (its
// terms occur in half the corpus or more): it ranks after every positive one. Documents sharing
// no term are never returned, so fewer than k candidates come back when fewer documents match.
// k <= 0 returns nothing.
func (m *BM25) Search(query string, k int) ([]Candidate, error) {
	// Each occurrence of a query term adds its score again, as in rank-bm25.
	terms, qw := m.ix.unitTerms(query)
	return m.ix.search(terms, qw, k), nil
}

// SearchBatch runs Search for every query, in parallel on GOMAXPROCS goroutines; results are in
// query order.
func (m *BM25) SearchBatch(queries []string, k int) ([][]Candidate, error) {
	return searchParallel(queries, k, m.Search)
}
