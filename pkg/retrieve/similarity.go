package retrieve

import (
	"fmt"

	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/encode"
)

// EncoderSimilarity is the prior's name–description consistency under a sentence encoder (the
// paper's SBERT cosine): both texts go through the document tower and the cosine of the
// normalised embeddings is returned. It satisfies catalog.Similarity.
type EncoderSimilarity struct {
	Encoder encode.Encoder
}

// Name implements catalog.Similarity.
func (s EncoderSimilarity) Name() string { return "cosine:" + s.Encoder.Name() }

var _ catalog.BatchSimilarity = EncoderSimilarity{}

// Similarity implements catalog.Similarity.
func (s EncoderSimilarity) Similarity(a, b string) (float64, error) {
	v, err := s.Encoder.EncodeDocs([]string{a, b})
	if err != nil {
		return 0, err
	}
	if len(v) != 2 || len(v[0]) != len(v[1]) {
		return 0, fmt.Errorf("encoder %s returned %d vectors for 2 texts", s.Encoder.Name(), len(v))
	}
	dot := 0.0
	for i := range v[0] {
		dot += float64(v[0][i]) * float64(v[1][i])
	}
	return dot, nil
}

// Similarities implements catalog.BatchSimilarity: the distinct texts of both lists go through
// the document tower in one call (sorted by length and batched by the encoder, and cached like
// every embedding), then each pair's cosine is a dot product.
func (s EncoderSimilarity) Similarities(a, b []string) ([]float64, error) {
	if len(a) != len(b) {
		return nil, fmt.Errorf("similarities: %d first texts but %d second texts", len(a), len(b))
	}
	index := map[string]int{}
	var texts []string
	pos := func(s string) int {
		i, ok := index[s]
		if !ok {
			i = len(texts)
			index[s] = i
			texts = append(texts, s)
		}
		return i
	}
	pairs := make([][2]int, len(a))
	for i := range a {
		pairs[i] = [2]int{pos(a[i]), pos(b[i])}
	}
	if len(texts) == 0 {
		return []float64{}, nil
	}
	v, err := s.Encoder.EncodeDocs(texts)
	if err != nil {
		return nil, err
	}
	if len(v) != len(texts) {
		return nil, fmt.Errorf("encoder %s returned %d vectors for %d texts", s.Encoder.Name(), len(v), len(texts))
	}
	out := make([]float64, len(pairs))
	for i, p := range pairs {
		x, y := v[p[0]], v[p[1]]
		if len(x) != len(y) {
			return nil, fmt.Errorf("encoder %s returned vectors of lengths %d and %d", s.Encoder.Name(), len(x), len(y))
		}
		dot := 0.0
		for j := range x {
			dot += float64(x[j]) * float64(y[j])
		}
		out[i] = dot
	}
	return out, nil
}
