#!/usr/bin/env bash
# Prints the Debian mirror this machine's apt uses (deb.debian.org unless its sources say
# otherwise; VOUCH_DEBIAN_MIRROR overrides), without a trailing slash. Shared by
# scripts/release_bullseye.sh and scripts/simdjson_source.sh.
set -euo pipefail
mirror=${VOUCH_DEBIAN_MIRROR:-$(grep -rhoE 'https?://[^[:space:]]+/debian/?([[:space:]]|$)' \
  /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | head -1 | tr -d '[:space:]' || true)}
mirror=${mirror%/}
echo "${mirror:-http://deb.debian.org/debian}"
