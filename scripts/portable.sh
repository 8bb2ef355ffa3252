#!/usr/bin/env bash
# Builds vouch for the GPU machines (Ubuntu 24.04, no SQLite/simdjson headers there):
# libstdc++/libgcc linked statically, the few shared libraries it needs copied beside it.
# Result: .carry/bin (vouch and the bench programs) and .carry/lib.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-portable -G Ninja -DCMAKE_BUILD_TYPE=Release -DVOUCH_PORTABLE=ON -DVOUCH_TESTS=OFF >/dev/null
ninja -C build-portable
rm -rf .carry && mkdir -p .carry/bin .carry/lib
for f in build-portable/*; do
  [ -f "$f" ] && [ -x "$f" ] && cp "$f" .carry/bin/
done
for lib in $(ldd .carry/bin/vouch | awk '/=>/ {print $3}' | grep -E 'libfmt|libsimdjson|libsqlite3|libre2'); do
  cp -L "$lib" .carry/lib/
done
ls -la .carry/bin .carry/lib
