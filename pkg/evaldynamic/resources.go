package evaldynamic

import (
	"fmt"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// LexicalResources returns BM25 as the retriever and hashed bag-of-words query vectors as the
// bandit context: what runs on a machine with no encoder installed.
func LexicalResources(b *bench.Bench, name string, cfg *Config) (Resources, error) {
	vec, err := retrieve.NewHashedBagOfWords(cfg.Retrieval.ContextDim)
	if err != nil {
		return Resources{}, fmt.Errorf("retrieval.context_dim: %w", err)
	}
	return Resources{
		Bench: b, BenchName: name,
		Retriever:  retrieve.NewBM25(b.Corpus, retrieve.DefaultBM25Params()),
		Vectorizer: vec,
	}, nil
}
