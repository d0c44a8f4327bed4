// Package configs embeds the shipped configuration files so that `rated` runs with the paper's
// settings on a fresh machine, without the repository beside it.
package configs

import "embed"

// Files holds paper.yaml (the paper's hyper-parameters), extended.yaml (extra scenarios), the
// other shipped YAML files and the candidate generators of llm-candidates/ (their GGUF digests
// are what scripts/setup.d/45-llm-generator.sh checks).
//
//go:embed *.yaml llm-candidates/*.yaml
var Files embed.FS
