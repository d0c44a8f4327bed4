package retrieve

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/encode"
)

// DenseOptions configures NewDense.
type DenseOptions struct {
	// ChunkSize is how many documents are passed to the encoder per call (default 256); Progress
	// is called after each chunk.
	ChunkSize int
	// Progress, when set, receives (documents encoded, total) while the corpus is encoded.
	Progress func(done, total int)
}

// Dense is an exact dense retriever: the corpus is embedded once by the encoder's document tower
// into an N×D float32 matrix, and a query embedded by the query tower is scored against every
// row by dot product (gonum BLAS Sgemv; batches of queries spread over GOMAXPROCS workers). It is also the
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
// and indexes them in corpus order, which breaks ties in Search.
func NewDense(enc encode.Encoder, docs []bench.Doc, opts DenseOptions) (*Dense, error) {
	if enc == nil {
		return nil, errNoEncoder
	}
	if opts.ChunkSize <= 0 {
		opts.ChunkSize = 256
	}
	ids := make([]string, len(docs))
	vecs := make([][]float32, 0, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	for start := 0; start < len(docs); start += opts.ChunkSize {
		end := min(start+opts.ChunkSize, len(docs))
		texts := make([]string, end-start)
		for i := range texts {
			texts[i] = DocText(docs[start+i])
		}
		chunk, err := enc.EncodeDocs(texts)
		if err != nil {
			return nil, fmt.Errorf("dense %s: encoding documents %d-%d: %w", enc.Name(), start, end-1, err)
		}
		vecs = append(vecs, chunk...)
		if opts.Progress != nil {
			opts.Progress(end, len(docs))
		}
	}
	return NewDenseFromVectors(enc, ids, vecs)
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

// SearchVectors ranks the corpus for many embedded queries. The queries are spread over
// GOMAXPROCS workers, each scoring its queries with Sgemv into its own buffer: on this corpus
// shape (N×384, N ≈ 5,000) that measured faster per query than one Sgemm over the query block
// (gonum's float32 Gemm is pure Go, its Gemv uses the assembly dot product), see
// docs/BENCHMARKS.md (encoders).
func (m *Dense) SearchVectors(qs [][]float32, k int) ([][]Candidate, error) {
	n := len(m.ids)
	out := make([][]Candidate, len(qs))
	if n == 0 || k <= 0 {
		return out, nil
	}
	for i, q := range qs {
		if len(q) != m.dim {
			return nil, fmt.Errorf("dense %s: query vector %d has %d values, want %d", m.enc.Name(), i, len(q), m.dim)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(qs))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			scores := make([]float32, n)
			mat := blas32.General{Rows: n, Cols: m.dim, Stride: m.dim, Data: m.matrix}
			for i := w; i < len(qs); i += workers {
				blas32.Gemv(blas.NoTrans, 1, mat, blas32.Vector{N: m.dim, Inc: 1, Data: qs[i]}, 0,
					blas32.Vector{N: n, Inc: 1, Data: scores})
				out[i] = topKDense(scores, k, m.ids)
			}
		}()
	}
	wg.Wait()
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
