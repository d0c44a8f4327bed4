package evaldynamic

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/encode"
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

// preferredEncoders are tried in order when retrieval.encoder is empty; other installed model
// folders follow alphabetically.
var preferredEncoders = []string{"dragon-plus", "bge-small-en-v1.5", "all-minilm-l6-v2"}

// FindEncoder returns the model folder to use: retrieval.encoder when set (a path, or a name
// under assets/models), else the first installed of the preferred encoders. It returns "" when
// none is installed.
func FindEncoder(cfg *Config, assets string) (string, error) {
	models := filepath.Join(assets, "models")
	if e := cfg.Retrieval.Encoder; e != "" {
		for _, dir := range []string{e, filepath.Join(models, e)} {
			if _, err := os.Stat(filepath.Join(dir, "rated.yaml")); err == nil {
				return dir, nil
			}
		}
		return "", fmt.Errorf("retrieval.encoder = %q: no model folder (with rated.yaml) there or under %s", e, models)
	}
	entries, _ := os.ReadDir(models)
	var names []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(models, e.Name(), "rated.yaml")); err == nil {
			names = append(names, e.Name())
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return rank(names[i]) < rank(names[j]) })
	if len(names) == 0 {
		return "", nil
	}
	return filepath.Join(models, names[0]), nil
}

func rank(name string) int {
	for i, p := range preferredEncoders {
		if p == name {
			return i
		}
	}
	return len(preferredEncoders)
}

// ResolveResources applies retrieval.retriever: "bm25", "dense" (an installed encoder is
// required), or "auto" (dense when an encoder and the ONNX Runtime library are installed under
// assets, else BM25). It says on log which it chose. The returned closer releases the encoder.
func ResolveResources(b *bench.Bench, name string, cfg *Config, assets string, log io.Writer, progress func(done, total int)) (Resources, func(), error) {
	noop := func() {}
	mode := cfg.Retrieval.Retriever
	if mode == "bm25" {
		res, err := LexicalResources(b, name, cfg)
		return res, noop, err
	}
	modelDir, err := FindEncoder(cfg, assets)
	if err != nil {
		return Resources{}, noop, err
	}
	lib := encode.DefaultLibraryPath(assets)
	_, libErr := os.Stat(lib)
	if modelDir == "" || libErr != nil {
		if mode == "dense" {
			return Resources{}, noop, fmt.Errorf("retrieval.retriever = dense, but no encoder is installed (model folder: %q, ONNX Runtime library %s: %v); run scripts/setup", modelDir, lib, libErr)
		}
		fmt.Fprintf(log, "retriever: BM25 with hashed bag-of-words contexts (no encoder installed under %s; run scripts/setup for dense retrieval)\n", assets)
		res, err := LexicalResources(b, name, cfg)
		return res, noop, err
	}
	rt := encode.NewRuntime(lib)
	model, err := encode.Open(modelDir, encode.Options{Runtime: rt, CacheDir: encode.DefaultCacheDir(assets)})
	if err != nil {
		return Resources{}, noop, err
	}
	closer := func() { model.Close() }
	dense, err := retrieve.NewDense(model, b.Corpus, retrieve.DenseOptions{Progress: progress})
	if err != nil {
		closer()
		return Resources{}, noop, err
	}
	fmt.Fprintf(log, "retriever: %s (model folder %s); bandit context: its query embedding (d=%d)\n", dense.Name(), modelDir, dense.Dim())
	return Resources{
		Bench: b, BenchName: name, Retriever: dense, Vectorizer: dense, Dense: true,
		Similarity: retrieve.EncoderSimilarity{Encoder: model},
	}, closer, nil
}
