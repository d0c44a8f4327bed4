package retrieve

import (
	"fmt"

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
