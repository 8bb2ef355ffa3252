#!/usr/bin/env bash
# Installs everything vouch needs to build and test on Debian 12 (as root).
# Only Debian packages: nothing is downloaded at build time.
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build git pkg-config
  libcli11-dev libfmt-dev nlohmann-json3-dev libsimdjson-dev
  libsqlite3-dev libssl-dev libboost-math-dev zlib1g-dev libre2-dev
  libgtest-dev libgmock-dev
  python3 sqlite3 hyperfine
  clang libclang-rt-14-dev lld ccache   # the fuzz targets (scripts/fuzz.sh)
  libpq-dev postgresql   # the history store's PostgreSQL engine and the test server
  chromium               # the report's browser test (headless)
  slurm-wlm munge
)
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
