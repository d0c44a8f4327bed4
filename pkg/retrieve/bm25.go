package retrieve

import (
	"container/heap"
	"math"
	"sort"
	"sync"

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
	params  BM25Params
	ids     []string
	terms   map[string]int32
	idf     []float64
	start   []int32   // postings of term t are post*[start[t]:start[t+1]]
	postDoc []int32   // document index of each posting
	postW   []float64 // idf(t) * tf*(K1+1)/(tf + K1*(1-B+B*|d|/avgdl)) of each posting
	scratch sync.Pool
}

// scoreScratch is the per-search state of the lexical retrievers, reused across searches: one
// score per document and the list of documents touched by the current query.
type scoreScratch struct {
	score   []float64
	seen    []bool
	touched []int32
}

// NewBM25 indexes docs (in corpus order, which breaks ties in Search).
func NewBM25(docs []bench.Doc, params BM25Params) *BM25 {
	n := len(docs)
	m := &BM25{params: params, ids: make([]string, n), terms: map[string]int32{}}
	type posting struct{ doc, tf int32 }
	var termPostings [][]posting
	docLen := make([]int, n)
	total := 0
	var toks []string
	for i, d := range docs {
		m.ids[i] = d.ID
		toks = appendTokens(toks[:0], DocText(d))
		docLen[i] = len(toks)
		total += len(toks)
		// Term frequencies of this document, in first-occurrence order.
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
	// IDF in vocabulary first-occurrence order, as rank-bm25 sums it (dict insertion order).
	m.idf = make([]float64, len(termPostings))
	idfSum := 0.0
	var negative []int
	for t, ps := range termPostings {
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
	avgdl := 0.0
	if n > 0 {
		avgdl = float64(total) / float64(n)
	}
	m.start = make([]int32, len(termPostings)+1)
	k1, b := params.K1, params.B
	for t, ps := range termPostings {
		m.start[t+1] = m.start[t] + int32(len(ps))
		for _, p := range ps {
			tf := float64(p.tf)
			// Same operation order as rank-bm25 (numpy): q_freq*(k1+1) / (q_freq + k1*(1-b+b*dl/avgdl)).
			norm := k1 * (1 - b + b*float64(docLen[p.doc])/avgdl)
			m.postDoc = append(m.postDoc, p.doc)
			m.postW = append(m.postW, m.idf[t]*(tf*(k1+1)/(tf+norm)))
		}
	}
	m.scratch.New = func() any {
		return &scoreScratch{score: make([]float64, n), seen: make([]bool, n)}
	}
	return m
}

// Name returns "BM25".
func (m *BM25) Name() string { return "BM25" }

// Params returns the parameters the index was built with.
func (m *BM25) Params() BM25Params { return m.params }

// IDF returns the (floored) IDF of a token and whether it occurs in the corpus.
func (m *BM25) IDF(token string) (float64, bool) {
	t, ok := m.terms[token]
	if !ok {
		return 0, false
	}
	return m.idf[t], true
}

// Scores returns the BM25 score of every document for query, in corpus order (rank-bm25's
// get_scores).
func (m *BM25) Scores(query string) []float64 {
	out := make([]float64, len(m.ids))
	for _, tok := range Tokenize(query) {
		t, ok := m.terms[tok]
		if !ok {
			continue
		}
		for j := m.start[t]; j < m.start[t+1]; j++ {
			out[m.postDoc[j]] += m.postW[j]
		}
	}
	return out
}

// Search returns the k documents with the highest positive BM25 score, best first, ties broken
// by corpus order. Documents sharing no term with the query score 0 and are never returned, so
// fewer than k candidates come back when fewer documents match. k <= 0 returns nothing.
func (m *BM25) Search(query string, k int) ([]Candidate, error) {
	if k <= 0 || len(m.ids) == 0 {
		return nil, nil
	}
	s := m.scratch.Get().(*scoreScratch)
	defer m.scratch.Put(s)
	for _, tok := range Tokenize(query) {
		t, ok := m.terms[tok]
		if !ok {
			continue
		}
		for j := m.start[t]; j < m.start[t+1]; j++ {
			d := m.postDoc[j]
			if !s.seen[d] {
				s.seen[d] = true
				s.touched = append(s.touched, d)
			}
			s.score[d] += m.postW[j]
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

// topK selects the k best of the touched documents with a positive score (higher score first,
// then lower corpus index) and returns them best first.
func topK(touched []int32, score []float64, k int, ids []string) []Candidate {
	h := candHeap{}
	for _, d := range touched {
		sc := score[d]
		if !(sc > 0) {
			continue
		}
		c := Candidate{Index: int(d), Score: sc}
		if len(h) < k {
			heap.Push(&h, c)
		} else if better(c, h[0]) {
			h[0] = c
			heap.Fix(&h, 0)
		}
	}
	sort.Slice(h, func(i, j int) bool { return better(h[i], h[j]) })
	for i := range h {
		h[i].ID = ids[h[i].Index]
	}
	return []Candidate(h)
}

// better orders candidates: higher score first, ties by lower corpus index.
func better(a, b Candidate) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Index < b.Index
}

// candHeap is a min-heap on better: its root is the worst kept candidate.
type candHeap []Candidate

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(Candidate)) }
func (h *candHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}
