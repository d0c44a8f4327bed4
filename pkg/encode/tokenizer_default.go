package encode

import "github.com/rated-dev/rated/pkg/encode/tokenizer"

// defaultTokenizerLoader loads tokenizer.json with pkg/encode/tokenizer (BERT WordPiece, ids
// identical to Hugging Face tokenizers); a tokenizer.json of another type is an error.
func defaultTokenizerLoader(path string) (Tokenizer, error) {
	t, err := tokenizer.Load(path)
	if err != nil {
		return nil, err
	}
	return wordPiece{t}, nil
}

// wordPiece adapts *tokenizer.Tokenizer to Tokenizer and PairTokenizer.
type wordPiece struct{ t *tokenizer.Tokenizer }

// EncodeBatch encodes single texts.
func (w wordPiece) EncodeBatch(texts []string, maxLen int) (TokenBatch, error) {
	return TokenBatch(w.t.EncodeBatch(texts, maxLen)), nil
}

// EncodePairBatch encodes (first, second) pairs for cross-encoders.
func (w wordPiece) EncodePairBatch(first, second []string, maxLen int) (TokenBatch, error) {
	return TokenBatch(w.t.EncodePairBatch(first, second, maxLen)), nil
}
