package evaloffline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// RegisterDense adds the "dense:" family: "dense:NAME" embeds the corpus with the model folder
// NAME (a path, or a folder under <assets>/models as installed by scripts/setup) through ONNX
// Runtime rt, and ranks tools by exact dot product (retrieve.Dense). Embeddings are cached under
// <assets>/cache/embeddings, so a catalog is encoded once.
func RegisterDense(reg *Registry, rt *encode.Runtime) error {
	return reg.Register("dense:", "dense bi-encoder: a model folder or a name under $RATED_ASSETS/models", func(env Env, arg string) (retrieve.Retriever, error) {
		d, model, err := openDense(env, rt, arg)
		if err != nil {
			return nil, err
		}
		return closingRetriever{d, model}, nil
	})
}

// openDense opens the model folder named by arg and embeds env.Bench.Corpus with it. The caller
// closes the model.
func openDense(env Env, rt *encode.Runtime, arg string) (*retrieve.Dense, *encode.Model, error) {
	dir, err := ModelDir(env.Assets, arg)
	if err != nil {
		return nil, nil, err
	}
	model, err := encode.Open(dir, encode.Options{Runtime: rt, CacheDir: encode.DefaultCacheDir(env.Assets)})
	if err != nil {
		return nil, nil, err
	}
	if env.Log != nil {
		fmt.Fprintf(env.Log, "eval offline: encoding %d tools with %s\n", len(env.Bench.Corpus), dir)
	}
	d, err := retrieve.NewDense(model, env.Bench.Corpus, retrieve.DenseOptions{Progress: env.Progress})
	if err != nil {
		model.Close()
		return nil, nil, err
	}
	return d, model, nil
}

// ModelDir resolves a model argument: an existing folder as given, else <assets>/models/<name>.
func ModelDir(assets, name string) (string, error) {
	if name == "" {
		return "", errors.New("no model named")
	}
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		return name, nil
	}
	if !strings.ContainsAny(name, `/\`) {
		dir := filepath.Join(assets, "models", name)
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir, nil
		}
	}
	return "", fmt.Errorf("model %q: neither a folder nor installed under %s (run scripts/setup)", name, filepath.Join(assets, "models"))
}

// closingRetriever closes the encoder behind a dense retriever after its evaluation.
type closingRetriever struct {
	*retrieve.Dense
	model *encode.Model
}

// Close releases the encoder's ONNX Runtime sessions.
func (c closingRetriever) Close() error { return c.model.Close() }
