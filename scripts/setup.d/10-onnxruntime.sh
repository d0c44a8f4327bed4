#!/usr/bin/env bash
# Installs the ONNX Runtime shared library that pkg/encode loads through
# github.com/yalue/onnxruntime_go, as $RATED_ASSETS/lib/libonnxruntime.so (default .rated/lib/).
#
# Source: the npm package onnxruntime-node (bin/napi-v3/linux/x64/libonnxruntime.so.<v>), with
# Maven Central's com.microsoft.onnxruntime:onnxruntime jar (ai/onnxruntime/native/linux-x64/) as
# the fallback when npm is missing. PyPI's onnxruntime wheels do not export the C API
# (OrtGetApiBase), so they cannot serve here.
#
# Version: 1.19.2, the release whose C header onnxruntime_go v1.12.1 is built against
# (ORT_API_VERSION 19); newer libraries also serve API 19, so RATED_ORT_VERSION may name a newer
# one (then the checksums below are recorded, not enforced). Neither the npm nor the Maven CPU build
# contains the training API (OrtApi::GetTrainingApi returns NULL): see docs/MODELS.md.
#
# Idempotent: the downloaded archive is cached under $RATED_ASSETS/cache/onnxruntime, and the
# library is only re-extracted when lib/.onnxruntime-version differs from the wanted version.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/maven.sh
. "$root/scripts/lib/maven.sh"
assets=${RATED_HOME:-${RATED_ASSETS:-$root/.rated}}
version=${RATED_ORT_VERSION:-1.19.2}
# sha256 of the pinned version's linux x64 library on each path, enforced: libonnxruntime.so.1.19.2
# as shipped in onnxruntime-node 1.19.2, and the Maven jar with the library it holds (the jar is
# also checked against Maven Central's published .sha1).
pinned_version=1.19.2
pinned_npm_so_sha256=b0889fdeb0759987052b28c66c6a0b170426d0d70bfee84daad020f49d594043
pinned_maven_jar_sha256=ddab9113a453c0200ac16caf308b76bc8e84653ddc11969983b783dff34397b2
pinned_maven_so_sha256=9c8139e1856568f068f1cad78fc9798084941db50be7c201a1dbdcfd18105433

libdir=$assets/lib
cache=$assets/cache/onnxruntime
mkdir -p "$libdir" "$cache"
lib=$libdir/libonnxruntime.so
stamp=$libdir/.onnxruntime-version

if [ -f "$lib" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
  echo "10-onnxruntime: libonnxruntime.so $version already installed ($lib)"
  exit 0
fi

start=$(date +%s)
tmp=$(mktemp -d "$cache/extract.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
source_desc=""
want_so="" # the pinned library digest of the path taken, when the version is the pinned one

if command -v npm >/dev/null 2>&1; then
  tgz=$cache/onnxruntime-node-$version.tgz
  if [ ! -s "$tgz" ]; then
    echo "10-onnxruntime: npm pack onnxruntime-node@$version"
    (cd "$tmp" && npm pack --silent "onnxruntime-node@$version" >/dev/null)
    mv "$tmp/onnxruntime-node-$version.tgz" "$tgz"
  fi
  tar -xzf "$tgz" -C "$tmp" --wildcards 'package/bin/napi-v*/linux/x64/*'
  # Up to 1.21 the library is libonnxruntime.so.<version>; from 1.22 on, libonnxruntime.so.1.
  so=$(ls "$tmp"/package/bin/napi-v*/linux/x64/libonnxruntime.so."$version" \
    "$tmp"/package/bin/napi-v*/linux/x64/libonnxruntime.so.1 2>/dev/null | head -n1 || true)
  shared=$(ls "$tmp"/package/bin/napi-v*/linux/x64/libonnxruntime_providers_shared.so 2>/dev/null | head -n1 || true)
  source_desc="npm onnxruntime-node@$version ($(sha256sum "$tgz" | cut -d' ' -f1) $(basename "$tgz"))"
  [ "$version" = "$pinned_version" ] && want_so=$pinned_npm_so_sha256
else
  jar=$cache/onnxruntime-$version.jar
  url="https://repo1.maven.org/maven2/com/microsoft/onnxruntime/onnxruntime/$version/onnxruntime-$version.jar"
  jar_pin=""
  if [ "$version" = "$pinned_version" ]; then
    jar_pin=$pinned_maven_jar_sha256
    want_so=$pinned_maven_so_sha256
  fi
  maven_fetch 10-onnxruntime "$url" "$jar" "$jar_pin"
  (cd "$tmp" && unzip -q -o "$jar" 'ai/onnxruntime/native/linux-x64/*')
  so=$tmp/ai/onnxruntime/native/linux-x64/libonnxruntime.so
  shared=$tmp/ai/onnxruntime/native/linux-x64/libonnxruntime_providers_shared.so
  source_desc="maven com.microsoft.onnxruntime:onnxruntime:$version ($(sha256sum "$jar" | cut -d' ' -f1) $(basename "$jar"))"
fi

if [ -z "$so" ] || [ ! -s "$so" ]; then
  echo "10-onnxruntime: no linux x64 libonnxruntime.so in the $version package" >&2
  exit 1
fi
sum=$(sha256sum "$so" | cut -d' ' -f1)
if [ -n "$want_so" ] && [ "$sum" != "$want_so" ]; then
  echo "10-onnxruntime: checksum mismatch for libonnxruntime.so $version from $source_desc: want $want_so, got $sum" >&2
  exit 1
fi
if ! nm -D --defined-only "$so" 2>/dev/null | grep -q ' OrtGetApiBase'; then
  if command -v nm >/dev/null 2>&1; then
    echo "10-onnxruntime: $so does not export OrtGetApiBase (not a C API build)" >&2
    exit 1
  fi
fi

install -m 0644 "$so" "$lib.tmp" && mv "$lib.tmp" "$lib"
# The soname is libonnxruntime.so.1; provide it so that loaders resolving by soname find it too.
ln -sf libonnxruntime.so "$libdir/libonnxruntime.so.1"
if [ -n "$shared" ] && [ -s "$shared" ]; then
  install -m 0644 "$shared" "$libdir/libonnxruntime_providers_shared.so"
fi
cat >"$libdir/onnxruntime.txt" <<EOF
version: $version
source: $source_desc
sha256: $sum  libonnxruntime.so
training_api: no (CPU build without training; see docs/MODELS.md)
EOF
echo "$version" >"$stamp"
echo "10-onnxruntime: installed libonnxruntime.so $version from $source_desc in $(( $(date +%s) - start ))s"
