#!/usr/bin/env bash
# Installs redis-server (the Debian package; Redis 7) for the shared-state tests and benchmarks of
# rated serve (pkg/state's Redis backend; internal/redistest starts throwaway servers on
# 127.0.0.1). The package is installed with apt-get, which verifies Debian's signed package
# lists and checksums, without starting the system service: tests and scripts/redis-up start
# their own servers. Records the binary's path, version and sha256 in $RATED_HOME/redis.
# Idempotent: when redis-server is on PATH, only the record is refreshed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
assets=${RATED_HOME:-${RATED_ASSETS:-$root/.rated}}
out=$assets/redis
if ! command -v redis-server >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "60-redis: redis-server is not installed and this is not a root Debian shell: install the package redis-server (Redis >= 7) yourself" >&2
    exit 1
  fi
  start=$(date +%s)
  echo "60-redis: apt-get install redis-server"
  # Keep the package's service from starting (no policy-rc.d of our own is left behind).
  added_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && added_policy=1
  fi
  trap '[ "$added_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d' EXIT
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  echo "60-redis: installed in $(( $(date +%s) - start ))s"
fi
bin=$(command -v redis-server)
version=$("$bin" --version)
case "$version" in
  *" v=7."*|*" v=8."*) ;;
  *) echo "60-redis: $bin is too old ($version); rated needs Redis >= 7 (XTRIM MINID, Lua scripts)" >&2; exit 1 ;;
esac
mkdir -p "$out"
{ echo "path: $bin"; echo "version: $version"; echo "sha256: $(sha256sum <"$bin" | cut -d' ' -f1)"; } >"$out/redis-server.txt.tmp"
mv "$out/redis-server.txt.tmp" "$out/redis-server.txt"
echo "60-redis: $version ($bin)"
