package retrieve

import (
	"fmt"
	"sync"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/provenance"
)

// Sparse is a learned sparse retriever (the SPLADE family): the encoder maps a text to one weight
// per vocabulary term (an embedding whose dimension is the vocabulary, such as the splade output
// of a model folder: max over tokens of log(1 + ReLU(MLM logits))). The corpus's positive weights
// go into an inverted index, and a document's score for a query is the dot product of their
// weight vectors, Σ_t w_q(t)·w_d(t) over the terms both have, summed in float64. A Sparse is safe
// for concurrent use when its encoder is.
type Sparse struct {
	name string
	enc  encode.Encoder
	ix   *lexicalIndex
}

var _ Retriever = (*Sparse)(nil)

// NewSparse embeds the documents (DocText) with enc's document tower in one call and indexes
// their positive term weights in corpus order, which breaks ties in Search.
func NewSparse(enc encode.Encoder, docs []bench.Doc, opts DenseOptions) (*Sparse, error) {
	ids, vecs, err := encodeCorpus(enc, docs, opts, "sparse")
	if err != nil {
		return nil, err
	}
	// A vector longer than the vocabulary would index past the postings' table.
	for i, v := range vecs {
		if len(v) != enc.Dim() {
			return nil, fmt.Errorf("sparse %s: vector of document %q has %d values, want %d", enc.Name(), ids[i], len(v), enc.Dim())
		}
	}
	return &Sparse{name: "sparse:" + enc.Name(), enc: enc, ix: newWeightIndex(ids, vecs, enc.Dim())}, nil
}

// newWeightIndex lays out the positive entries of vecs (one per document, dim terms each) as
// postings whose weights are the entries themselves.
func newWeightIndex(ids []string, vecs [][]float32, dim int) *lexicalIndex {
	n := len(ids)
	ix := &lexicalIndex{ids: append([]string(nil), ids...), start: make([]int32, dim+1)}
	for _, v := range vecs {
		for t, w := range v {
			if w > 0 {
				ix.start[t+1]++
			}
		}
	}
	for t := range dim {
		ix.start[t+1] += ix.start[t]
	}
	fill := append([]int32(nil), ix.start[:dim]...)
	ix.postDoc = make([]int32, ix.start[dim])
	ix.postW = make([]float64, ix.start[dim])
	for d, v := range vecs {
		for t, w := range v {
			if w > 0 {
				ix.postDoc[fill[t]] = int32(d)
				ix.postW[fill[t]] = float64(w)
				fill[t]++
			}
		}
	}
	ix.scratch = sync.Pool{New: func() any { return &scoreScratch{score: make([]float64, n), seen: make([]bool, n)} }}
	return ix
}

// Name is "sparse:" and the encoder's name.
func (s *Sparse) Name() string { return s.name }

// Postings is the number of (term, document) entries of the index.
func (s *Sparse) Postings() int { return len(s.ix.postDoc) }

// queryTerms returns the positive entries of a query's weight vector.
func queryTerms(v []float32) ([]int32, []float64) {
	var terms []int32
	var w []float64
	for t, x := range v {
		if x > 0 {
			terms = append(terms, int32(t))
			w = append(w, float64(x))
		}
	}
	return terms, w
}

func (s *Sparse) embed(queries []string) ([][]float32, error) {
	vecs, err := s.enc.EncodeQueries(queries)
	if err != nil {
		return nil, fmt.Errorf("sparse %s: encoding %d queries: %w", s.enc.Name(), len(queries), err)
	}
	if len(vecs) != len(queries) {
		return nil, fmt.Errorf("sparse %s: encoder returned %d vectors for %d queries", s.enc.Name(), len(vecs), len(queries))
	}
	for i, v := range vecs {
		if len(v) != s.enc.Dim() {
			return nil, fmt.Errorf("sparse %s: query vector %d has %d values, want %d", s.enc.Name(), i, len(v), s.enc.Dim())
		}
	}
	return vecs, nil
}

// Scores returns the score of every document for query, in corpus order.
func (s *Sparse) Scores(query string) ([]float64, error) {
	v, err := s.embed([]string{query})
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(s.ix.ids))
	terms, w := queryTerms(v[0])
	s.ix.scores(terms, w, out)
	return out, nil
}

// Search returns the k documents with the highest positive score, best first, ties broken by
// corpus order.
func (s *Sparse) Search(query string, k int) ([]Candidate, error) {
	v, err := s.embed([]string{query})
	if err != nil {
		return nil, err
	}
	terms, w := queryTerms(v[0])
	return s.ix.search(terms, w, k), nil
}

// SearchBatch embeds every query in one encoder call (batched by the encoder's token budget)
// and searches the index with each; results are in query order.
func (s *Sparse) SearchBatch(queries []string, k int) ([][]Candidate, error) {
	vecs, err := s.embed(queries)
	if err != nil {
		return nil, err
	}
	out := make([][]Candidate, len(queries))
	for i, v := range vecs {
		terms, w := queryTerms(v)
		out[i] = s.ix.search(terms, w, k)
	}
	return out, nil
}

// EncoderIdentity is the identity of the encoder, for the outputs' provenance.
func (s *Sparse) EncoderIdentity() provenance.Encoder {
	if e := provenance.EncoderOf(s.enc); e != nil {
		return *e
	}
	return provenance.Encoder{Name: s.enc.Name()}
}
