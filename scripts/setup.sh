#!/usr/bin/env bash
# Installs what vouch needs to build on Debian 12 (as root); `--test` adds what its tests need,
# `--release` the source of Debian's simdjson for a release binary (scripts/simdjson_source.sh).
# Only Debian packages: nothing is downloaded at build time.
set -euo pipefail
# What building vouch needs (the quick start): compilers, CMake/Ninja and the libraries.
pkgs=(
  build-essential cmake ninja-build git pkg-config ccache
  libcli11-dev libfmt-dev nlohmann-json3-dev libsimdjson-dev
  libsqlite3-dev libssl-dev libboost-math-dev zlib1g-dev libre2-dev
  libutf8proc-dev        # NFKC and Unicode categories of metric names (linked statically)
  libpq-dev              # the history store's PostgreSQL engine (libpq's header; dlopen'd at run time)
)
# What the tests need besides (`setup.sh --test`, run by scripts/test.sh): GoogleTest, the peers
# benchmarked against, clang for the fuzz targets, a real PostgreSQL server, headless Chromium for
# the report's browser test, and a real Slurm cluster for the fleet tests.
test=0 release=0
for a in "$@"; do
  case "$a" in
    --test) test=1 ;;
    --release) release=1 ;;
    *) echo "setup.sh: unknown option '$a' (--test, --release)" >&2; exit 64 ;;
  esac
done
if [ "$test" = 1 ]; then
  pkgs+=(
    libgtest-dev libgmock-dev
    python3 python3-venv sqlite3 hyperfine   # python3-venv: the wheel installed in a fresh venv
    time                           # /usr/bin/time: the benches' CPU time per process
    clang libclang-rt-14-dev lld   # the fuzz targets (scripts/fuzz.sh)
    postgresql                     # the history store's test server
    chromium                       # the report's browser test (headless)
    slurm-wlm munge
  )
fi
# Node.js and npm for the report's chart library (uPlot, inlined at build time) and its
# browser test (playwright-core driving Debian's chromium): Debian's packages unless a node
# is already installed.
command -v node >/dev/null || pkgs+=(nodejs)
command -v npm >/dev/null || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The web packages, exactly as package-lock.json pins them (npm registry only; no browser is
# downloaded: playwright-core drives /usr/bin/chromium).
web="$(cd "$(dirname "$0")/.." && pwd)/web"
if ! cmp -s "$web/package-lock.json" "$web/node_modules/.vouch-lock" 2>/dev/null; then
  (cd "$web" && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.vouch-lock)
fi
# The shared measurement lock's folder, owned by root so that no user can swap the lock file
# (src/lock/lock.h): now, and at every boot (/run is a tmpfs) where systemd-tmpfiles runs.
if [ "$(id -u)" -eq 0 ] && [ -d /run/lock ]; then
  install -d -m 1777 -o root -g root /run/lock/vouch
  if [ -d /usr/lib/tmpfiles.d ]; then
    echo 'd /run/lock/vouch 1777 root root -' > /usr/lib/tmpfiles.d/vouch.conf
  fi
fi
# A release binary compiles Debian's simdjson in (scripts/release.sh, scripts/portable.sh):
# Debian ships no archive of it, only its source package.
if [ "$release" = 1 ]; then
  bash "$(dirname "$0")/simdjson_source.sh"
fi
