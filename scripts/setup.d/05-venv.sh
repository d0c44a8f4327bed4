#!/usr/bin/env bash
# Installs the reference Python venv that the tests compare rated against (numpy, rank-bm25, bm25s, PyStemmer,
# pytrec-eval, scipy, scikit-learn, onnxruntime, tokenizers; versions pinned in
# scripts/requirements-ref.txt) into $RATED_ASSETS/venv. Never used by the product itself.
# Idempotent: skipped when the venv's stamp holds the requirements file's sha256.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
assets=${RATED_HOME:-${RATED_ASSETS:-$root/.rated}}
venv=$assets/venv
req=$root/scripts/requirements-ref.txt
stamp=$venv/.requirements.sha256
want=$(sha256sum <"$req" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "05-venv: reference venv already installed ($venv)"
  exit 0
fi
start=$(date +%s)
echo "05-venv: reference venv in $venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
echo "$want" >"$stamp"
echo "05-venv: installed in $(( $(date +%s) - start ))s"
