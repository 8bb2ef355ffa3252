#!/usr/bin/env bash
# One command for bench/store: the store and step-detection bench (SQLite and PostgreSQL side by
# side; a throwaway PostgreSQL server is started when VOUCH_TEST_PG is unset) and the report
# bench (size and Chromium draw time of a 1,000-leg run). Needs a build with VOUCH_BENCH=ON.
# usage: bench/store/run.sh [BUILD_DIR]   (results: docs/bench/store.md)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
[ $# -gt 0 ] && shift
ninja -C "$build" vouch vouch_bench_store >/dev/null
echo "machine: $(nproc) cores; $(uptime)"
if [ -z "${VOUCH_TEST_PG:-}" ]; then
  source "$root/scripts/services.sh"
  pg_start
  trap pg_stop EXIT
fi
"$build/vouch_bench_store" "$@"
bash "$root/bench/store/report_bench.sh" "$build/vouch" 1000
