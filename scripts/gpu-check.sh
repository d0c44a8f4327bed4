#!/usr/bin/env bash
# GPU check of `rated finetune --device cuda` and CUDA inference (docs/FINETUNE.md, "GPU check").
#
#   scripts/gpu-check.sh pack   here (network, Go, assets): builds the binaries and packs everything
#                               the device machine lacks into .rated/gpu-carry/part-NN (xz, split
#                               into parts that each fit one `run` call's 64 MiB) plus MANIFEST
#   scripts/gpu-check.sh stage  on the device: reports which parts have arrived (one call per part)
#   scripts/gpu-check.sh run    on the device: unpacks the parts and runs every check, logging to
#                               $OUT/gpu-check.log and summarising in $OUT/gpu-check.json
#
# Without an NVIDIA GPU, `stage` and `run` stop at once with a message and exit code 3; `run` exits
# 4 when a part is missing or corrupt, 1 when a check failed, 0 when all passed.
# The device machine has no network and no Go: binaries (rated and the test binaries of pkg/train
# and pkg/encode) are built here; CUDA 13 / cuDNN 9 libraries are taken from the device image.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
assets=${RATED_HOME:-${RATED_ASSETS:-$root/.rated}}
carry=$root/.rated/gpu-carry
mode=${1:-run}
part_mib=${GPU_CHECK_PART_MIB:-56}

die() {
  echo "gpu-check: $*" >&2
  exit 1
}

# ------------------------------------------------------------------------------------------------
pack() {
  set -e
  local lib=$assets/lib/training-gpu model=$assets/models/all-minilm-l6-v2 art=$assets/train/all-minilm-l6-v2-test
  [ -s "$lib/libonnxruntime_providers_cuda.so" ] || die "$lib not installed: run RATED_GPU=1 rated setup training"
  [ -s "$model/model.onnx" ] || die "$model not installed: run rated setup models"
  [ -s "$art/checkpoint" ] || die "$art not built: run rated setup training"
  [ -x "$assets/train-venv/bin/python" ] || die "$assets/train-venv missing: run rated setup training"
  local start
  start=$(date +%s)
  rm -rf "$carry"
  mkdir -p "$carry/src/writebench"
  local b=$carry/bundle
  mkdir -p "$b/bin" "$b/assets/lib/training-gpu" "$b/assets/models" "$b/assets/train"
  echo "gpu-check pack: building binaries"
  go build -o "$b/bin/rated" .
  go test -c -o "$b/bin/train.test" ./pkg/train
  go test -c -o "$b/bin/encode.test" ./pkg/encode
  cat >"$carry/src/writebench/main.go" <<'EOF'
// Command writebench writes the embedded default benchmark as a BEIR folder (gpu-check.sh pack).
package main

import (
	"fmt"
	"os"

	"github.com/rated-dev/rated/pkg/defaultbench"
)

func main() {
	b, err := defaultbench.Load()
	if err == nil {
		err = b.Write(os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
EOF
  go run ./.rated/gpu-carry/src/writebench "$b/bench"
  cp -a "$lib/libonnxruntime.so" "$lib/libonnxruntime_providers_shared.so" "$lib/libonnxruntime_providers_cuda.so" \
    "$lib/onnxruntime.txt" "$b/assets/lib/training-gpu/"
  cp -a "$model" "$b/assets/models/"
  cp -a "$art" "$b/assets/train/"
  # The fine-tune's graph (batch 8, 1 hard negative, length 64); its checkpoint is byte for byte
  # the test artifacts' (same weights), so it is linked back on the device instead of carried.
  echo "gpu-check pack: building training artifacts B=8 N=1 S=64"
  "$assets/train-venv/bin/python" scripts/train/build_artifacts.py --model "$model" --out "$b/assets/train/ft-b8-s64" \
    --batch 8 --negatives 1 --seq 64 --towers shared >"$carry/build_artifacts.log" 2>&1 ||
    { tail -20 "$carry/build_artifacts.log"; die "artifact builder failed"; }
  cmp -s "$b/assets/train/ft-b8-s64/checkpoint" "$art/checkpoint" || die "ft-b8-s64/checkpoint differs from $art/checkpoint"
  rm "$b/assets/train/ft-b8-s64/checkpoint"
  git rev-parse HEAD >"$b/COMMIT"
  echo "gpu-check pack: compressing (xz, 192 MiB window so the model and its checkpoint share bytes)"
  # Order: models and checkpoints next to each other, then the binaries and the CUDA provider.
  tar -C "$b" -cf - COMMIT bench assets/models assets/train bin assets/lib |
    xz -T1 -3 --lzma2=preset=3,dict=192MiB >"$carry/bundle.tar.xz"
  rm -rf "$b"
  (cd "$carry" && split -b "${part_mib}M" -d -a 2 bundle.tar.xz part- && rm bundle.tar.xz)
  (cd "$carry" && sha256sum part-* >MANIFEST)
  local n
  n=$(wc -l <"$carry/MANIFEST")
  echo "gpu-check pack: $n parts of at most $part_mib MiB in $carry in $(($(date +%s) - start))s:"
  (cd "$carry" && ls -l part-* MANIFEST)
  echo "gpu-check pack: on the device, call run once per part (carry .rated/gpu-carry/part-NN and"
  echo "  .rated/gpu-carry/MANIFEST; command scripts/gpu-check.sh stage), the last with scripts/gpu-check.sh run"
}

# ------------------------------------------------------------------------------------------------
out=${OUT:-$root/.rated/gpu-check-out}
summary=$out/gpu-check.json

have_gpu() {
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '
}

no_gpu() {
  local why
  if ! command -v nvidia-smi >/dev/null 2>&1; then why="nvidia-smi is not installed"; else why="nvidia-smi lists no GPU"; fi
  echo "gpu-check: no NVIDIA GPU on this machine ($why): nothing to check. Run it on the lent GPU machine" \
    "as docs/FINETUNE.md (GPU check) says; on CPU, go test ./pkg/train/... covers the CPU paths."
  printf '{"gpu": false, "reason": "%s", "checks": []}\n' "$why" >"$summary"
  exit 3
}

# parts_status prints the parts listed in MANIFEST that are missing or corrupt; empty when complete.
parts_status() {
  [ -s "$carry/MANIFEST" ] || {
    echo "MANIFEST"
    return
  }
  local sum name
  while read -r sum name; do
    if [ ! -s "$carry/$name" ]; then
      echo "$name(missing)"
    elif [ ! -s "$carry/.ok-$name" ] || [ "$(cat "$carry/.ok-$name")" != "$sum" ]; then
      if [ "$(sha256sum "$carry/$name" | cut -d' ' -f1)" = "$sum" ]; then echo "$sum" >"$carry/.ok-$name"; else echo "$name(corrupt)"; fi
    fi
  done <"$carry/MANIFEST"
}

stage() {
  mkdir -p "$out"
  have_gpu || no_gpu
  local missing
  missing=$(parts_status | tr '\n' ' ')
  local n
  n=$(wc -l <"$carry/MANIFEST" 2>/dev/null || echo "?")
  nvidia-smi -L
  find_cuda_libs # early word on whether the device has CUDA 13 / cuDNN 9 where expected
  [ ${#cuda_missing[@]} -eq 0 ] || echo "gpu-check stage: CUDA libraries not found: ${cuda_missing[*]}"
  if [ -n "$missing" ]; then
    echo "gpu-check stage: $n parts listed; still missing or corrupt: $missing"
  else
    echo "gpu-check stage: all $n parts are here: next call scripts/gpu-check.sh run"
  fi
  printf '{"gpu": true, "stage": true, "missing": "%s"}\n' "$missing" >"$summary"
}

# ------------------------------------------------------------------------------------------------
results=()
record() { # NAME STATUS SECONDS DETAIL
  results+=("$1	$2	$3	$4")
  echo "gpu-check: [$2] $1 (${3}s) $4"
}

check() { # NAME TIMEOUT LOGFILE DIR COMMAND... (COMMAND runs in DIR)
  local name=$1 limit=$2 log=$3 dir=$4
  shift 4
  local start rc
  start=$(date +%s)
  echo "gpu-check: --- $name: (in $dir) $*"
  (cd "$dir" && timeout "$limit" "$@") >"$log" 2>&1
  rc=$?
  cat "$log"
  local took=$(($(date +%s) - start)) status=pass
  [ $rc -eq 0 ] || status=fail
  [ $rc -eq 124 ] && status=timeout
  record "$name" "$status" "$took" "exit $rc"
  return $rc
}

find_cuda_libs() {
  local roots=() d
  for d in "${CUDA_HOME:-}" /usr/local/cuda /usr/local/cuda-13* /usr/lib/x86_64-linux-gnu; do
    [ -n "$d" ] && [ -d "$d" ] && roots+=("$d")
  done
  for d in $(python3 -c 'import site, sys; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null) \
    /opt/torch/.venv/lib/python3*/site-packages; do
    [ -d "$d/nvidia" ] && roots+=("$d/nvidia")
  done
  local dirs=() so f
  cuda_missing=()
  for so in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcufft.so.12 libcudnn.so.9; do
    f=$(find "${roots[@]}" -maxdepth 5 -name "$so" \( -type f -o -type l \) 2>/dev/null | head -1)
    if [ -z "$f" ]; then
      cuda_missing+=("$so")
    else
      echo "gpu-check: $so -> $f"
      dirs+=("$(dirname "$f")")
    fi
  done
  local joined
  joined=$(printf '%s\n' "${dirs[@]}" | awk '!seen[$0]++' | paste -sd:)
  export LD_LIBRARY_PATH=$joined${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

run_checks() {
  mkdir -p "$out"
  exec > >(tee -a "$out/gpu-check.log") 2>&1
  echo "gpu-check: $(date -u +%FT%TZ) in $root"
  have_gpu || no_gpu
  nvidia-smi | tee "$out/nvidia-smi.txt"
  local gpu_name driver
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
  local missing
  missing=$(parts_status | tr '\n' ' ')
  if [ -n "$missing" ]; then
    echo "gpu-check: parts missing or corrupt: $missing"
    echo "gpu-check: carry each part in an earlier call on the same warm machine (docs/FINETUNE.md, GPU check)"
    printf '{"gpu": true, "gpu_name": "%s", "missing": "%s", "checks": []}\n' "$gpu_name" "$missing" >"$summary"
    exit 4
  fi
  local w=/tmp/rated-gpu-check key
  key=$(sha256sum "$carry/MANIFEST" | cut -d' ' -f1)
  if [ "$(cat "$w/.key" 2>/dev/null)" != "$key" ]; then
    local start
    start=$(date +%s)
    rm -rf "$w" && mkdir -p "$w"
    if command -v xz >/dev/null 2>&1; then
      cat "$carry"/part-* | xz -dc | tar -C "$w" -xf - || die "unpacking the parts failed"
    else
      cat "$carry"/part-* | python3 -c 'import sys, tarfile; tarfile.open(fileobj=sys.stdin.buffer, mode="r|xz").extractall(sys.argv[1])' "$w" ||
        die "unpacking the parts failed"
    fi
    echo "$key" >"$w/.key"
    record unpack pass $(($(date +%s) - start)) "$(du -sh "$w" | cut -f1) from commit $(cat "$w/COMMIT")"
  fi
  local a=$w/assets glib=$w/assets/lib/training-gpu/libonnxruntime.so
  ln -sf ../all-minilm-l6-v2-test/checkpoint "$a/train/ft-b8-s64/checkpoint"
  # pkg/encode's default library and provider files, and its reference venv, point at what is here.
  for f in libonnxruntime.so libonnxruntime_providers_shared.so libonnxruntime_providers_cuda.so; do
    ln -sf "training-gpu/$f" "$a/lib/$f"
  done
  # A wrapper, not a link: a link to a venv's python would lose the venv's packages. Remove what is
  # there first: writing through a link left by an older version would overwrite the interpreter.
  mkdir -p "$a/venv/bin" && rm -f "$a/venv/bin/python" && printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v python3)" >"$a/venv/bin/python" && chmod +x "$a/venv/bin/python"
  find_cuda_libs
  echo "gpu-check: LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  local ldd_missing
  # ONNX Runtime loads libonnxruntime_providers_shared.so itself, from its own folder.
  ldd_missing=$(LD_LIBRARY_PATH=$a/lib/training-gpu:$LD_LIBRARY_PATH ldd "$a/lib/training-gpu/libonnxruntime_providers_cuda.so" | awk '/not found/ {print $1}' | paste -sd' ')
  if [ -n "$ldd_missing" ]; then
    record cuda-libraries fail 0 "not found: $ldd_missing"
  else
    record cuda-libraries pass 0 "all found"
  fi
  python3 -c 'import onnxruntime as o, numpy as n; print("python onnxruntime", o.__version__, "numpy", n.__version__)' || true

  export RATED_HOME=$a RATED_ASSETS=$a
  local logs=$w/logs
  mkdir -p "$logs"
  # 1. Step-0 loss of the training graph on CUDA vs InfoNCE in Go (1e-3), loss falls on CUDA,
  #    pkg/encode CUDA vs CPU embeddings (cosine >= 0.9999).
  check train-tests-cuda 150 "$logs/train.log" "$root/pkg/train" env RATED_TRAIN_LIB="$glib" RATED_TRAIN_DEVICE=cuda \
    "$w/bin/train.test" -test.v -test.count=1 -test.run 'TestStepZeroLossEqualsReferenceInfoNCE|TestLossFallsOnFixedBatch|TestCUDAEmbeddingsMatchCPU'
  # 2. 30 fine-tuning steps on CUDA, then the same on CPU (same library) for loss and speed.
  local ftargs=(finetune --model "$a/models/all-minilm-l6-v2" --bench "$w/bench" --artifacts "$a/train/ft-b8-s64" --batch 8
    --max-len 64 --train-split dev --val-split test --val-max-queries 300 --max-steps 30 --warmup 5 --lr 2e-5 --val-every 30
    --checkpoint-every 30 --seed 1 --fresh --home "$a" --lib "$glib")
  check finetune-cuda 120 "$logs/ft-cuda.log" "$root" "$w/bin/rated" "${ftargs[@]}" --out "$w/ft-cuda" --device cuda
  check finetune-cpu 90 "$logs/ft-cpu.log" "$root" "$w/bin/rated" "${ftargs[@]}" --out "$w/ft-cpu" --device cpu
  # 3. Table 3 latency with the encoder on CUDA, then on CPU.
  check latency-cuda 90 "$logs/lat-cuda.log" "$root" "$w/bin/rated" eval latency --device cuda --out "$w/lat-cuda" --sizes 5000 --sweep-queries 200
  # 4. pkg/encode's reference test (Go CPU session of the GPU build vs Python onnxruntime) and its
  #    CUDA test (skips with "has a working CUDA execution provider" when CUDA starts).
  check encode-reference 60 "$logs/encode.log" "$root/pkg/encode" \
    "$w/bin/encode.test" -test.v -test.count=1 -test.run 'TestEmbeddingsMatchPythonOnnxruntime|TestCUDAUnavailable'
  check latency-cpu 60 "$logs/lat-cpu.log" "$root" "$w/bin/rated" eval latency --device cpu --out "$w/lat-cpu" --sizes 5000 --sweep-queries 200

  [ -s "$w/ft-cuda/TRAINING.md" ] && cp "$w/ft-cuda/TRAINING.md" "$out/finetune-cuda-TRAINING.md"
  [ -s "$w/lat-cuda/table3.md" ] && cp "$w/lat-cuda/table3.md" "$out/latency-cuda-table3.md"
  [ -s "$w/lat-cpu/table3.md" ] && cp "$w/lat-cpu/table3.md" "$out/latency-cpu-table3.md"
  printf '%s\n' "${results[@]}" >"$w/results.tsv"
  python3 - "$w" "$summary" "$gpu_name" "$driver" "$LD_LIBRARY_PATH" <<'EOF'
import json, os, re, sys
w, summary, gpu, driver, ldpath = sys.argv[1:6]
checks = []
for line in open(os.path.join(w, "results.tsv")):
    name, status, secs, detail = line.rstrip("\n").split("\t")
    checks.append({"name": name, "status": status, "seconds": int(secs), "detail": detail})
def read(p):
    try:
        return open(os.path.join(w, p)).read()
    except OSError:
        return ""
train = read("logs/train.log")
figures = {
    "step0_losses": [
        {"graph": m[0], "loss": float(m[1]), "device": m[2], "reference": float(m[3]), "difference": float(m[4])}
        for m in re.findall(r"(eval|train) graph loss ([\d.]+) on (\w+), reference InfoNCE ([\d.]+), difference ([\d.e+-]+)", train)],
    "cuda_vs_cpu_worst_cosine": [float(x) for x in re.findall(r"worst cosine CUDA vs CPU ([\d.]+)", train)],
    "encode_vs_python_worst_cosine": [float(x) for x in re.findall(r"worst cosine ([\d.]+) vs Python", read("logs/encode.log"))],
    "encode_cuda_session_started": "has a working CUDA execution provider" in read("logs/encode.log"),
}
for dev in ("cuda", "cpu"):
    try:
        st = json.load(open(os.path.join(w, "ft-" + dev, "checkpoints", "state.json")))
        figures["finetune_" + dev] = {k: st.get(k) for k in ("step", "step_seconds", "loop_seconds", "validation", "library")}
        figures["finetune_" + dev]["losses"] = st.get("losses")
    except (OSError, ValueError):
        pass
a, b = figures.get("finetune_cuda", {}).get("losses"), figures.get("finetune_cpu", {}).get("losses")
if a and b:
    figures["finetune_max_abs_loss_difference_cuda_cpu"] = max(abs(x - y) for x, y in zip(a, b))
for dev in ("cuda", "cpu"):
    try:
        figures["latency_" + dev] = json.load(open(os.path.join(w, "lat-" + dev, "table3.json")))
    except (OSError, ValueError):
        pass
ok = all(c["status"] == "pass" for c in checks)
json.dump({"gpu": True, "gpu_name": gpu, "driver": driver, "ld_library_path": ldpath, "all_passed": ok,
           "checks": checks, "figures": figures}, open(summary, "w"), indent=1)
print("gpu-check: summary in", summary, "- all passed" if ok else "- FAILURES")
sys.exit(0 if ok else 1)
EOF
}

case "$mode" in
pack) pack ;;
stage) stage ;;
run) run_checks ;;
*) die "usage: scripts/gpu-check.sh pack|stage|run" ;;
esac
