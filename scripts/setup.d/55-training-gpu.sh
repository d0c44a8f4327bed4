#!/usr/bin/env bash
# GPU build of the training-enabled ONNX Runtime for `rated finetune --device cuda` (docs/FINETUNE.md,
# "GPU"). Runs only with RATED_GPU=1; everywhere else (CI, CPU machines) it prints one line and exits.
#
# Source: Maven Central org.bytedeco:onnxruntime:1.24.1-1.5.13, classifier linux-x86_64-gpu (jar
# 129 MB; the same 1.24.1 as 50-training.sh, with the training API and the CUDA and DNNL providers).
# Installed into $RATED_ASSETS/lib/training-gpu/:
#   libonnxruntime.so (38.9 MB, needs only libc/libstdc++; runs on CPU without any CUDA library),
#   libonnxruntime_providers_shared.so (15 KB),
#   libonnxruntime_providers_cuda.so (183 MB; dlopened when the CUDA provider is appended).
# The CUDA provider needs, from the machine (not shipped here): an NVIDIA driver for CUDA 13,
# libcudart.so.13, libcublas.so.13, libcublasLt.so.13, libcufft.so.12 (CUDA 13's cuFFT) and
# libcudnn.so.9 on LD_LIBRARY_PATH (read from its ELF NEEDED entries). scripts/gpu-check.sh finds
# them on the device machine (CUDA toolkit or the nvidia-* Python wheels beside PyTorch).
#
# Idempotent: the jar is cached in $RATED_ASSETS/cache/training-gpu and checked against Maven
# Central's sha1 and a pinned sha256; the libraries are pinned by sha256 too.
set -euo pipefail
if [ "${RATED_GPU:-}" != "1" ]; then
  echo "55-training-gpu: skipped (set RATED_GPU=1 to install the CUDA build of the training library, 129 MB download)"
  exit 0
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/maven.sh
. "$root/scripts/lib/maven.sh"
assets=${RATED_HOME:-${RATED_ASSETS:-$root/.rated}}
cache=$assets/cache/training-gpu
libdir=$assets/lib/training-gpu
version=1.24.1-1.5.13
classifier=linux-x86_64-gpu
jar_sha256=f8201d7dd52f5705361ea95a842acd737f40b7fb0a52cd4da2c9b391989d27c7
declare -A lib_sha256=(
  [libonnxruntime.so.1]=7934006308845cbd514f5336690667d76c430b4f953eb2820042348eeb967072
  [libonnxruntime_providers_shared.so]=80fab8f2250edbfd0250294c0d5c2c8477c9846cf992f646a504b7480d8a79b4
  [libonnxruntime_providers_cuda.so]=8e67724a5fa01058c9059bcd39112c1e5fd3ae66fbada268bf220f2c7b5c9634
)
stamp="$version:$classifier:$jar_sha256"
if [ -s "$libdir/libonnxruntime.so" ] && [ -s "$libdir/libonnxruntime_providers_cuda.so" ] &&
  [ "$(cat "$libdir/.version" 2>/dev/null)" = "$stamp" ]; then
  echo "55-training-gpu: GPU training library $version already installed ($libdir)"
  exit 0
fi
mkdir -p "$cache" "$libdir"
start=$(date +%s)
jar=$cache/onnxruntime-$version-$classifier.jar
url=https://repo1.maven.org/maven2/org/bytedeco/onnxruntime/$version/onnxruntime-$version-$classifier.jar
maven_fetch 55-training-gpu "$url" "$jar" "$jar_sha256"
tmp=$(mktemp -d "$cache/extract.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
inner=org/bytedeco/onnxruntime/$classifier
(cd "$tmp" && unzip -q -o "$jar" "$inner/libonnxruntime.so.1" "$inner/libonnxruntime_providers_shared.so" \
  "$inner/libonnxruntime_providers_cuda.so")
for f in "${!lib_sha256[@]}"; do
  got=$(sha256sum "$tmp/$inner/$f" | cut -d' ' -f1)
  if [ "$got" != "${lib_sha256[$f]}" ]; then
    echo "55-training-gpu: sha256 mismatch for $f in $jar: pinned ${lib_sha256[$f]}, got $got" >&2
    exit 1
  fi
done
install -m 0644 "$tmp/$inner/libonnxruntime.so.1" "$libdir/libonnxruntime.so.tmp"
mv "$libdir/libonnxruntime.so.tmp" "$libdir/libonnxruntime.so"
ln -sf libonnxruntime.so "$libdir/libonnxruntime.so.1"
for f in libonnxruntime_providers_shared.so libonnxruntime_providers_cuda.so; do
  install -m 0644 "$tmp/$inner/$f" "$libdir/$f.tmp"
  mv "$libdir/$f.tmp" "$libdir/$f"
done
cat >"$libdir/onnxruntime.txt" <<EOF
version: ${version%%-*}
source: maven org.bytedeco:onnxruntime:$version:$classifier ($jar_sha256)
training_api: yes
providers: CUDAExecutionProvider, DnnlExecutionProvider (not installed), CPUExecutionProvider
cuda_needs: libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcufft.so.12 libcudnn.so.9 (CUDA 13, cuDNN 9)
EOF
echo "$stamp" >"$libdir/.version"
echo "55-training-gpu: installed GPU training library $version into $libdir in $(($(date +%s) - start))s"
