# Sourced by scripts/setup.d steps. Not executable on its own.

# maven_fetch TAG URL DEST [SHA256]
# Downloads a Maven Central artifact to DEST unless DEST is already there (and, when SHA256 is
# given, matches it). A fresh download is checked against Maven Central's published .sha1 before
# it replaces DEST; with SHA256 the result is also checked against that pin. TAG prefixes the
# messages. Returns non-zero on any mismatch, leaving no partial DEST behind.
maven_fetch() {
  local tag=$1 url=$2 dest=$3 pin=${4:-}
  if [ ! -s "$dest" ] || { [ -n "$pin" ] && [ "$(sha256sum "$dest" | cut -d' ' -f1)" != "$pin" ]; }; then
    echo "$tag: downloading $url"
    # curl's progress bar on a terminal, silence otherwise (CI logs stay plain).
    local show=(-sS)
    [ -t 2 ] && show=(--progress-bar)
    curl -fL "${show[@]}" --retry 3 -o "$dest.part" "$url" || { rm -f "$dest.part"; return 1; }
    local sha1_want sha1_got
    sha1_want=$(curl -fsSL --retry 3 "$url.sha1" | cut -d' ' -f1)
    sha1_got=$(sha1sum "$dest.part" | cut -d' ' -f1)
    if [ "$sha1_want" != "$sha1_got" ]; then
      echo "$tag: sha1 mismatch for $url: Maven Central says $sha1_want, got $sha1_got" >&2
      rm -f "$dest.part"
      return 1
    fi
    mv "$dest.part" "$dest"
  fi
  if [ -n "$pin" ]; then
    local got
    got=$(sha256sum "$dest" | cut -d' ' -f1)
    if [ "$got" != "$pin" ]; then
      echo "$tag: sha256 mismatch for $dest: pinned $pin, got $got" >&2
      return 1
    fi
  fi
}
