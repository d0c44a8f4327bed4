package cmd

import (
	"github.com/rated-dev/rated/configs"
	"github.com/rated-dev/rated/pkg/crawl"
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
