package encode

import "fmt"

// TokenBatch is a padded batch of token sequences in the layout ONNX BERT models take: row-major
// [BatchSize, SeqLen] int64 tensors.
type TokenBatch struct {
	InputIDs      []int64
	AttentionMask []int64
	TokenTypeIDs  []int64
	BatchSize     int
	SeqLen        int
}

// Tokenizer turns texts into a padded batch, truncating each to maxLen tokens (special tokens
// included) and padding to the longest sequence of the batch.
type Tokenizer interface {
	EncodeBatch(texts []string, maxLen int) (TokenBatch, error)
}

// TokenizerLoader loads the tokenizer described by a Hugging Face tokenizer.json.
type TokenizerLoader func(path string) (Tokenizer, error)

// validate checks the shape invariants of a batch produced by a tokenizer for n texts.
func (b TokenBatch) validate(n int) error {
	size := b.BatchSize * b.SeqLen
	switch {
	case b.BatchSize != n:
		return fmt.Errorf("tokenizer returned %d sequences for %d texts", b.BatchSize, n)
	case b.SeqLen < 1:
		return fmt.Errorf("tokenizer returned sequence length %d", b.SeqLen)
	case len(b.InputIDs) != size || len(b.AttentionMask) != size:
		return fmt.Errorf("tokenizer returned %d ids and %d mask values for a %dx%d batch", len(b.InputIDs), len(b.AttentionMask), b.BatchSize, b.SeqLen)
	case b.TokenTypeIDs != nil && len(b.TokenTypeIDs) != size:
		return fmt.Errorf("tokenizer returned %d token type ids for a %dx%d batch", len(b.TokenTypeIDs), b.BatchSize, b.SeqLen)
	}
	return nil
}
