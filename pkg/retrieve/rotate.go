package retrieve

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// RotatedContext is a QueryVectorizer whose vectors are another's turned by a fixed random
// rotation (an orthogonal matrix drawn from a seed): inner products, norms and so cosines are
// those of the inner vectorizer, and every policy whose model is rotation-invariant (ridge
// regressions with isotropic priors, exact kernels, centring) sees the same contexts. What it
// changes is that every coordinate carries the query: a hashed bag of words puts a query's
// weight on a few buckets, so one sign bit per coordinate (the sign sketches of the kernel
// relevance model) said almost nothing but the mean's signs, and every query looked like every
// other (RATED-R under task feedback fell below the static ranking with BM25 contexts).
type RotatedContext struct {
	inner QueryVectorizer
	cols  [][]float64 // the rotation's columns: out = Σᵢ inᵢ·colᵢ, cheap for sparse inputs
	name  string
}

// maxRotatedDim bounds the rotation's matrix (dim² values).
const maxRotatedDim = 4096

// NewRotatedContext turns inner's vectors by the Q factor of a seeded Gaussian matrix (a
// uniformly random rotation, Haar-distributed).
func NewRotatedContext(inner QueryVectorizer, seed uint64) (*RotatedContext, error) {
	d := inner.Dim()
	if d <= 0 || d > maxRotatedDim {
		return nil, fmt.Errorf("rotated context: dimension %d (want 1 to %d)", d, maxRotatedDim)
	}
	rng := rand.New(rand.NewPCG(seed, 0x0c7a))
	g := mat.NewDense(d, d, nil)
	for i := range d {
		for j := range d {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	cols := make([][]float64, d)
	for j := range d {
		cols[j] = make([]float64, d)
		mat.Col(cols[j], j, &q)
	}
	return &RotatedContext{inner: inner, cols: cols, name: inner.Name() + "-rotated"}, nil
}

// NewLexicalContext is the bandit context of the lexical first stage: a hashed bag of words of
// dim buckets (HashedBagOfWords), rotated (RotatedContext) with a fixed seed, so that the same
// query always has the same context.
func NewLexicalContext(dim int) (*RotatedContext, error) {
	h, err := NewHashedBagOfWords(dim)
	if err != nil {
		return nil, err
	}
	return NewRotatedContext(h, 1)
}

// Name implements QueryVectorizer.
func (r *RotatedContext) Name() string { return r.name }

// Dim implements QueryVectorizer.
func (r *RotatedContext) Dim() int { return len(r.cols) }

// QueryVector implements QueryVectorizer.
func (r *RotatedContext) QueryVector(query string) ([]float64, error) {
	in, err := r.inner.QueryVector(query)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(r.cols))
	for i, x := range in {
		if x == 0 {
			continue
		}
		for j, c := range r.cols[i] {
			out[j] += x * c
		}
	}
	return out, nil
}
