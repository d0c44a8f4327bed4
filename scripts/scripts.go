// Package scripts embeds the shell and Python helpers that `rated setup`, `rated llm` and `rated
// finetune` run, so that an installed binary carries them and works from any directory: the
// set-up steps (setup.d/), their shell library (lib/), the local LLM's start and stop scripts, the
// training-artifact builder (train/) and the reference venv's requirements. pkg/setup extracts
// them, beside the embedded configs/, into a folder laid out like the repository.
package scripts

import "embed"

// Files holds setup.d/*.sh, lib/*.sh, train/*.py, llm-up, llm-down and requirements-ref.txt.
//
//go:embed setup.d/*.sh lib/*.sh train/*.py llm-up llm-down requirements-ref.txt
var Files embed.FS
