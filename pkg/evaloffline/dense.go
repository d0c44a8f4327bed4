package evaloffline

import (
	"fmt"

	"github.com/rated-dev/rated/pkg/retrieve"
)

// RegisterDense adds the "dense:" family: "dense:SPEC" embeds the corpus with the encoder SPEC
// names (an installed model folder of the asset home, a folder path, or openai:URL[#MODEL]; see
// retrieve.EncoderSource) and ranks tools by exact dot product (retrieve.Dense). ONNX embeddings
// are cached (EncoderSource.Options.CacheDir), so a catalog is encoded once.
func RegisterDense(reg *Registry) error {
	if err := reg.Register("dense:", "dense bi-encoder: an installed model folder name, a folder path, or openai:URL[#MODEL]", func(env Env, arg string) (retrieve.Retriever, error) {
		d, enc, err := openDense(env, arg)
		if err != nil {
			return nil, err
		}
		return closingRetriever{d, enc}, nil
	}); err != nil {
		return err
	}
	return reg.SetCheck("dense:", checkEncoder)
}

// checkEncoder resolves an encoder spec without opening it: an endpoint's URL, or an installed
// model folder or a path holding one.
func checkEncoder(env Env, arg string) error {
	if retrieve.IsEndpoint(arg) {
		_, err := retrieve.ParseEndpointSpec(arg)
		return err
	}
	_, err := env.Encoders.FindModel(arg)
	return err
}

// openDense opens the encoder named by arg and embeds env.Bench.Corpus with it. The caller
// closes the encoder.
func openDense(env Env, arg string) (*retrieve.Dense, *retrieve.OpenedEncoder, error) {
	enc, err := env.Encoders.Open(arg)
	if err != nil {
		return nil, nil, err
	}
	if env.Log != nil {
		where := enc.Dir
		if where == "" {
			where = enc.Name()
		}
		fmt.Fprintf(env.Log, "eval offline: encoding %d tools with %s\n", len(env.Bench.Corpus), where)
	}
	d, err := retrieve.NewDense(enc, env.Bench.Corpus, retrieve.DenseOptions{Progress: env.Progress, Context: env.Ctx})
	if err != nil {
		enc.Close()
		return nil, nil, err
	}
	return d, enc, nil
}

// closingRetriever closes the encoder behind a dense retriever after its evaluation.
type closingRetriever struct {
	*retrieve.Dense
	enc *retrieve.OpenedEncoder
}

// Close releases the encoder's ONNX Runtime sessions.
func (c closingRetriever) Close() error { return c.enc.Close() }

// RegisterSparse adds the "sparse:" family: "sparse:SPEC" embeds the corpus with the SPLADE
// model folder SPEC names (an installed folder such as splade-tiny, or a path; its output is one
// weight per vocabulary term) and ranks tools with an inverted index over the positive weights
// (retrieve.Sparse). Its vectors are as long as the vocabulary, so they bypass the embedding
// cache.
func RegisterSparse(reg *Registry) error {
	if err := reg.Register("sparse:", "learned sparse (SPLADE) retriever: an installed model folder name or a path, e.g. sparse:splade-tiny", func(env Env, arg string) (retrieve.Retriever, error) {
		enc, err := env.Encoders.Open(arg)
		if err != nil {
			return nil, err
		}
		if env.Log != nil {
			fmt.Fprintf(env.Log, "eval offline: encoding %d tools with %s (sparse)\n", len(env.Bench.Corpus), enc.Dir)
		}
		s, err := retrieve.NewSparse(enc.Uncached(), env.Bench.Corpus, retrieve.DenseOptions{Progress: env.Progress, Context: env.Ctx})
		if err != nil {
			enc.Close()
			return nil, err
		}
		return closingSparse{s, enc}, nil
	}); err != nil {
		return err
	}
	return reg.SetCheck("sparse:", checkEncoder)
}

// closingSparse closes the encoder behind a sparse retriever after its evaluation.
type closingSparse struct {
	*retrieve.Sparse
	enc *retrieve.OpenedEncoder
}

// Close releases the encoder's ONNX Runtime sessions.
func (c closingSparse) Close() error { return c.enc.Close() }
