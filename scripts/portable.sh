#!/usr/bin/env bash
# Builds vouch for the GPU machines (Ubuntu 24.04, no SQLite/simdjson headers there):
# libstdc++/libgcc linked statically (unless Debian's libsimdjson.so brings libstdc++.so: see
# CMakeLists.txt), the few shared libraries it needs copied beside it.
# Result: .carry/bin (vouch and the bench programs) and .carry/lib (those libraries, and the
# CUPTI tracer libvouch_cupti.so with the libcupti it was built against (its fallback), where this machine
# has a CUDA toolkit with CUPTI: VOUCH_CUPTI=AUTO; set VOUCH_CUPTI=ON to require it).
set -euo pipefail
cd "$(dirname "$0")/.."
# A unity build, as scripts/test.sh builds the binary the tests run (scripts/release.sh says why).
# Debian's simdjson compiled in where `scripts/setup.sh --release` fetched its source (the release's
# configuration); else Debian's libsimdjson.so, copied beside the binary below.
simdjson=/opt/vouch-deps/simdjson
[ -f "$simdjson/simdjson.cpp" ] || simdjson=
cmake -S . -B build-portable -G Ninja -DCMAKE_BUILD_TYPE=Release -DVOUCH_PORTABLE=ON -DVOUCH_STATIC_DEPS=ON -DVOUCH_TESTS=OFF \
  -DCMAKE_UNITY_BUILD=ON -DVOUCH_CUPTI="${VOUCH_CUPTI:-AUTO}" -DVOUCH_SIMDJSON_SOURCE="$simdjson" >/dev/null
ninja -C build-portable
rm -rf .carry && mkdir -p .carry/bin .carry/lib
# vouch and the tracer as installed (bin/vouch's RPATH $ORIGIN/../lib is written at install: the
# build tree's points inside build-portable); the bench programs as built (they need
# LD_LIBRARY_PATH=.carry/lib).
cmake --install build-portable --prefix .carry >/dev/null
for f in build-portable/*; do
  case "$f" in *.so | */vouch) continue ;; esac
  [ -f "$f" ] && [ -x "$f" ] && cp "$f" .carry/bin/
done
# (libutf8proc is linked statically: not among them.)
for lib in $(ldd .carry/bin/vouch | awk '/=>/ {print $3}' | grep -E 'libfmt|libsimdjson|libsqlite3|libre2'); do
  cp -L "$lib" .carry/lib/
done
cupti=$(sed -n 's/^VOUCH_CUPTI_LIBRARY:FILEPATH=//p' build-portable/CMakeCache.txt)
if [ -f .carry/lib/libvouch_cupti.so ] && [ -f "$cupti" ]; then
  # The tracer links no libcupti: it loads the process's own (PyTorch's, the toolkit's) and
  # falls back to this copy, beside it under its soname, where it fits the driver.
  soname=$(objdump -p "$cupti" | awk '/SONAME/ {print $2}')
  cp -L "$cupti" ".carry/lib/${soname:-libcupti.so.13}"
fi
ls -la .carry/bin .carry/lib
