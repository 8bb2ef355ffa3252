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
)
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
