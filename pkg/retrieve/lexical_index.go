package retrieve

import (
	"sort"
	"sync"

	"github.com/rated-dev/rated/pkg/bench"
)

// lexicalIndex is the inverted index shared by BM25 and TF-IDF: for every vocabulary term the
// documents containing it and a precomputed per-posting weight, so scoring a query is a sum of
// posting weights over its terms.
type lexicalIndex struct {
	// analyze turns text into terms; nil is Tokenize (with an allocation-free query path).
	analyze Analyzer
	ids     []string
	terms   map[string]int32
	start   []int32   // postings of term t are postDoc/postW[start[t]:start[t+1]]
	postDoc []int32   // document index of each posting, ascending within a term
	postW   []float64 // weight of each posting (set by the retriever)
	scratch sync.Pool // *scoreScratch
}

// termCounts is the tokenised corpus: per term, in vocabulary first-occurrence order, the
// documents containing it and the term frequency in each.
type termCounts struct {
	docLen   []int
	postings [][]termPosting
}

type termPosting struct{ doc, tf int32 }

// Analyzer turns a text into the terms a lexical index holds, appended to dst in text order with
// repeats.
type Analyzer func(dst []string, text string) []string

// buildLexicalIndex analyses docs (DocText, then analyze; nil is Tokenize) and lays out the
// postings; the caller fills postW from the returned counts, in the same order.
func buildLexicalIndex(docs []bench.Doc, analyze Analyzer) (*lexicalIndex, termCounts) {
	n := len(docs)
	ix := &lexicalIndex{analyze: analyze, ids: make([]string, n), terms: map[string]int32{}}
	if analyze == nil {
		analyze = appendTokens
	}
	tc := termCounts{docLen: make([]int, n)}
	var toks []string
	local := map[int32]int32{}
	var order []int32
	for i, d := range docs {
		ix.ids[i] = d.ID
		toks = analyze(toks[:0], DocText(d))
		tc.docLen[i] = len(toks)
		clear(local)
		order = order[:0]
		for _, tok := range toks {
			t, ok := ix.terms[tok]
			if !ok {
				t = int32(len(tc.postings))
				ix.terms[tok] = t
				tc.postings = append(tc.postings, nil)
			}
			if _, ok := local[t]; !ok {
				order = append(order, t)
			}
			local[t]++
		}
		for _, t := range order {
			tc.postings[t] = append(tc.postings[t], termPosting{doc: int32(i), tf: local[t]})
		}
	}
	ix.start = make([]int32, len(tc.postings)+1)
	for t, ps := range tc.postings {
		ix.start[t+1] = ix.start[t] + int32(len(ps))
		for _, p := range ps {
			ix.postDoc = append(ix.postDoc, p.doc)
		}
	}
	ix.postW = make([]float64, len(ix.postDoc))
	ix.scratch.New = func() any {
		return &scoreScratch{score: make([]float64, n), seen: make([]bool, n)}
	}
	return ix, tc
}

// scoreScratch is the per-search state of the lexical retrievers, reused across searches: one
// score per document and, for short postings lists, the documents touched by the current query.
type scoreScratch struct {
	score   []float64
	seen    []bool
	touched []int32
	heap    []Candidate
}

// queryTerms looks up the terms of query in the vocabulary, in query order with repeats; terms
// missing from the vocabulary are skipped. With Tokenize it allocates nothing per token.
func (ix *lexicalIndex) queryTerms(query string, dst []int32) []int32 {
	if ix.analyze != nil {
		for _, tok := range ix.analyze(nil, query) {
			if t, ok := ix.terms[tok]; ok {
				dst = append(dst, t)
			}
		}
		return dst
	}
	forEachToken(query, nil, func(tok []byte) {
		if t, ok := ix.terms[string(tok)]; ok {
			dst = append(dst, t)
		}
	})
	return dst
}

// unitTerms returns the vocabulary terms of query, repeats included, each with weight 1.
func (ix *lexicalIndex) unitTerms(query string) ([]int32, []float64) {
	terms := ix.queryTerms(query, nil)
	qw := make([]float64, len(terms))
	for i := range qw {
		qw[i] = 1
	}
	return terms, qw
}

// unitScores is the score of every document, in corpus order, for query's unitTerms.
func (ix *lexicalIndex) unitScores(query string) []float64 {
	out := make([]float64, len(ix.ids))
	terms, qw := ix.unitTerms(query)
	ix.scores(terms, qw, out)
	return out
}

// scores adds qw[i] * posting weight for every posting of terms[i] into out (len = corpus).
func (ix *lexicalIndex) scores(terms []int32, qw []float64, out []float64) {
	for i, t := range terms {
		w := qw[i]
		docs := ix.postDoc[ix.start[t]:ix.start[t+1]]
		ws := ix.postW[ix.start[t]:ix.start[t+1]]
		for j, d := range docs {
			out[d] += w * ws[j]
		}
	}
}

// search returns the k documents with the highest score Σ_i qw[i] * w(terms[i], d) among those
// sharing a term with the query, best first, ties by corpus order. When the postings to visit are long compared with the corpus
// the scores are accumulated densely and scanned in full; otherwise only touched documents are
// tracked and scanned.
func (ix *lexicalIndex) search(terms []int32, qw []float64, k int) []Candidate {
	n := len(ix.ids)
	if k <= 0 || n == 0 || len(terms) == 0 {
		return nil
	}
	s := ix.scratch.Get().(*scoreScratch)
	defer ix.scratch.Put(s)
	visits := 0
	for _, t := range terms {
		visits += int(ix.start[t+1] - ix.start[t])
	}
	h := s.heap[:0]
	if visits*4 >= n {
		ix.scores(terms, qw, s.score)
		for d, sc := range s.score {
			// Inline pre-check: once the heap is full, only a score >= the worst kept can enter.
			if sc > 0 && (len(h) < k || sc >= h[0].Score) {
				h = pushTop(h, Candidate{Index: d, Score: sc}, k)
			}
		}
		clear(s.score)
	} else {
		for i, t := range terms {
			w := qw[i]
			docs := ix.postDoc[ix.start[t]:ix.start[t+1]]
			ws := ix.postW[ix.start[t]:ix.start[t+1]]
			for j, d := range docs {
				if !s.seen[d] {
					s.seen[d] = true
					s.touched = append(s.touched, d)
				}
				s.score[d] += w * ws[j]
			}
		}
		for _, d := range s.touched {
			if sc := s.score[d]; sc > 0 {
				h = pushTop(h, Candidate{Index: int(d), Score: sc}, k)
			}
		}
	}
	var rest []Candidate
	if len(h) < k {
		// Fewer than k positive scores: documents that share a term with the query but score
		// <= 0 (BM25 terms in half the corpus or more, whose floored IDF is <= 0 in a small
		// catalog: with two tools every matching term's IDF is 0) come next, still ranked.
		// Without them a tiny catalog returned nothing for any query.
		if visits*4 >= n {
			ix.scores(terms, qw, s.score)
			for _, t := range terms {
				for _, d := range ix.postDoc[ix.start[t]:ix.start[t+1]] {
					if !s.seen[d] {
						s.seen[d] = true
						s.touched = append(s.touched, d)
					}
				}
			}
		}
		for _, d := range s.touched {
			if sc := s.score[d]; sc <= 0 {
				rest = pushTop(rest, Candidate{Index: int(d), Score: sc}, k-len(h))
			}
		}
	}
	for _, d := range s.touched {
		s.score[d] = 0
		s.seen[d] = false
	}
	s.touched = s.touched[:0]
	out := make([]Candidate, len(h), len(h)+len(rest))
	copy(out, h)
	s.heap = h
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
	sort.Slice(rest, func(i, j int) bool { return better(rest[i], rest[j]) })
	out = append(out, rest...)
	for i := range out {
		out[i].ID = ix.ids[out[i].Index]
	}
	return out
}

// better orders candidates: higher score first, ties by lower corpus index.
func better(a, b Candidate) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Index < b.Index
}

// pushTop keeps the k best candidates in h, a binary min-heap on better (root = worst kept).
func pushTop(h []Candidate, c Candidate, k int) []Candidate {
	if len(h) < k {
		h = append(h, c)
		// Sift up.
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !better(h[p], h[i]) {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		return h
	}
	if !better(c, h[0]) {
		return h
	}
	h[0] = c
	// Sift down.
	for i := 0; ; {
		l, r, worst := 2*i+1, 2*i+2, i
		if l < len(h) && better(h[worst], h[l]) {
			worst = l
		}
		if r < len(h) && better(h[worst], h[r]) {
			worst = r
		}
		if worst == i {
			return h
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}
