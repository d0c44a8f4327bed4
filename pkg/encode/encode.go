// Package encode runs transformer text encoders: a WordPiece tokenizer compatible with Hugging Face
// tokenizer.json, ONNX Runtime sessions, pooling, batching and an embedding cache.
package encode

import "context"

// Encoder turns texts into L2-normalised embeddings. A dual encoder (DRAGON-style) uses different
// towers for queries and documents; a single encoder uses one model for both, possibly with
// different prefixes.
type Encoder interface {
	// Name identifies the encoder (model folder name) in outputs and cache keys.
	Name() string
	// Dim is the embedding size.
	Dim() int
	// EncodeQueries embeds queries with the query tower.
	EncodeQueries(texts []string) ([][]float32, error)
	// EncodeDocs embeds documents (tool texts) with the document tower.
	EncodeDocs(texts []string) ([][]float32, error)
}

// ProgressEncoder is an Encoder that can embed a whole corpus in one call while reporting
// (texts done, total) after every batch (progress may be nil) and stopping with ctx's error
// between batches once ctx ends.
type ProgressEncoder interface {
	Encoder
	EncodeDocsProgress(ctx context.Context, texts []string, progress func(done, total int)) ([][]float32, error)
}

var _ ProgressEncoder = (*Model)(nil)
