package train

import (
	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/encode/tokenizer"
)

// LoadEncodeTokenizer loads a tokenizer.json with pkg/encode/tokenizer for pkg/encode
// (encode.Options.LoadTokenizer), so validation encodes exactly as training tokenizes.
func LoadEncodeTokenizer(path string) (encode.Tokenizer, error) {
	tok, err := tokenizer.Load(path)
	if err != nil {
		return nil, err
	}
	return encodeTokenizer{tok}, nil
}

type encodeTokenizer struct{ tok *tokenizer.Tokenizer }

// EncodeBatch implements encode.Tokenizer.
func (e encodeTokenizer) EncodeBatch(texts []string, maxLen int) (encode.TokenBatch, error) {
	b := e.tok.EncodeBatch(texts, maxLen)
	return encode.TokenBatch{InputIDs: b.InputIDs, AttentionMask: b.AttentionMask, TokenTypeIDs: b.TokenTypeIDs,
		BatchSize: b.BatchSize, SeqLen: b.SeqLen}, nil
}
