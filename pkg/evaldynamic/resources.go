package evaldynamic

import (
	"context"
	"fmt"
	"io"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// LexicalResources returns BM25 as the retriever and hashed bag-of-words query vectors as the
// bandit context: what runs on a machine with no encoder installed.
func LexicalResources(b *bench.Bench, name string, cfg *Config) (Resources, error) {
	vec, err := retrieve.NewLexicalContext(cfg.Retrieval.ContextDim)
	if err != nil {
		return Resources{}, fmt.Errorf("retrieval.context_dim: %w", err)
	}
	return Resources{
		Bench: b, BenchName: name,
		Retriever:  retrieve.NewBM25(b.Corpus, retrieve.DefaultBM25Params()),
		Vectorizer: vec,
	}, nil
}

// ResolveResources applies retrieval.retriever: "bm25" gives BM25 with hashed contexts; "dense"
// and "auto" (the same since auto no longer falls back) open the encoder retrieval.encoder names
// through src (a model folder name or path, openai:URL[#MODEL], or "" for the first installed),
// and fail, naming the asset home and `rated setup models`, when it is not installed. It says on
// log what it chose. The returned closer releases the encoder. Encoding the catalog stops with
// ctx's error once ctx ends.
func ResolveResources(ctx context.Context, b *bench.Bench, name string, cfg *Config, src retrieve.EncoderSource, log io.Writer, progress func(done, total int)) (Resources, func(), error) {
	noop := func() {}
	if cfg.Retrieval.Retriever == "bm25" {
		fmt.Fprintln(log, "retriever: BM25 with hashed bag-of-words contexts (retrieval.retriever = bm25)")
		res, err := LexicalResources(b, name, cfg)
		return res, noop, err
	}
	enc, err := src.Open(cfg.Retrieval.Encoder)
	if err != nil {
		return Resources{}, noop, fmt.Errorf("retrieval.retriever = %s, retrieval.encoder = %q: %w; or ask for the lexical baseline with --retriever bm25", cfg.Retrieval.Retriever, cfg.Retrieval.Encoder, err)
	}
	closer := func() { enc.Close() }
	dense, err := retrieve.NewDense(enc, b.Corpus, retrieve.DenseOptions{Progress: progress, Context: ctx})
	if err != nil {
		closer()
		return Resources{}, noop, err
	}
	where := enc.Dir
	if where == "" {
		where = enc.Name()
	}
	fmt.Fprintf(log, "retriever: %s (%s); bandit context: its query embedding (d=%d)\n", dense.Name(), where, dense.Dim())
	return Resources{
		Bench: b, BenchName: name, Retriever: dense, Vectorizer: dense, Dense: true,
		Similarity: retrieve.EncoderSimilarity{Encoder: enc},
	}, closer, nil
}
