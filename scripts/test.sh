#!/usr/bin/env bash
# Builds vouch and runs every test: a normal build, then one under ASan+UBSan.
# Works on a fresh Debian 12 machine as root (installs what is missing first).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage says when it starts, so that a slow CI run shows where its time went.
# At the end (and on a failure) every stage's length again, where a log's tail shows it.
stages=""
stage() {
  echo "== test.sh: $* (at ${SECONDS} s)"
  stages+="  at ${SECONDS} s: $*"$'\n'
}
summary() { printf '== test.sh: stages (%s s in all)\n%s' "$SECONDS" "$stages"; }
stage "set-up"
bash scripts/setup.sh --test
# The normal build compiles Debian's simdjson in from its source package, as a release does
# (scripts/simdjson_source.sh), but links fmt and RE2 shared (VOUCH_STATIC_DEPS=OFF, set here so
# that a tree the quick start or a release configured tests the same): libstdc++ is then the one
# they load, which RpathCli checks. Where Debian's
# source archive cannot be reached, it links the shared library instead, and says so; the
# sanitizer build below always links the shared one, so both are tested.
if bash scripts/simdjson_source.sh; then
  simdjson_opt=-DVOUCH_SIMDJSON_SOURCE=/opt/vouch-deps/simdjson
else
  simdjson_opt=-DVOUCH_SIMDJSON_SOURCE=
  echo "== test.sh: no simdjson source package: the normal build links Debian's libsimdjson.so"
fi
# A real Slurm cluster (12 nodes on this machine) for the fleet tests; they fail without it.
slurm_dir=$(mktemp -d /tmp/vouch-slurm.XXXXXX)
trap 'summary; bash scripts/slurm/stop.sh "$slurm_dir"' EXIT  # (extended below for PostgreSQL)
bash scripts/slurm/start.sh "$slurm_dir"
export SLURM_CONF=$slurm_dir/slurm.conf VOUCH_REQUIRE_SLURM=1
jobs=$(nproc)
# Most CLI tests wait on their legs (a leg sleeps so that the sampler sees it busy), not on a
# core: twice as many tests as cores ran the normal suite in 168 s instead of about 340 s.
test_jobs=$((2 * jobs))
# ctest starts the costliest tests first only when it knows their costs, which a fresh tree does
# not: seeded from tests/ctest_costs.txt, the sanitizer run's longest test (115 s) no longer
# starts last and holds the run open alone.
seed_costs() {
  mkdir -p "$1/Testing/Temporary"
  [ -e "$1/Testing/Temporary/CTestCostData.txt" ] ||
    grep -v '^#' tests/ctest_costs.txt >"$1/Testing/Temporary/CTestCostData.txt"
}
# A throwaway PostgreSQL server for the history store's tests (VOUCH_TEST_PG); with
# VOUCH_REQUIRE_PG set, a store test that finds no server fails instead of skipping.
source scripts/services.sh
pg_start
trap 'summary; pg_stop; bash scripts/slurm/stop.sh "$slurm_dir"' EXIT
# The report's browser test fails (instead of skipping) without Chromium, node or uPlot.
export VOUCH_REQUIRE_BROWSER=1
# VOUCH_TESTS=ON explicitly: the quick start configures the same build tree without tests,
# and a cached OFF would leave nothing to run. --no-tests=error makes that loud anyway.
stage "normal build"
# -g1 (line tables): full debug info made each file's compile about 45 % longer, and the
# release files are installed stripped anyway. The library and the CLI as a unity build, as in the
# sanitizer build below: seventeen CLI files each compiled CLI11's inline functions at -O2 again
# (cli/cmd_gate.cc: 18.5 s, most of it code generation). The tests stay one file a compile, with
# their common headers precompiled.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DVOUCH_TESTS=ON -DVOUCH_PORTABLE=ON -DVOUCH_STATIC_DEPS=OFF -DCMAKE_UNITY_BUILD=ON "$simdjson_opt" >/dev/null
ninja -C build
stage "normal tests"
seed_costs build
ctest --test-dir build --output-on-failure --no-tests=error -j "$test_jobs"
# The trace readers against their anchors in the same run (sqlite3; the simdjson reference or
# Python's json): fails only on a gross ratio regression (issue 24), about a minute.
stage "reader perf check"
bash bench/ci_perf.sh build/vouch
# The release files (tarball, wheel, .deb) from that build, installed and run in clean
# environments (env -i, fresh folders): the bundled libraries, not the build machine's, are used.
stage "release files"
bash scripts/release.sh --from build
bash scripts/release_check.sh
stage "ASan+UBSan build"
# -O1: the sanitized tests run about twice as fast as at -O0, for a little more compile time;
# -g1 keeps the line tables the sanitizers' reports need and little else. The library and the
# CLI as a unity build (eight sources a compile; the tests stay one file a compile): one batch
# took 52 s of CPU against 110 s for its files one by one, since most of a file's compile is the
# headers and templates it shares with its neighbours.
# No bench programs here: nothing tests them under the sanitizers.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
  -DVOUCH_SANITIZE=ON -DVOUCH_TESTS=ON -DVOUCH_BENCH=OFF -DCMAKE_UNITY_BUILD=ON >/dev/null
ninja -C build-asan
stage "ASan+UBSan tests"
seed_costs build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure --no-tests=error -j "$test_jobs"
# Every reader of untrusted input fuzzed for a few seconds (libFuzzer, clang, ASan+UBSan; issue
# 12), from the repository's seeds alone: about 4 minutes on 2 cores, most of it the clang build.
# A crash, hang, leak or UB report fails CI and leaves its input in build-fuzz/crashes/.
stage "fuzz"
FUZZ_OPT=-O0 FUZZ_FRESH=1 bash scripts/fuzz.sh "${VOUCH_FUZZ_SECONDS:-4}"
stage "done"
echo "all tests passed (normal and ASan+UBSan builds, the release files, and the fuzz targets)"
