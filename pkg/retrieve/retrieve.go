// Package retrieve holds the first stage of RATED: retrievers that rank catalog tools for a query
// (TF-IDF, BM25, dense bi-encoders, embeddings endpoints, cross-encoder rerankers), all behind
// one Retriever interface, plus the query vectors the bandit uses as its context.
package retrieve

import "fmt"

// Candidate is one retrieved tool: its id, its position in the indexed corpus and its score.
type Candidate struct {
	ID    string
	Index int
	Score float64
}

// Retriever ranks the indexed corpus for a query.
type Retriever interface {
	// Name identifies the retriever in tables (for example "BM25" or "dense:bge-small-en-v1.5").
	Name() string
	// Search returns at most k candidates, best first. Ties are broken by corpus order so results
	// are deterministic.
	Search(query string, k int) ([]Candidate, error)
}

// QueryVectorizer maps a query to the context vector of the bandit (the query embedding for a
// dense retriever, a hashed bag of words otherwise). Vectors are L2-normalised.
type QueryVectorizer interface {
	// Name identifies the vectorizer in outputs.
	Name() string
	// Dim is the length of every vector.
	Dim() int
	// QueryVector returns the context vector of a query.
	QueryVector(query string) ([]float64, error)
}

// BatchSearcher is implemented by retrievers with a faster (parallel or batched) path for many
// queries at once.
type BatchSearcher interface {
	SearchBatch(queries []string, k int) ([][]Candidate, error)
}

// SearchAll runs every query through r, in one batch when r is a BatchSearcher, else one by one;
// results are in query order.
func SearchAll(r Retriever, queries []string, k int) ([][]Candidate, error) {
	if b, ok := r.(BatchSearcher); ok {
		return b.SearchBatch(queries, k)
	}
	out := make([][]Candidate, len(queries))
	for i, q := range queries {
		c, err := r.Search(q, k)
		if err != nil {
			return nil, fmt.Errorf("query %d: %w", i, err)
		}
		out[i] = c
	}
	return out, nil
}
