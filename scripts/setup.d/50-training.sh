#!/usr/bin/env bash
# Fine-tuning assets (pkg/train, `rated finetune`; evidence in docs/FINETUNE.md):
#
#  1. An ONNX Runtime shared library with the training C API compiled in, into
#     $RATED_ASSETS/lib/training/libonnxruntime.so. The inference library of 10-onnxruntime.sh
#     (npm onnxruntime-node 1.19.2) has no training API. Source: Maven Central
#     org.bytedeco:onnxruntime:1.24.1-1.5.13, classifier linux-x86_64 (JavaCPP presets; their
#     builds from 1.24 on enable the training APIs: OrtTrainingApis::* symbols, GetTrainingApi
#     returns non-NULL). Its only extra dependencies are libc/libstdc++; no dnnl needed on CPU.
#  2. A Python venv $RATED_ASSETS/train-venv with onnxruntime-training-cpu 1.19.2 and onnx, used only
#     by scripts/train/build_artifacts.py to build training artifacts (never at step time). No torch.
#  3. Training artifacts for the tests, when the model folders are installed (20-models.sh), into
#     $RATED_ASSETS/train/: all-minilm-l6-v2-test (shared, B=4, N=1, seq 16), all-minilm-l6-v2-test-dual
#     (dual towers, B=2), all-minilm-l6-v2-b8-s32 (shared, B=8, N=1, seq 32; the Syn fine-tune test),
#     bge-small-en-v1.5-test (shared, B=2, seq 32; CLS pooling, query prefix).
#
# Idempotent: each part is skipped when its stamp matches.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/maven.sh
. "$root/scripts/lib/maven.sh"
assets=${RATED_HOME:-${RATED_ASSETS:-$root/.rated}}
cache=$assets/cache/training
libdir=$assets/lib/training
mkdir -p "$cache" "$libdir"

# --- 1. training-enabled libonnxruntime.so -------------------------------------------------------
ort_version=1.24.1-1.5.13
jar_sha256=4fd43a2b0f08c8be4d540dea6f4951b82d4b350882b6d5c9a0658dedaeed8662
so_sha256=2ecee2b4666b486110f99548777be848c1368c672ff6bf01ed7c7e9aa1faf75e
if [ -s "$libdir/libonnxruntime.so" ] && [ "$(cat "$libdir/.version" 2>/dev/null)" = "$ort_version" ]; then
  echo "50-training: training library $ort_version already installed ($libdir)"
else
  start=$(date +%s)
  jar=$cache/onnxruntime-$ort_version-linux-x86_64.jar
  url=https://repo1.maven.org/maven2/org/bytedeco/onnxruntime/$ort_version/onnxruntime-$ort_version-linux-x86_64.jar
  maven_fetch 50-training "$url" "$jar" "$jar_sha256"
  tmp=$(mktemp -d "$cache/extract.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && unzip -q -o "$jar" 'org/bytedeco/onnxruntime/linux-x86_64/libonnxruntime.so.1' \
    'org/bytedeco/onnxruntime/linux-x86_64/libonnxruntime_providers_shared.so')
  so=$tmp/org/bytedeco/onnxruntime/linux-x86_64/libonnxruntime.so.1
  got=$(sha256sum "$so" | cut -d' ' -f1)
  if [ "$got" != "$so_sha256" ]; then
    echo "50-training: sha256 mismatch for libonnxruntime.so.1 in $jar: pinned $so_sha256, got $got" >&2
    exit 1
  fi
  if command -v nm >/dev/null 2>&1 && ! nm -D --defined-only "$so" | grep ' OrtGetApiBase' >/dev/null; then
    echo "50-training: $so does not export OrtGetApiBase" >&2
    exit 1
  fi
  install -m 0644 "$so" "$libdir/libonnxruntime.so.tmp" && mv "$libdir/libonnxruntime.so.tmp" "$libdir/libonnxruntime.so"
  ln -sf libonnxruntime.so "$libdir/libonnxruntime.so.1"
  install -m 0644 "$tmp/org/bytedeco/onnxruntime/linux-x86_64/libonnxruntime_providers_shared.so" "$libdir/"
  cat >"$libdir/onnxruntime.txt" <<EOF
version: ${ort_version%%-*}
source: maven org.bytedeco:onnxruntime:$ort_version:linux-x86_64 ($jar_sha256)
sha256: $so_sha256  libonnxruntime.so
training_api: yes (OrtApi::GetTrainingApi(19) returns the OrtTrainingApi)
EOF
  echo "$ort_version" >"$libdir/.version"
  echo "50-training: installed training library $ort_version into $libdir in $(( $(date +%s) - start ))s"
fi

# --- 2. artifact-builder venv ---------------------------------------------------------------------
venv=$assets/train-venv
req="onnxruntime-training-cpu==1.19.2 onnx==1.16.2 numpy==1.26.4"
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.requirements" 2>/dev/null)" = "$req" ]; then
  echo "50-training: train-venv already installed ($venv)"
else
  start=$(date +%s)
  python3 -m venv "$venv"
  # shellcheck disable=SC2086
  "$venv/bin/python" -m pip install -q --disable-pip-version-check $req
  echo "$req" >"$venv/.requirements"
  echo "50-training: train-venv ($req) in $(( $(date +%s) - start ))s"
fi

# --- 3. test artifacts ------------------------------------------------------------------------------
build() { # NAME MODEL_DIR ARGS...
  local name=$1 model=$2
  shift 2
  local out=$assets/train/$name
  local key
  # Content only (not paths), so that the embedded copy `rated setup` extracts gives the same key.
  key="$( (sha256sum <"$model/model.onnx"; sha256sum <"$root/scripts/train/build_artifacts.py") | sha256sum | cut -d' ' -f1) $*"
  if [ -s "$out/checkpoint" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$key" ]; then
    echo "50-training: artifacts $name up to date"
    return 0
  fi
  local start tmp
  start=$(date +%s)
  mkdir -p "$assets/train"
  tmp=$(mktemp -d "$assets/train/.$name.XXXXXX")
  chmod 0755 "$tmp"
  "$venv/bin/python" "$root/scripts/train/build_artifacts.py" --model "$model" --out "$tmp" "$@" >"$tmp.log" 2>&1 || {
    tail -20 "$tmp.log" >&2
    rm -rf "$tmp" "$tmp.log"
    return 1
  }
  rm -f "$tmp.log"
  echo "$key" >"$tmp/.stamp"
  rm -rf "$out"
  mv "$tmp" "$out"
  echo "50-training: built artifacts $name in $(( $(date +%s) - start ))s"
}
minilm=$assets/models/all-minilm-l6-v2
if [ -s "$minilm/model.onnx" ]; then
  build all-minilm-l6-v2-test "$minilm" --batch 4 --negatives 1 --seq 16 --towers shared
  build all-minilm-l6-v2-test-dual "$minilm" --batch 2 --negatives 1 --seq 16 --towers dual
  # The paper's batch at a length that holds a generated query and most of a tool description:
  # the fine-tune on the Syn fixture (pkg/train/syn_test.go).
  build all-minilm-l6-v2-b8-s32 "$minilm" --batch 8 --negatives 1 --seq 32 --towers shared
else
  echo "50-training: $minilm not installed (20-models.sh); no test artifacts built"
fi
bge=$assets/models/bge-small-en-v1.5
if [ -s "$bge/model.onnx" ]; then
  # CLS pooling and a query prefix: length 32 holds the prefix and a short query untruncated.
  build bge-small-en-v1.5-test "$bge" --batch 2 --negatives 1 --seq 32 --towers shared
fi
