package encode

import "errors"

// defaultTokenizerLoader loads tokenizer.json with pkg/encode/tokenizer.
// TODO(integration): wire tokenizer.Load once pkg/encode/tokenizer lands.
func defaultTokenizerLoader(path string) (Tokenizer, error) {
	return nil, errors.New("pkg/encode/tokenizer is not available in this build: pass Options.LoadTokenizer")
}
