package retrieve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/rated-dev/rated/internal/vecmath"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/encode"
)

// DenseOptions configures NewDense.
type DenseOptions struct {
	// Progress, when set, receives (documents encoded, total) while the corpus is encoded (after
	// every batch when the encoder is an encode.ProgressEncoder, else once at the end).
	Progress func(done, total int)
	// Context, when set, stops the encoding between batches once it ends (an
	// encode.ProgressEncoder's; other encoders are checked before and after their one call).
	Context context.Context
}

// Dense is an exact dense retriever: the corpus is embedded once by the encoder's document tower
// into an N×D float32 matrix, and a query embedded by the query tower is scored against every
// row by dot product (gonum BLAS Sgemv for one query; a blocked matrix product for a batch). It is also the
// QueryVectorizer of the bandit: the context of a query is its embedding. A Dense is safe for
// concurrent use when its encoder is.
type Dense struct {
	name    string
	enc     encode.Encoder
	ids     []string
	dim     int
	matrix  []float32 // row i = embedding of document i
	scratch chan []float32
}

var (
	_ Retriever       = (*Dense)(nil)
	_ QueryVectorizer = (*Dense)(nil)
)

// NewDense embeds the documents (text = DocText: title + ": " + text) with enc's document tower
// in one encoder call, so the encoder sorts the whole corpus by length before batching, and
// indexes them in corpus order, which breaks ties in Search.
func NewDense(enc encode.Encoder, docs []bench.Doc, opts DenseOptions) (*Dense, error) {
	ids, vecs, err := encodeCorpus(enc, docs, opts, "dense")
	if err != nil {
		return nil, err
	}
	return NewDenseFromVectors(enc, ids, vecs)
}

// encodeCorpus embeds docs (DocText) with enc's document tower in one call, reporting progress
// as DenseOptions says, and returns their ids and vectors in corpus order; kind names the
// retriever in errors.
func encodeCorpus(enc encode.Encoder, docs []bench.Doc, opts DenseOptions, kind string) ([]string, [][]float32, error) {
	if enc == nil {
		return nil, nil, errNoEncoder
	}
	ids := make([]string, len(docs))
	texts := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
		texts[i] = DocText(d)
	}
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	var vecs [][]float32
	err := ctx.Err()
	if pe, ok := enc.(encode.ProgressEncoder); ok && err == nil {
		vecs, err = pe.EncodeDocsProgress(ctx, texts, opts.Progress)
	} else if err == nil {
		vecs, err = enc.EncodeDocs(texts)
		if err == nil {
			err = ctx.Err()
		}
		if err == nil && opts.Progress != nil {
			opts.Progress(len(docs), len(docs))
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: encoding %d documents: %w", kind, enc.Name(), len(docs), err)
	}
	if len(vecs) != len(docs) {
		return nil, nil, fmt.Errorf("%s %s: encoder returned %d vectors for %d documents", kind, enc.Name(), len(vecs), len(docs))
	}
	return ids, vecs, nil
}

// NewDenseFromVectors indexes precomputed document vectors (one per id, each of enc.Dim()
// values); enc embeds the queries.
func NewDenseFromVectors(enc encode.Encoder, ids []string, vecs [][]float32) (*Dense, error) {
	if enc == nil {
		return nil, errNoEncoder
	}
	if len(ids) != len(vecs) {
		return nil, fmt.Errorf("dense %s: %d ids but %d vectors", enc.Name(), len(ids), len(vecs))
	}
	dim := enc.Dim()
	if dim <= 0 {
		return nil, fmt.Errorf("dense %s: encoder dimension %d", enc.Name(), dim)
	}
	m := &Dense{name: "dense:" + enc.Name(), enc: enc, ids: append([]string(nil), ids...), dim: dim,
		matrix: make([]float32, len(ids)*dim), scratch: make(chan []float32, 8)}
	for i, v := range vecs {
		if len(v) != dim {
			return nil, fmt.Errorf("dense %s: vector of document %q has %d values, want %d", enc.Name(), ids[i], len(v), dim)
		}
		copy(m.matrix[i*dim:], v)
	}
	return m, nil
}

// Name is "dense:" and the encoder's name.
func (m *Dense) Name() string { return m.name }

// Dim is the embedding size (the bandit context dimension).
func (m *Dense) Dim() int { return m.dim }

// Len is the number of indexed documents.
func (m *Dense) Len() int { return len(m.ids) }

// DocVector returns a copy of document i's embedding.
func (m *Dense) DocVector(i int) []float32 {
	return append([]float32(nil), m.matrix[i*m.dim:(i+1)*m.dim]...)
}

// QueryVector embeds the query with the query tower and returns it L2-normalised in float64.
func (m *Dense) QueryVector(query string) ([]float64, error) {
	q, err := m.embedQueries([]string{query})
	if err != nil {
		return nil, err
	}
	out := make([]float64, m.dim)
	var n float64
	for i, x := range q[0] {
		out[i] = float64(x)
		n += out[i] * out[i]
	}
	n = math.Sqrt(n)
	if n == 0 {
		return nil, fmt.Errorf("dense %s: zero query vector for %q", m.enc.Name(), query)
	}
	for i := range out {
		out[i] /= n
	}
	return out, nil
}

func (m *Dense) embedQueries(queries []string) ([][]float32, error) {
	vecs, err := m.enc.EncodeQueries(queries)
	if err != nil {
		return nil, fmt.Errorf("dense %s: encoding queries: %w", m.enc.Name(), err)
	}
	if len(vecs) != len(queries) {
		return nil, fmt.Errorf("dense %s: encoder returned %d vectors for %d queries", m.enc.Name(), len(vecs), len(queries))
	}
	for i, v := range vecs {
		if len(v) != m.dim {
			return nil, fmt.Errorf("dense %s: query vector %d has %d values, want %d", m.enc.Name(), i, len(v), m.dim)
		}
	}
	return vecs, nil
}

// Search embeds the query and returns the k documents with the highest dot product, best first,
// ties broken by corpus order.
func (m *Dense) Search(query string, k int) ([]Candidate, error) {
	q, err := m.embedQueries([]string{query})
	if err != nil {
		return nil, err
	}
	return m.SearchVector(q[0], k)
}

// SearchVector ranks the corpus for an already embedded query.
func (m *Dense) SearchVector(q []float32, k int) ([]Candidate, error) {
	if len(q) != m.dim {
		return nil, fmt.Errorf("dense %s: query vector has %d values, want %d", m.enc.Name(), len(q), m.dim)
	}
	n := len(m.ids)
	if n == 0 || k <= 0 {
		return nil, nil
	}
	var scores []float32
	select {
	case scores = <-m.scratch:
	default:
		scores = make([]float32, n)
	}
	blas32.Gemv(blas.NoTrans, 1,
		blas32.General{Rows: n, Cols: m.dim, Stride: m.dim, Data: m.matrix},
		blas32.Vector{N: m.dim, Inc: 1, Data: q}, 0,
		blas32.Vector{N: n, Inc: 1, Data: scores})
	out := topKDense(scores, k, m.ids)
	select {
	case m.scratch <- scores:
	default:
	}
	return out, nil
}

// SearchBatch embeds many queries in one encoder call and ranks them all with one matrix product.
func (m *Dense) SearchBatch(queries []string, k int) ([][]Candidate, error) {
	if len(queries) == 0 {
		return nil, nil
	}
	q, err := m.embedQueries(queries)
	if err != nil {
		return nil, err
	}
	return m.SearchVectors(q, k)
}

// Block sizes of batched exact search: a block of documents (512 × 384 float32 = 768 KB) stays
// in a core's L2 cache (2 MB here) while every chunk of 64 queries is scored against it.
const (
	searchDocBlock   = 512
	searchQueryChunk = 64
)

// SearchVectors ranks the corpus for many embedded queries with a blocked matrix product: the
// corpus is cut into blocks of searchDocBlock documents, spread over GOMAXPROCS workers; each
// worker scores all queries against its block (vecmath.DotBlock, 4 queries × 3 documents per
// AVX2 kernel call, so each document vector read from memory serves every query of the batch)
// and keeps a bounded heap per query; the workers' heaps are merged at the end. One pass over
// the corpus per batch instead of one per query; see docs/BENCHMARKS.md (batched exact search).
func (m *Dense) SearchVectors(qs [][]float32, k int) ([][]Candidate, error) {
	n := len(m.ids)
	out := make([][]Candidate, len(qs))
	if n == 0 || k <= 0 || len(qs) == 0 {
		return out, nil
	}
	for i, q := range qs {
		if len(q) != m.dim {
			return nil, fmt.Errorf("dense %s: query vector %d has %d values, want %d", m.enc.Name(), i, len(q), m.dim)
		}
	}
	dim := m.dim
	// Queries packed row-major, padded with zero rows to a multiple of 4 (the kernel's height).
	rows := (len(qs) + 3) &^ 3
	qmat := make([]float32, rows*dim)
	for i, q := range qs {
		copy(qmat[i*dim:], q)
	}
	blocks := (n + searchDocBlock - 1) / searchDocBlock
	workers := min(runtime.GOMAXPROCS(0), blocks)
	heaps := make([][]*topK, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		heaps[w] = make([]*topK, len(qs))
		for i := range qs {
			heaps[w][i] = newTopK(min(k, n))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			scores := make([]float32, searchQueryChunk*searchDocBlock)
			for b := int(next.Add(1) - 1); b < blocks; b = int(next.Add(1) - 1) {
				lo := b * searchDocBlock
				hi := min(n, lo+searchDocBlock)
				width := hi - lo
				for c0 := 0; c0 < rows; c0 += searchQueryChunk {
					h := min(searchQueryChunk, rows-c0)
					vecmath.DotBlock(qmat[c0*dim:], h, m.matrix[lo*dim:hi*dim], width, dim, scores)
					for r := 0; r < h && c0+r < len(qs); r++ {
						heaps[w][c0+r].pushRow(scores[r*width:(r+1)*width], lo)
					}
				}
			}
		}()
	}
	wg.Wait()
	for i := range qs {
		best := heaps[0][i]
		for w := 1; w < workers; w++ {
			for j, s := range heaps[w][i].score {
				best.push(s, heaps[w][i].index[j])
			}
		}
		out[i] = best.candidates(m.ids)
	}
	return out, nil
}

// topKDense selects the k best scores (higher first, then lower index) with a bounded min-heap
// whose root is the worst kept candidate.
func topKDense(scores []float32, k int, ids []string) []Candidate {
	k = min(k, len(scores))
	heap := make([]int32, 0, k)
	// worse reports whether document a ranks below document b.
	worse := func(a, b int32) bool {
		sa, sb := scores[a], scores[b]
		return sa < sb || (sa == sb && a > b)
	}
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(heap) {
				return
			}
			w := l
			if r := l + 1; r < len(heap) && worse(heap[r], heap[l]) {
				w = r
			}
			if !worse(heap[w], heap[i]) {
				return
			}
			heap[i], heap[w] = heap[w], heap[i]
			i = w
		}
	}
	for i := range scores {
		d := int32(i)
		if len(heap) < k {
			heap = append(heap, d)
			for j := len(heap) - 1; j > 0; {
				p := (j - 1) / 2
				if !worse(heap[j], heap[p]) {
					break
				}
				heap[j], heap[p] = heap[p], heap[j]
				j = p
			}
			continue
		}
		if worse(heap[0], d) {
			heap[0] = d
			down(0)
		}
	}
	out := make([]Candidate, len(heap))
	for i := len(heap) - 1; i >= 0; i-- {
		d := heap[0]
		out[i] = Candidate{ID: ids[d], Index: int(d), Score: float64(scores[d])}
		heap[0] = heap[len(heap)-1]
		heap = heap[:len(heap)-1]
		down(0)
	}
	return out
}

// errNoEncoder is returned by constructors given a nil encoder.
var errNoEncoder = errors.New("retrieve: nil encoder")
