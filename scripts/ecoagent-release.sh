#!/usr/bin/env bash
# Packs `rated build-bench` outputs into the shipped EcoAgent release (data/ecoagent):
#
#   scripts/ecoagent-release.sh SYN_BUILD REAL_BUILD OUT
#
# SYN_BUILD and REAL_BUILD are build-bench --out folders (REAL_BUILD may be missing: a release
# of Syn alone). OUT gets syn/ and real/ in the BEIR layout with every file gzip-compressed
# (gzip -9n: no name or time stamp, so an unchanged input gives byte-identical files), the
# builds' stats.json files as OUT/stats.json ({"syn": …, "real": …}) and their generated
# datasheets under OUT/build/. OUT/DATASHEET.md (sources, licences, model provenance, audit) is
# written by hand and left alone. The pkg/bench readers accept the .gz files as they are.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 SYN_BUILD REAL_BUILD OUT" >&2; exit 2; }
syn=$1 real=$2 out=$3
[ -s "$syn/syn/queries.jsonl" ] || { echo "ecoagent-release: $syn/syn is not a finished build-bench output" >&2; exit 1; }
tmp=$(mktemp -d "${out%/}.release.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

pack() { # pack SRC_DIR DEST_DIR: every file of a BEIR folder, gzip-compressed
  local f
  while read -r f; do
    mkdir -p "$2/$(dirname "$f")"
    gzip -9n -c "$1/$f" >"$2/$f.gz"
  done < <(cd "$1" && find . -type f \( -name '*.jsonl' -o -name '*.tsv' \) | sed 's|^\./||' | sort)
}

pack "$syn/syn" "$tmp/syn"
mkdir -p "$tmp/build"
cp "$syn/DATASHEET.md" "$tmp/build/syn-DATASHEET.md"
parts=("syn=$syn/stats.json")
if [ -s "$real/real/queries.jsonl" ]; then
  pack "$real/real" "$tmp/real"
  cp "$real/DATASHEET.md" "$tmp/build/real-DATASHEET.md"
  parts+=("real=$real/stats.json")
else
  echo "ecoagent-release: no finished Real build in $real: releasing Syn only"
fi
python3 - "$tmp/stats.json" "${parts[@]}" <<'PY'
import json, sys
out = {}
for arg in sys.argv[2:]:
    name, path = arg.split("=", 1)
    with open(path) as f:
        stats = json.load(f)
    out[name] = {"run": stats["run"], name: stats[name]}
with open(sys.argv[1], "w") as f:
    json.dump(out, f, indent=2, ensure_ascii=False)
    f.write("\n")
PY

# Replace the packed parts of OUT as a whole (DATASHEET.md, journal/ and audit/ stay).
mkdir -p "$out"
for p in syn real build stats.json; do
  rm -rf "${out:?}/$p.old"
  [ -e "$out/$p" ] && mv "$out/$p" "$out/$p.old"
  [ -e "$tmp/$p" ] && mv "$tmp/$p" "$out/$p"
  rm -rf "${out:?}/$p.old"
done
echo "ecoagent-release: wrote $out ($(du -sh --exclude=journal "$out" | cut -f1) without journals)"
