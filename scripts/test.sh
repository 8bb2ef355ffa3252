#!/usr/bin/env bash
# Builds vouch and runs every test: a normal build, then one under ASan+UBSan.
# Works on a fresh Debian 12 machine as root (installs what is missing first).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
# A real Slurm cluster (12 nodes on this machine) for the fleet tests; they fail without it.
slurm_dir=$(mktemp -d /tmp/vouch-slurm.XXXXXX)
trap 'bash scripts/slurm/stop.sh "$slurm_dir"' EXIT  # (extended below for PostgreSQL)
bash scripts/slurm/start.sh "$slurm_dir"
export SLURM_CONF=$slurm_dir/slurm.conf VOUCH_REQUIRE_SLURM=1
jobs=$(nproc)
# A throwaway PostgreSQL server for the history store's tests (VOUCH_TEST_PG); with
# VOUCH_REQUIRE_PG set, a store test that finds no server fails instead of skipping.
source scripts/services.sh
pg_start
trap 'pg_stop; bash scripts/slurm/stop.sh "$slurm_dir"' EXIT
# The report's browser test fails (instead of skipping) without Chromium, node or uPlot.
export VOUCH_REQUIRE_BROWSER=1
# VOUCH_TESTS=ON explicitly: the quick start configures the same build tree without tests,
# and a cached OFF would leave nothing to run. --no-tests=error makes that loud anyway.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVOUCH_TESTS=ON -DVOUCH_PORTABLE=ON >/dev/null
ninja -C build
ctest --test-dir build --output-on-failure --no-tests=error -j "$jobs"
# The trace readers against their anchors in the same run (sqlite3; the simdjson reference or
# Python's json): fails only on a gross ratio regression (issue 24), about a minute.
bash bench/ci_perf.sh build/vouch
# The release files (tarball, wheel, .deb) from that build, installed and run in clean
# environments (env -i, fresh folders): the bundled libraries, not the build machine's, are used.
bash scripts/release.sh --from build
bash scripts/release_check.sh
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DVOUCH_SANITIZE=ON -DVOUCH_TESTS=ON >/dev/null
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure --no-tests=error -j "$jobs"
# Every reader of untrusted input fuzzed for a few seconds (libFuzzer, clang, ASan+UBSan; issue
# 12), from the repository's seeds alone: about 4 minutes on 2 cores, most of it the clang build.
# A crash, hang, leak or UB report fails CI and leaves its input in build-fuzz/crashes/.
FUZZ_OPT=-O0 FUZZ_FRESH=1 bash scripts/fuzz.sh "${VOUCH_FUZZ_SECONDS:-4}"
echo "all tests passed (normal and ASan+UBSan builds, the release files, and the fuzz targets)"
