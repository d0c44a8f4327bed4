package router

import (
	"fmt"
	"math"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// Frontend is the router's first stage: it turns a query into the policy's context vector and
// indexes the live catalog for search. Contexts are float32 values (an encoder's own precision),
// so a report record stores them exactly.
type Frontend interface {
	// Name identifies the retriever and context in the state and the logs (a state is bound to
	// one frontend).
	Name() string
	// Dim is the context dimension.
	Dim() int
	// Context returns the query's context vector, unit length.
	Context(query string) ([]float32, error)
	// Contexts is Context for many queries at once (batched by an encoder).
	Contexts(queries []string) ([][]float32, error)
	// DocVectors embeds tools for the index (nil for a lexical frontend, which needs none).
	DocVectors(tools []catalog.Tool) ([][]float32, error)
	// Similarity scores a tool's name against its description for the static prior.
	Similarity() catalog.Similarity
	// Index builds a searchable index over tools (vecs as DocVectors returned them).
	Index(tools []catalog.Tool, vecs [][]float32) (Index, error)
}

// Index searches one version of the live catalog.
type Index interface {
	// Search returns at most k tools, best first, with Score the normalised semantic score
	// S_sem: cosine for a dense frontend, score / top score for a lexical one.
	Search(query string, context []float32, k int) ([]retrieve.Candidate, error)
}

// DenseFrontend embeds queries and tools with an encoder (a model folder or an
// OpenAI-compatible embeddings endpoint, pkg/retrieve) and searches exactly by cosine. Repeated
// queries hit an in-memory LRU of embeddings.
type DenseFrontend struct {
	enc   encode.Encoder
	cache *encode.QueryCache
}

// NewDenseFrontend wraps enc; cacheSize bounds the query-embedding cache (0: 10,000 queries).
func NewDenseFrontend(enc encode.Encoder, cacheSize int) *DenseFrontend {
	if cacheSize <= 0 {
		cacheSize = 10000
	}
	return &DenseFrontend{enc: enc, cache: encode.NewQueryCache(enc, cacheSize)}
}

// Name implements Frontend.
func (f *DenseFrontend) Name() string { return "dense:" + f.enc.Name() }

// Dim implements Frontend.
func (f *DenseFrontend) Dim() int { return f.enc.Dim() }

// CacheStats returns the query cache's hits, misses and size.
func (f *DenseFrontend) CacheStats() (hits, misses uint64, size int) { return f.cache.Stats() }

// Context implements Frontend.
func (f *DenseFrontend) Context(query string) ([]float32, error) {
	v, err := f.cache.EncodeQueries([]string{query})
	if err != nil {
		return nil, fmt.Errorf("encode query with %s: %w", f.enc.Name(), err)
	}
	if len(v) != 1 || len(v[0]) != f.Dim() {
		return nil, fmt.Errorf("encoder %s returned a vector of the wrong shape", f.enc.Name())
	}
	return v[0], nil
}

// Contexts implements Frontend: one batched encoder call.
func (f *DenseFrontend) Contexts(queries []string) ([][]float32, error) {
	v, err := f.cache.EncodeQueries(queries)
	if err != nil {
		return nil, fmt.Errorf("encode %d queries with %s: %w", len(queries), f.enc.Name(), err)
	}
	if len(v) != len(queries) {
		return nil, fmt.Errorf("encoder %s returned %d vectors for %d queries", f.enc.Name(), len(v), len(queries))
	}
	return v, nil
}

// DocVectors implements Frontend: the documents go through the encoder's document tower in
// chunks of 256.
func (f *DenseFrontend) DocVectors(tools []catalog.Tool) ([][]float32, error) {
	docs := bench.DocsFromTools(tools)
	out := make([][]float32, 0, len(docs))
	for start := 0; start < len(docs); start += 256 {
		texts := make([]string, 0, 256)
		for _, d := range docs[start:min(start+256, len(docs))] {
			texts = append(texts, retrieve.DocText(d))
		}
		vecs, err := f.enc.EncodeDocs(texts)
		if err != nil {
			return nil, fmt.Errorf("encode tools with %s: %w", f.enc.Name(), err)
		}
		if len(vecs) != len(texts) {
			return nil, fmt.Errorf("encoder %s returned %d vectors for %d tools", f.enc.Name(), len(vecs), len(texts))
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// Similarity implements Frontend: the encoder's cosine, as in the paper's prior.
func (f *DenseFrontend) Similarity() catalog.Similarity {
	return retrieve.EncoderSimilarity{Encoder: f.enc}
}

// Index implements Frontend.
func (f *DenseFrontend) Index(tools []catalog.Tool, vecs [][]float32) (Index, error) {
	ids := make([]string, len(tools))
	for i := range tools {
		ids[i] = tools[i].ID
	}
	d, err := retrieve.NewDenseFromVectors(f.enc, ids, vecs)
	if err != nil {
		return nil, err
	}
	return denseIndex{d}, nil
}

type denseIndex struct{ d *retrieve.Dense }

func (ix denseIndex) Search(_ string, context []float32, k int) ([]retrieve.Candidate, error) {
	return ix.d.SearchVector(context, k)
}

// LexicalFrontend is BM25 with hashed bag-of-words contexts: what runs with no encoder
// installed (and what the examples use).
type LexicalFrontend struct {
	vec *retrieve.RotatedContext
}

// NewLexicalFrontend returns the frontend with dim-bucket contexts.
func NewLexicalFrontend(dim int) (*LexicalFrontend, error) {
	v, err := retrieve.NewLexicalContext(dim)
	if err != nil {
		return nil, err
	}
	return &LexicalFrontend{vec: v}, nil
}

// Name implements Frontend.
func (f *LexicalFrontend) Name() string { return "bm25+" + f.vec.Name() }

// Dim implements Frontend.
func (f *LexicalFrontend) Dim() int { return f.vec.Dim() }

// Context implements Frontend.
func (f *LexicalFrontend) Context(query string) ([]float32, error) {
	v, err := f.vec.QueryVector(query)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out, nil
}

// Contexts implements Frontend.
func (f *LexicalFrontend) Contexts(queries []string) ([][]float32, error) {
	out := make([][]float32, len(queries))
	for i, q := range queries {
		v, err := f.Context(q)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// DocVectors implements Frontend: none.
func (f *LexicalFrontend) DocVectors([]catalog.Tool) ([][]float32, error) { return nil, nil }

// Similarity implements Frontend: the lexical fallback of the prior.
func (f *LexicalFrontend) Similarity() catalog.Similarity { return catalog.LexicalSimilarity{} }

// Index implements Frontend.
func (f *LexicalFrontend) Index(tools []catalog.Tool, _ [][]float32) (Index, error) {
	return lexicalIndex{retrieve.NewBM25(bench.DocsFromTools(tools), retrieve.DefaultBM25Params())}, nil
}

type lexicalIndex struct{ bm *retrieve.BM25 }

func (ix lexicalIndex) Search(query string, _ []float32, k int) ([]retrieve.Candidate, error) {
	c, err := ix.bm.Search(query, k)
	if err != nil || len(c) == 0 {
		return c, err
	}
	if top := c[0].Score; top > 0 && !math.IsInf(top, 0) {
		for i := range c {
			c[i].Score /= top
		}
	}
	return c, nil
}
