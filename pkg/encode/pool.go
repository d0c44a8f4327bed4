package encode

import (
	"fmt"
	"math"
)

// poolCLS returns the first token's state of each sequence from hidden, a row-major
// [batch, seqLen, dim] tensor.
func poolCLS(hidden []float32, batch, seqLen, dim int) [][]float32 {
	out := make([][]float32, batch)
	for b := range batch {
		v := make([]float32, dim)
		copy(v, hidden[b*seqLen*dim:b*seqLen*dim+dim])
		out[b] = v
	}
	return out
}

// poolMean averages the token states whose attention mask is 1, as sentence-transformers does
// (the token count is clamped to at least 1e-9). Sums are accumulated in float64.
func poolMean(hidden []float32, mask []int64, batch, seqLen, dim int) [][]float32 {
	out := make([][]float32, batch)
	acc := make([]float64, dim)
	for b := range batch {
		clear(acc)
		count := 0.0
		for t := range seqLen {
			m := float64(mask[b*seqLen+t])
			if m == 0 {
				continue
			}
			count += m
			row := hidden[(b*seqLen+t)*dim : (b*seqLen+t+1)*dim]
			for i, x := range row {
				acc[i] += m * float64(x)
			}
		}
		count = math.Max(count, 1e-9)
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(acc[i] / count)
		}
		out[b] = v
	}
	return out
}

// normalizeL2 scales v to unit length in place. A zero or non-finite vector is an error: a model
// that produces one is broken, and a silent zero vector would rank arbitrarily.
func normalizeL2(v []float32) error {
	sum := 0.0
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	norm := math.Sqrt(sum)
	if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return fmt.Errorf("embedding has norm %v", norm)
	}
	inv := 1 / norm
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return nil
}

// checkFinite rejects vectors holding NaN or infinite values.
func checkFinite(v []float32) error {
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("embedding component %d is %v", i, x)
		}
	}
	return nil
}
