// Package configs embeds the shipped configuration files so that `rated` runs with the paper's
// settings on a fresh machine, without the repository beside it.
package configs

import "embed"

// Files holds paper.yaml (the paper's hyper-parameters), extended.yaml (extra scenarios) and the
// other shipped YAML files.
//
//go:embed *.yaml
var Files embed.FS
