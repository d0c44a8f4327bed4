// Package defaultbench embeds the default benchmark that `rated eval dynamic` and `rated eval
// offline` run when no benchmark is given, so that both work on a fresh machine with no set-up.
//
// It is a hand-authored stand-in for EcoAgent (which `rated build-bench` produces): a tool
// catalog in the style of the four platforms of the RATED paper, grouped into functions that
// several tools can serve, and user queries whose relevance set is every tool of their function.
// The content is authored in source/*.yaml and turned into data/ by `go generate
// ./pkg/defaultbench` (see internal/gen); README.md is its datasheet.
//
// Counts (checked by TestDocCommentCounts): 316 tools (LangChain 90, CrewAI 76,
// LlamaIndex 47, n8n 103) in 78 functions; 1,500 queries, 456 in dev and 1,044 in test.
package defaultbench
