package cmd

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/home"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// encodingFlags are the encoder settings of every command that embeds text: ONNX Runtime's
// threads and the batching of pkg/encode (texts sorted by token count, batches cut by a
// padded-token budget).
type encodingFlags struct {
	threads, batchTokens, batchSize int
}

// register adds --threads, --batch-tokens and --batch-size to f.
func (e *encodingFlags) register(f *pflag.FlagSet) {
	f.IntVar(&e.threads, "threads", 0, "ONNX Runtime intra-op threads (0 = its default, one per core)")
	f.IntVar(&e.batchTokens, "batch-tokens", encode.DefaultBatchTokens, "padded tokens per encoder call (rows × longest row of the batch)")
	f.IntVar(&e.batchSize, "batch-size", encode.DefaultBatchSize, "most texts per encoder call")
}

// apply checks the flags and sets them in opts.
func (e encodingFlags) apply(opts encode.Options) (encode.Options, error) {
	switch {
	case e.threads < 0:
		return opts, fmt.Errorf("--threads %d: want 0 (ONNX Runtime's default) or more", e.threads)
	case e.batchTokens < 1:
		return opts, fmt.Errorf("--batch-tokens %d: want at least 1", e.batchTokens)
	case e.batchSize < 1:
		return opts, fmt.Errorf("--batch-size %d: want at least 1", e.batchSize)
	}
	opts.Threads, opts.BatchTokens, opts.BatchSize = e.threads, e.batchTokens, e.batchSize
	return opts, nil
}

// sharedEncoders is the encoder source of a command with these flags and the home's embedding
// cache, opening each model folder once for the whole command (encode.Models): every retriever,
// the prior and latency timing share it. The caller closes the returned Models.
func (e encodingFlags) sharedEncoders(h home.Home) (retrieve.EncoderSource, *encode.Models, error) {
	opts, err := e.apply(encode.Options{CacheDir: h.EmbeddingCache()})
	if err != nil {
		return retrieve.EncoderSource{}, nil, err
	}
	src := encoderSource(h, opts)
	src.Models = encode.NewModels(src.Options)
	return src, src.Models, nil
}
