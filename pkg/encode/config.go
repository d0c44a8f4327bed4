package encode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// ConfigFile is the name of the description file inside a model folder.
const ConfigFile = "rated.yaml"

// Pooling names how token states become one vector.
const (
	// PoolingCLS takes the hidden state of the first token ([CLS]).
	PoolingCLS = "cls"
	// PoolingMean averages the hidden states of the non-padding tokens.
	PoolingMean = "mean"
	// PoolingNone uses a model output that is already one vector per text ([batch, dim]).
	PoolingNone = "none"
)

// Towers names which towers a model folder provides.
const (
	TowersBoth  = "both"
	TowersQuery = "query"
	TowersDoc   = "doc"
)

// Kinds of model folders.
const (
	// KindBiEncoder embeds queries and documents separately (the default).
	KindBiEncoder = "bi-encoder"
	// KindCrossEncoder scores a (query, document) pair jointly; its output is one logit per pair.
	KindCrossEncoder = "cross-encoder"
)

// Source records where a model folder's files came from.
type Source struct {
	Package         string `yaml:"package"`
	SHA256          string `yaml:"sha256"`
	Upstream        string `yaml:"upstream"`
	ModelSHA256     string `yaml:"model_sha256"`
	TokenizerSHA256 string `yaml:"tokenizer_sha256"`
}

// Config is the content of a model folder's rated.yaml (see docs/MODELS.md).
type Config struct {
	// Name identifies the model; it defaults to the folder name.
	Name string `yaml:"name"`
	// Kind is KindBiEncoder (default) or KindCrossEncoder.
	Kind string `yaml:"kind"`
	// Model is the ONNX file serving both towers; QueryModel and DocModel override it per tower
	// (DRAGON-style dual encoders have two files).
	Model      string `yaml:"model"`
	QueryModel string `yaml:"query_model"`
	DocModel   string `yaml:"doc_model"`
	// Tokenizer is the tokenizer.json of both towers; QueryTokenizer and DocTokenizer override it.
	Tokenizer      string `yaml:"tokenizer"`
	QueryTokenizer string `yaml:"query_tokenizer"`
	DocTokenizer   string `yaml:"doc_tokenizer"`
	// Towers is TowersBoth, TowersQuery or TowersDoc: the towers this folder can run.
	Towers string `yaml:"towers"`
	// Output is the name of the ONNX output to pool (default: last_hidden_state, or the only
	// output).
	Output string `yaml:"output"`
	// Pooling is PoolingCLS, PoolingMean or PoolingNone.
	Pooling string `yaml:"pooling"`
	// Normalize L2-normalises every embedding (default true).
	Normalize *bool `yaml:"normalize"`
	// MaxLength truncates token sequences, special tokens included.
	MaxLength int `yaml:"max_length"`
	// QueryPrefix and DocPrefix are prepended to the texts before tokenisation.
	QueryPrefix string `yaml:"query_prefix"`
	DocPrefix   string `yaml:"doc_prefix"`
	// Dim is the embedding size the model must produce (1 for a cross-encoder).
	Dim int `yaml:"dim"`
	// BatchTokens, when > 0, caps the padded tokens of one ONNX Runtime call for this model below
	// the command's --batch-tokens: a model whose graph holds a vocabulary-sized tensor per token
	// (SPLADE's MLM logits, 30,522 floats) needs a smaller budget than an encoder of 384 dims.
	BatchTokens int `yaml:"batch_tokens"`
	// Source records provenance; informational.
	Source Source `yaml:"source"`

	// maxLengthDefaulted says max_length was absent from rated.yaml: Open lowers the default to
	// the model's position-embedding table when that is smaller.
	maxLengthDefaulted bool
}

// DefaultMaxLength is max_length when rated.yaml leaves it out (and the model allows it).
const DefaultMaxLength = 512

// NormalizeEnabled reports whether embeddings are L2-normalised.
func (c *Config) NormalizeEnabled() bool { return c.Normalize == nil || *c.Normalize }

// TowerModel returns the ONNX file name of a tower ("query" or "doc"), relative to the folder.
func (c *Config) TowerModel(tower string) string {
	if tower == TowerQuery && c.QueryModel != "" {
		return c.QueryModel
	}
	if tower == TowerDoc && c.DocModel != "" {
		return c.DocModel
	}
	return c.Model
}

// TowerTokenizer returns the tokenizer.json file name of a tower, relative to the folder.
func (c *Config) TowerTokenizer(tower string) string {
	if tower == TowerQuery && c.QueryTokenizer != "" {
		return c.QueryTokenizer
	}
	if tower == TowerDoc && c.DocTokenizer != "" {
		return c.DocTokenizer
	}
	return c.Tokenizer
}

// HasTower reports whether the folder provides a tower.
func (c *Config) HasTower(tower string) bool {
	return c.Towers == TowersBoth || c.Towers == tower
}

// Tower names used in cache keys and errors.
const (
	TowerQuery = "query"
	TowerDoc   = "doc"
)

// LoadConfig reads and validates dir/rated.yaml, filling defaults. Every error names the file.
func LoadConfig(dir string) (*Config, error) {
	path := filepath.Join(dir, ConfigFile)
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("model folder %s: no %s (see docs/MODELS.md)", dir, ConfigFile)
		}
		return nil, fmt.Errorf("model folder %s: %w", dir, err)
	}
	var c Config
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// An explicit max_length: 0 is an error, not the default: tell the two apart.
	var present struct {
		MaxLength *int `yaml:"max_length"`
	}
	if err := yaml.Unmarshal(data, &present); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.maxLengthDefaulted = present.MaxLength == nil
	if err := c.fill(dir); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

func (c *Config) fill(dir string) error {
	if c.Name == "" {
		c.Name = filepath.Base(filepath.Clean(dir))
	}
	if c.Kind == "" {
		c.Kind = KindBiEncoder
	}
	if c.Kind != KindBiEncoder && c.Kind != KindCrossEncoder {
		return fmt.Errorf("kind %q: want %s or %s", c.Kind, KindBiEncoder, KindCrossEncoder)
	}
	if c.Towers == "" {
		switch {
		case c.Model != "" || (c.QueryModel != "" && c.DocModel != ""):
			c.Towers = TowersBoth
		case c.QueryModel != "":
			c.Towers = TowersQuery
		case c.DocModel != "":
			c.Towers = TowersDoc
		}
	}
	switch c.Towers {
	case TowersBoth, TowersQuery, TowersDoc:
	case "":
		return errors.New("no model file: set model (one file for both towers) or query_model/doc_model")
	default:
		return fmt.Errorf("towers %q: want both, query or doc", c.Towers)
	}
	for _, tower := range []string{TowerQuery, TowerDoc} {
		if !c.HasTower(tower) {
			continue
		}
		if c.TowerModel(tower) == "" {
			return fmt.Errorf("no model file for the %s tower: set model or %s_model", tower, tower)
		}
		if c.TowerTokenizer(tower) == "" {
			return fmt.Errorf("no tokenizer for the %s tower: set tokenizer or %s_tokenizer", tower, tower)
		}
	}
	if c.Pooling == "" {
		c.Pooling = PoolingCLS
		if c.Kind == KindCrossEncoder {
			c.Pooling = PoolingNone
		}
	}
	switch c.Pooling {
	case PoolingCLS, PoolingMean, PoolingNone:
	default:
		return fmt.Errorf("pooling %q: want cls, mean or none", c.Pooling)
	}
	if c.maxLengthDefaulted {
		c.MaxLength = DefaultMaxLength
	}
	if c.MaxLength < 2 {
		return fmt.Errorf("max_length %d: want at least 2 ([CLS] and [SEP])", c.MaxLength)
	}
	if c.Dim < 0 {
		return fmt.Errorf("dim %d: want a positive size (or leave it out to take the model's)", c.Dim)
	}
	if c.BatchTokens < 0 {
		return fmt.Errorf("batch_tokens %d: want a positive number of tokens (or leave it out)", c.BatchTokens)
	}
	return nil
}
