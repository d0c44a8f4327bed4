#!/usr/bin/env bash
# Adds Open Bandit Pipeline (PyPI obp 0.5.7, sha256-pinned) to the reference venv: the
# off-policy estimators that pkg/ope's tests compare rated eval replay against (IPS, SNIPS, DR,
# DM, replay). obp does not install cleanly here: it declares Python < 3.11 and hard-depends on
# torch, matplotlib, seaborn, pandas, pingouin and pyieoe, none of which its estimators use. So it
# is installed alone (--no-deps --ignore-requires-python, --require-hashes), and the reference
# script (pkg/ope/testdata/obp_ref.py) imports obp.ope.estimators with stand-ins for torch and
# pandas, which only obp's other modules call. Never used by the product itself.
# Idempotent: skipped when the venv's stamp holds this script's sha256.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
assets=${RATED_HOME:-${RATED_ASSETS:-$root/.rated}}
venv=$assets/venv
stamp=$venv/.obp.sha256
want=$(sha256sum <"$0" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ]; then
  echo "06-obp: the reference venv is missing: run 05-venv.sh first (rated setup venv)" >&2
  exit 1
fi
if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && "$venv/bin/python" -c 'import importlib.util as u; assert u.find_spec("obp")' 2>/dev/null; then
  echo "06-obp: obp already in the reference venv"
  exit 0
fi
start=$(date +%s)
req=$(mktemp)
trap 'rm -f "$req"' EXIT
echo "obp==0.5.7 --hash=sha256:3060d67fedfcfadf1e7a6f2608987f74412b5eb74d2c567edeb147595c68f2a0" >"$req"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --ignore-requires-python --require-hashes -r "$req"
echo "$want" >"$stamp"
echo "06-obp: installed obp 0.5.7 in $(( $(date +%s) - start ))s"
