package encode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// PairTokenizer encodes (first, second) pairs as [CLS] first [SEP] second [SEP] with token
// types 0 then 1, truncating longest-first to maxLen and padding to the longest pair.
type PairTokenizer interface {
	EncodePairBatch(first, second []string, maxLen int) (TokenBatch, error)
}

// CrossEncoder scores (query, document) pairs jointly with a sequence-classification model
// (kind: cross-encoder in rated.yaml): one logit per pair, higher is more relevant. Safe for
// concurrent use; Close releases the session.
type CrossEncoder struct {
	cfg   *Config
	sess  *session
	tok   PairTokenizer
	batch int
}

// OpenCrossEncoder opens a cross-encoder model folder. Its ONNX output must be [batch, 1].
func OpenCrossEncoder(dir string, opts Options) (*CrossEncoder, error) {
	if opts.Runtime == nil {
		return nil, errors.New("encode.OpenCrossEncoder: Options.Runtime is nil")
	}
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, ConfigFile)
	if cfg.Kind != KindCrossEncoder {
		return nil, fmt.Errorf("%s: kind %s, want cross-encoder", cfgPath, cfg.Kind)
	}
	if cfg.Pooling != PoolingNone {
		return nil, fmt.Errorf("%s: a cross-encoder takes pooling none (its output is one logit per pair)", cfgPath)
	}
	if cfg.Dim == 0 {
		cfg.Dim = 1
	}
	if cfg.Dim != 1 {
		return nil, fmt.Errorf("%s: a cross-encoder has dim 1 (one logit per pair), not %d", cfgPath, cfg.Dim)
	}
	if err := verifyRecorded(dir, cfg, func(path string) (string, error) { return opts.Runtime.digests.sum(path, nil) }); err != nil {
		return nil, err
	}
	load := opts.LoadTokenizer
	if load == nil {
		load = defaultTokenizerLoader
	}
	tokPath := filepath.Join(dir, cfg.TowerTokenizer(TowerDoc))
	if _, err := os.Stat(tokPath); err != nil {
		return nil, fmt.Errorf("tokenizer file %s: %w", tokPath, err)
	}
	tok, err := load(tokPath)
	if err != nil {
		return nil, fmt.Errorf("tokenizer file %s: %w", tokPath, err)
	}
	pt, ok := tok.(PairTokenizer)
	if !ok {
		return nil, fmt.Errorf("tokenizer file %s: the tokenizer cannot encode pairs", tokPath)
	}
	sess, err := openSession(opts.Runtime, filepath.Join(dir, cfg.TowerModel(TowerDoc)), cfg.Output, PoolingNone, 1, opts)
	if err != nil {
		return nil, err
	}
	if err := fitMaxLength(cfg, dir, sess); err != nil {
		sess.close()
		return nil, err
	}
	batch := opts.BatchSize
	if batch <= 0 {
		batch = 32
	}
	return &CrossEncoder{cfg: cfg, sess: sess, tok: pt, batch: batch}, nil
}

// Name is the model's name.
func (c *CrossEncoder) Name() string { return c.cfg.Name }

// Close releases the ONNX Runtime session.
func (c *CrossEncoder) Close() error { return c.sess.close() }

// Score returns the logit of (query, doc) for every doc, in order (prefixes applied).
func (c *CrossEncoder) Score(query string, docs []string) ([]float64, error) {
	out := make([]float64, 0, len(docs))
	for start := 0; start < len(docs); start += c.batch {
		chunk := docs[start:min(start+c.batch, len(docs))]
		first := make([]string, len(chunk))
		second := make([]string, len(chunk))
		for i, d := range chunk {
			first[i] = c.cfg.QueryPrefix + query
			second[i] = c.cfg.DocPrefix + d
		}
		b, err := c.tok.EncodePairBatch(first, second, c.cfg.MaxLength)
		if err != nil {
			return nil, fmt.Errorf("cross-encoder %s: tokenizing: %w", c.cfg.Name, err)
		}
		if err := b.validate(len(chunk)); err != nil {
			return nil, fmt.Errorf("cross-encoder %s: %w", c.cfg.Name, err)
		}
		raw, err := c.sess.run(b)
		if err != nil {
			return nil, err
		}
		for i, x := range raw {
			if err := checkFinite([]float32{x}); err != nil {
				return nil, fmt.Errorf("model file %s: pair %d: %w", c.sess.path, start+i, err)
			}
			out = append(out, float64(x))
		}
	}
	return out, nil
}
