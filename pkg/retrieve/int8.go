package retrieve

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/rated-dev/rated/internal/vecmath"
)

// Int8Dense is exact search over int8 scalar-quantised vectors: every document value is
// round(x·127/m) with m the largest |x| of the corpus (one scale, so int8 dot products stay
// comparable across documents), a query is quantised with its own largest value, and a scan of
// the int8 matrix (a quarter of the float32 bytes, the cost of exact search at 1M tools) keeps
// the Rescore best per query, which are then re-scored by float32 dot product and cut to k. The
// float32 matrix of the Dense stays for that re-scoring.
type Int8Dense struct {
	dense   *Dense
	codes   []int8 // row i = quantised embedding of document i
	rescore int
}

var _ Retriever = (*Int8Dense)(nil)

// NewInt8Dense quantises the documents of d; rescore (at least k at search time) is the
// shortlist re-scored in float32.
func NewInt8Dense(d *Dense, rescore int) (*Int8Dense, error) {
	if rescore < 1 {
		return nil, fmt.Errorf("int8 %s: rescore %d, want at least 1", d.enc.Name(), rescore)
	}
	peak := float32(0)
	for _, x := range d.matrix {
		peak = max(peak, float32(math.Abs(float64(x))))
	}
	codes := make([]int8, len(d.matrix))
	if peak > 0 {
		s := 127 / peak
		for i, x := range d.matrix {
			codes[i] = int8(max(-127, min(127, math.Round(float64(x*s)))))
		}
	}
	return &Int8Dense{dense: d, codes: codes, rescore: rescore}, nil
}

// Name is "int8:" and the encoder's name.
func (q *Int8Dense) Name() string { return "int8:" + q.dense.enc.Name() }

// Search embeds the query with the dense retriever's encoder and searches.
func (q *Int8Dense) Search(query string, k int) ([]Candidate, error) {
	v, err := q.dense.embedQueries([]string{query})
	if err != nil {
		return nil, err
	}
	return q.SearchVector(v[0], k)
}

// SearchVector scans the int8 matrix for one embedded query, split over GOMAXPROCS workers, and
// re-scores the shortlist in float32.
func (q *Int8Dense) SearchVector(v []float32, k int) ([]Candidate, error) {
	d := q.dense
	if len(v) != d.dim {
		return nil, fmt.Errorf("int8 %s: query vector has %d values, want %d", d.enc.Name(), len(v), d.dim)
	}
	n := d.Len()
	if n == 0 || k <= 0 {
		return nil, nil
	}
	qv := quantiseQuery(v)
	short := min(n, max(k, q.rescore))
	workers := min(runtime.GOMAXPROCS(0), max(1, n/searchDocBlock))
	heaps := make([]*topK, workers)
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		heaps[w] = newTopK(short)
		lo, hi := w*chunk, min(n, (w+1)*chunk)
		wg.Add(1)
		go func() {
			defer wg.Done()
			scores := make([]int32, searchDocBlock)
			row := make([]float32, searchDocBlock)
			for b := lo; b < hi; b += searchDocBlock {
				e := min(hi, b+searchDocBlock)
				vecmath.DotInt8Rows(qv, q.codes[b*d.dim:e*d.dim], e-b, d.dim, scores)
				for j := range e - b {
					row[j] = float32(scores[j])
				}
				heaps[w].pushRow(row[:e-b], b)
			}
		}()
	}
	wg.Wait()
	// One shortlist of `short` from the workers' heaps: re-scoring every worker's would re-score
	// short × workers, and recall and time would depend on the host's cores.
	list := heaps[0]
	if workers > 1 {
		list = newTopK(short)
		for _, h := range heaps {
			for j, i := range h.index {
				list.push(h.score[j], i)
			}
		}
	}
	top := newTopK(min(k, n))
	for _, i := range list.index {
		var s float32
		for j, x := range d.matrix[int(i)*d.dim : (int(i)+1)*d.dim] {
			s += x * v[j]
		}
		top.push(s, i)
	}
	return top.candidates(d.ids), nil
}

// quantiseQuery maps a query to int16 values in ±127 by its own largest |x| (the scale does not
// change the ranking).
func quantiseQuery(v []float32) []int16 {
	peak := float32(0)
	for _, x := range v {
		peak = max(peak, float32(math.Abs(float64(x))))
	}
	out := make([]int16, len(v))
	if peak == 0 {
		return out
	}
	s := 127 / peak
	for i, x := range v {
		out[i] = int16(max(-127, min(127, math.Round(float64(x*s)))))
	}
	return out
}
