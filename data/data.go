// Package data holds the data files that ship inside the rated binary: the real ToolBench
// queries that EcoAgent-Real is built from (toolbench/, Apache-2.0, provenance in its README).
package data

import "embed"

// ToolBenchQueriesName names the embedded ToolBench queries in messages and records.
const ToolBenchQueriesName = "data/toolbench/queries.jsonl"

// ToolBenchQueries is data/toolbench/queries.jsonl: 765 StableToolBench test queries, one JSON
// object (query_id, group, query) per line.
//
//go:embed toolbench/queries.jsonl
var ToolBenchQueries []byte

// EcoAgentName names the embedded EcoAgent release in messages and records.
const EcoAgentName = "data/ecoagent"

// EcoAgent is the shipped EcoAgent release (data/ecoagent: syn/ and real/ in the BEIR layout,
// gzip-compressed, with DATASHEET.md and stats.json), read by `rated reproduce --bench ecoagent`.
//
//go:embed ecoagent
var EcoAgent embed.FS
