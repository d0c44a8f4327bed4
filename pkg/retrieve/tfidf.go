package retrieve

import (
	"math"
	"sync"

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
	params  TFIDFParams
	ids     []string
	terms   map[string]int32
	idf     []float64
	start   []int32
	postDoc []int32
	postW   []float64 // w(t, d) / ‖w(·, d)‖
	scratch sync.Pool
}

// NewTFIDF indexes docs (in corpus order, which breaks ties in Search).
func NewTFIDF(docs []bench.Doc, params TFIDFParams) *TFIDF {
	n := len(docs)
	m := &TFIDF{params: params, ids: make([]string, n), terms: map[string]int32{}}
	type posting struct{ doc, tf int32 }
	var termPostings [][]posting
	var toks []string
	for i, d := range docs {
		m.ids[i] = d.ID
		toks = appendTokens(toks[:0], DocText(d))
		local := map[int32]int32{}
		var order []int32
		for _, tok := range toks {
			t, ok := m.terms[tok]
			if !ok {
				t = int32(len(termPostings))
				m.terms[tok] = t
				termPostings = append(termPostings, nil)
			}
			if _, ok := local[t]; !ok {
				order = append(order, t)
			}
			local[t]++
		}
		for _, t := range order {
			termPostings[t] = append(termPostings[t], posting{doc: int32(i), tf: local[t]})
		}
	}
	m.idf = make([]float64, len(termPostings))
	for t, ps := range termPostings {
		m.idf[t] = math.Log(float64(1+n)/float64(1+len(ps))) + 1
	}
	// Squared norms of the document vectors.
	norm2 := make([]float64, n)
	for t, ps := range termPostings {
		for _, p := range ps {
			w := m.tf(float64(p.tf)) * m.idf[t]
			norm2[p.doc] += w * w
		}
	}
	m.start = make([]int32, len(termPostings)+1)
	for t, ps := range termPostings {
		m.start[t+1] = m.start[t] + int32(len(ps))
		for _, p := range ps {
			m.postDoc = append(m.postDoc, p.doc)
			m.postW = append(m.postW, m.tf(float64(p.tf))*m.idf[t]/math.Sqrt(norm2[p.doc]))
		}
	}
	m.scratch.New = func() any {
		return &scoreScratch{score: make([]float64, n), seen: make([]bool, n)}
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
	counts := map[int32]float64{}
	var order []int32
	for _, tok := range Tokenize(query) {
		t, ok := m.terms[tok]
		if !ok {
			continue
		}
		if _, ok := counts[t]; !ok {
			order = append(order, t)
		}
		counts[t]++
	}
	if len(order) == 0 {
		return nil, nil
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
	out := make([]float64, len(m.ids))
	terms, w := m.queryWeights(query)
	for i, t := range terms {
		for j := m.start[t]; j < m.start[t+1]; j++ {
			out[m.postDoc[j]] += w[i] * m.postW[j]
		}
	}
	return out
}

// Search returns the k documents with the highest positive cosine similarity, best first, ties
// broken by corpus order. Documents sharing no term with the query are never returned, so fewer
// than k candidates come back when fewer documents match. k <= 0 returns nothing.
func (m *TFIDF) Search(query string, k int) ([]Candidate, error) {
	if k <= 0 || len(m.ids) == 0 {
		return nil, nil
	}
	terms, w := m.queryWeights(query)
	if len(terms) == 0 {
		return nil, nil
	}
	s := m.scratch.Get().(*scoreScratch)
	defer m.scratch.Put(s)
	for i, t := range terms {
		for j := m.start[t]; j < m.start[t+1]; j++ {
			d := m.postDoc[j]
			if !s.seen[d] {
				s.seen[d] = true
				s.touched = append(s.touched, d)
			}
			s.score[d] += w[i] * m.postW[j]
		}
	}
	out := topK(s.touched, s.score, k, m.ids)
	for _, d := range s.touched {
		s.score[d] = 0
		s.seen[d] = false
	}
	s.touched = s.touched[:0]
	return out, nil
}
