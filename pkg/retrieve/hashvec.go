package retrieve

import (
	"fmt"
	"hash/fnv"
	"math"
)

// HashedBagOfWords is the bandit context used when no dense encoder is installed: the query's
// lexical tokens (Tokenize) hashed into Dim buckets with a second hash bit choosing the sign
// (signed feature hashing keeps inner products unbiased under collisions), L2-normalised.
// It is deterministic: no seed, no vocabulary.
type HashedBagOfWords struct {
	dim int
}

// NewHashedBagOfWords returns a vectorizer with dim buckets.
func NewHashedBagOfWords(dim int) (*HashedBagOfWords, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("hashed bag of words: dimension must be > 0, got %d", dim)
	}
	return &HashedBagOfWords{dim: dim}, nil
}

// Name implements QueryVectorizer.
func (h *HashedBagOfWords) Name() string { return fmt.Sprintf("hashed-bow-%d", h.dim) }

// Dim implements QueryVectorizer.
func (h *HashedBagOfWords) Dim() int { return h.dim }

// QueryVector implements QueryVectorizer. A query without tokens maps to the zero vector, which
// leaves the bandit with its intercept (the tool's prior and history) alone.
func (h *HashedBagOfWords) QueryVector(query string) ([]float64, error) {
	v := make([]float64, h.dim)
	for _, tok := range Tokenize(query) {
		f := fnv.New64a()
		f.Write([]byte(tok))
		sum := f.Sum64()
		sign := 1.0
		if sum>>63 == 1 {
			sign = -1
		}
		v[int(sum%uint64(h.dim))] += sign
	}
	norm := 0.0
	for _, x := range v {
		norm += x * x
	}
	if norm > 0 {
		inv := 1 / math.Sqrt(norm)
		for i := range v {
			v[i] *= inv
		}
	}
	return v, nil
}
