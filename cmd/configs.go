package cmd

import (
	"path/filepath"

	"github.com/rated-dev/rated/configs"
	"github.com/rated-dev/rated/pkg/crawl"
	"github.com/rated-dev/rated/pkg/setup"
	"github.com/rated-dev/rated/pkg/synth"
)

// loadLLMConfig reads the LLM configuration at path, or the binary's embedded configs/llm.yaml
// when path is "", with RATED_LLM_* overrides; it also returns the name outputs record.
func loadLLMConfig(path string) (synth.LLMConfig, string, error) {
	if path != "" {
		c, err := synth.LoadLLMConfig(path, nil)
		return c, path, err
	}
	const name = "configs/llm.yaml (embedded)"
	data, err := configs.Files.ReadFile("llm.yaml")
	if err != nil {
		return synth.LLMConfig{}, name, err
	}
	c, err := synth.ParseLLMConfig(name, data, nil)
	return c, name, err
}

// RerankGenerator is the candidate configuration of the LLM reranker by default: the EcoAgent
// generator the issue-14 audit chose (docs/BUILD-BENCH.md, "Choosing the generator"), installed by
// `rated setup llm` (45-llm-generator.sh) and started with `rated llm up --config` on this file.
const RerankGenerator = "llm-candidates/qwen2.5-coder-1.5b.yaml"

// loadCandidateConfig reads configs/<name> at path, or, when path is "", the binary's embedded
// copy (extracted with the configs it names as its base).
func loadCandidateConfig(path, name string) (synth.LLMConfig, string, error) {
	if path != "" {
		return loadLLMConfig(path)
	}
	var c synth.LLMConfig
	err := setup.WithBundle(func(root string) error {
		var err error
		c, err = synth.LoadLLMConfig(filepath.Join(root, "configs", filepath.FromSlash(name)), nil)
		return err
	})
	return c, "configs/" + name + " (embedded)", err
}

// loadSources reads the pinned catalog sources at path, or the binary's embedded
// configs/sources.yaml when path is "".
func loadSources(path string) (*crawl.SourcesConfig, error) {
	if path != "" {
		return crawl.LoadSources(path)
	}
	data, err := configs.Files.ReadFile("sources.yaml")
	if err != nil {
		return nil, err
	}
	return crawl.ParseSources("configs/sources.yaml (embedded)", data)
}
