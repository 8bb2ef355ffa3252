#!/usr/bin/env bash
# Debian 12 ships simdjson as a shared library only (libsimdjson-dev has no archive). A release
# binary that loads it also loads libstdc++.so, libgcc_s and their relocations at every start
# (issue 39: `vouch --version` 1.18x `hyperfine --version` for a five-line program with that
# library alone). This fetches the source package of the very libsimdjson-dev installed here
# from Debian's archive (apt-get source: its hashes checked against the signed index) and keeps
# its single-file build (singleheader/simdjson.cpp and simdjson.h, byte-identical to
# /usr/include/simdjson.h, which is checked) for `cmake -DVOUCH_SIMDJSON_SOURCE=DIR`:
# scripts/release.sh and scripts/portable.sh then compile it into vouch. Run by
# `scripts/setup.sh --release`; nothing is downloaded at build time.
#   bash scripts/simdjson_source.sh [DIR]      # DIR default /opt/vouch-deps/simdjson
set -euo pipefail
dest=${1:-/opt/vouch-deps/simdjson}
say() { echo "simdjson_source: $*" >&2; }
version=$(dpkg-query -W -f='${Version}' libsimdjson-dev 2>/dev/null) ||
  { say "libsimdjson-dev is not installed (bash scripts/setup.sh)"; exit 1; }
if [ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$version" ] &&
  cmp -s "$dest/simdjson.h" /usr/include/simdjson.h; then
  exit 0
fi
mirror=$(bash "$(dirname "$0")/debian_mirror.sh")
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
work=$(mktemp -d /tmp/vouch-simdjson.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial"
echo "deb-src $mirror $codename main" >"$work/sources.list"
apt=(-o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o Dir::State::Lists="$work/lists" -o APT::Sandbox::User=root)
apt-get "${apt[@]}" update -qq >/dev/null || { say "apt-get update of $mirror's sources failed"; exit 1; }
(cd "$work" && apt-get "${apt[@]}" source -qq --download-only "simdjson=$version" >/dev/null) ||
  { say "apt-get source simdjson=$version from $mirror failed"; exit 1; }
mkdir "$work/src"
tar -C "$work/src" --strip-components=1 -xzf "$(ls "$work"/simdjson_*.orig.tar.gz)"
tar -C "$work/src" -xJf "$(ls "$work"/simdjson_*.debian.tar.xz)"
if [ -d "$work/src/debian/patches" ] && [ -s "$work/src/debian/patches/series" ]; then
  say "Debian patches simdjson $version; this script takes the upstream single file as is"
  exit 1
fi
cmp -s "$work/src/singleheader/simdjson.h" /usr/include/simdjson.h ||
  { say "the source's simdjson.h is not the installed /usr/include/simdjson.h"; exit 1; }
rm -rf "$dest.new" && mkdir -p "$dest.new"
cp "$work/src/singleheader/simdjson.cpp" "$work/src/singleheader/simdjson.h" "$work/src/LICENSE" \
  "$work/src/debian/copyright" "$dest.new/"
echo "$version" >"$dest.new/VERSION"
rm -rf "$dest" && mv "$dest.new" "$dest"
say "simdjson $version's single-file source in $dest"
