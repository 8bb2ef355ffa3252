#!/usr/bin/env bash
# Writes the release files to dist/ (issue 25):
#   vouch-VERSION-linux-x86_64.tar.gz        bin/vouch, lib/ (every shared library it needs but
#                                            glibc's, found through $ORIGIN/../lib), the CUPTI
#                                            tracer where CUDA was found, python/ (the module:
#                                            PYTHONPATH=vouch-VERSION/python), share/doc/vouch/
#                                            (the documents `vouch help TOPIC` prints), README,
#                                            licences
#   vouch-VERSION-py3-none-manylinux_2_NN_x86_64.whl   the same binary, libraries, tracer and
#                                            documents and the Python module (`import vouch`);
#                                            `vouch` on PATH through the wheel's console script
#   vouch_VERSION_amd64.deb                  (CPack) the same tree under /opt/vouch, /usr/bin/vouch,
#                                            and /usr/lib/python3/dist-packages/vouch.pth naming
#                                            /opt/vouch/python (`import vouch` in the system Python)
# NN is the newest glibc symbol version the binary or a bundled library needs (objdump -T).
#   bash scripts/release.sh                  # configures and builds build-release (Release, portable)
#   bash scripts/release.sh --from DIR       # packages an existing build configured with
#                                            # -DVOUCH_PORTABLE=ON (scripts/test.sh's build)
#   VOUCH_RELEASE_ROOT=ROOT bash scripts/release.sh --from DIR   # DIR is a build inside the
#                                            # root file system ROOT (scripts/release_bullseye.sh):
#                                            # it is installed, and its libraries resolved and
#                                            # copied, inside ROOT (chroot)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=build-release
rootfs=${VOUCH_RELEASE_ROOT:-}
in_build() { # runs a command where the build was made: here, or chrooted into $rootfs
  if [ -n "$rootfs" ]; then
    chroot "$rootfs" /usr/bin/env -i HOME=/root PATH=/opt/hostcmake/bin:/usr/bin:/bin LANG=C.UTF-8 "$@"
  else
    "$@"
  fi
}
if [ "${1:-}" = "--from" ]; then
  build=${2:?--from needs a build folder}
  grep -q '^VOUCH_PORTABLE:BOOL=ON' "$rootfs$build/CMakeCache.txt" ||
    { echo "release: $build was not configured with -DVOUCH_PORTABLE=ON" >&2; exit 1; }
else
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # A unity build, as scripts/test.sh builds the binary the tests run: CLI11's validator
  # objects and the other static initializers run once per compiled file at every start.
  # Debian's simdjson compiled in (`scripts/setup.sh --release` fetches its source package): the
  # binary then loads no libsimdjson.so and no libstdc++.so at every start (issue 39).
  simdjson=/opt/vouch-deps/simdjson
  if [ ! -f "$simdjson/simdjson.cpp" ]; then
    echo "release: no simdjson source in $simdjson (bash scripts/setup.sh --release): linking Debian's libsimdjson.so, a slower start" >&2
    simdjson=
  fi
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVOUCH_PORTABLE=ON -DVOUCH_STATIC_DEPS=ON -DVOUCH_TESTS=OFF \
    -DCMAKE_UNITY_BUILD=ON -DVOUCH_BENCH=OFF -DVOUCH_CUPTI="${VOUCH_CUPTI:-AUTO}" "${launcher[@]}" \
    -DVOUCH_SIMDJSON_SOURCE="$simdjson" >/dev/null
fi
in_build ninja -C "$build" vouch $(grep -q '^VOUCH_CUPTI_LIBRARY:FILEPATH=/' "$rootfs$build/CMakeCache.txt" && echo vouch_cupti)
version=$(in_build "$build/vouch" --version | awk '{print $2}')
dist=$root/dist
mkdir -p "$rootfs/tmp"
stage=$(mktemp -d "$rootfs/tmp/vouch-release.XXXXXX")
trap 'rm -rf "$stage"' EXIT
tree=$stage/vouch-$version
itree=${tree#"$rootfs"} # the same folder as the build's side sees it
in_build cmake --install "$build" --prefix "$itree" --strip >/dev/null
# lib/ is there even when nothing needs bundling (simdjson compiled in, no CUDA for the tracer).
mkdir -p "$tree/lib"
# Every shared library but glibc's (and the dynamic loader), resolved from the binary and the
# tracer, copied beside them. The tracer links no libcupti (it loads the process's own, see
# docs/gpu-trace.md "Which CUPTI"): the one it was built against comes along under its soname,
# the fallback for a process without one that fits.
glibc='^(linux-vdso|libc|libm|libdl|libpthread|librt|libutil|libresolv|ld-linux(-x86-64)?)\.so'
mapfile -t libs < <(in_build ldd "$itree/bin/vouch" | awk '/=> \// {print $3}')
cupti=$(sed -n 's/^VOUCH_CUPTI_LIBRARY:FILEPATH=//p' "$rootfs$build/CMakeCache.txt")
if [ -f "$tree/lib/libvouch_cupti.so" ] && [ -n "$cupti" ] && [ -f "$rootfs$cupti" ]; then
  soname=$(objdump -p "$rootfs$cupti" | awk '/SONAME/ {print $2}')
  cp -L "$rootfs$cupti" "$tree/lib/${soname:-libcupti.so.13}"
  chmod 0644 "$tree/lib/${soname:-libcupti.so.13}"
fi
for lib in "${libs[@]}"; do
  base=$(basename "$lib")
  [[ $base =~ $glibc ]] && continue
  cp -L "$rootfs$lib" "$tree/lib/$base"
  chmod 0644 "$tree/lib/$base"
done
# The newest GLIBC_x.y any of them needs: the wheel's manylinux tag.
shopt -s nullglob
glibc_max=$(for f in "$tree/bin/vouch" "$tree"/lib/*.so*; do objdump -T "$f"; done |
  grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n -u | tail -1)
nn=${glibc_max#GLIBC_2.}
cp README.md "$tree/"
# The documents a user needs, as `vouch help TOPIC` prints them (cli/help_topics.cmake lists
# them), and the user guide.
mkdir -p "$tree/share/doc/vouch"
while read -r name file; do
  cp "$file" "$tree/share/doc/vouch/$name.md"
done < <(sed -nE 's/^ *"([a-z-]+)\|([^|]+)\|.*/\1 \2/p' cli/help_topics.cmake)
[ -s "$tree/share/doc/vouch/metrics.md" ] || { echo "release: no help topics found" >&2; exit 1; }
cp docs/guide.md "$tree/share/doc/vouch/guide.md"
# The Python module (`import vouch`): python/ in the tarball and the .deb (the wheel has its own).
mkdir -p "$tree/python"
cp -r python/vouch "$tree/python/"
rm -rf "$tree/python/vouch/__pycache__"
mkdir -p "$tree/licenses"
cp scripts/release/LICENSES.md "$tree/licenses/"
# libutf8proc is linked statically (libutf8proc.a, CMakeLists.txt): nothing to bundle, its
# licence still ships.
for pkg in libfmt9 libsimdjson14 libsqlite3-0 libssl3 libssl1.1 zlib1g libre2-9 libutf8proc2 libstdc++6 libgcc-s1; do
  for doc in "$rootfs/usr/share/doc/$pkg/copyright" "$rootfs/opt/deps/share/doc/$pkg/copyright"; do
    [ -f "$doc" ] && cp "$doc" "$tree/licenses/$pkg.copyright"
  done
done
rm -rf "$dist" && mkdir -p "$dist"
tar -C "$stage" --owner=0 --group=0 -czf "$dist/vouch-$version-linux-x86_64.tar.gz" "vouch-$version"
python3 scripts/release/make_wheel.py "$tree" python "$version" "manylinux_2_${nn}_x86_64" "$dist"
# The .deb: the same tree under /opt/vouch, /usr/bin/vouch a link to it (CPack, DEB generator).
cat >"$stage/cpack-config.cmake" <<CFG
set(VOUCH_TREE "$tree")
set(VOUCH_GLIBC "2.$nn")
set(CPACK_PACKAGE_VERSION "$version")
include("$root/scripts/release/CPackConfig.cmake")
CFG
(cd "$stage" && cpack -G DEB -B "$stage/cpack" --config "$stage/cpack-config.cmake") >"$stage/cpack.log" 2>&1 ||
  { cat "$stage/cpack.log"; exit 1; }
cp "$stage"/cpack/*.deb "$dist/"
echo "release: glibc >= 2.$nn ($glibc_max); bundled: $(cd "$tree/lib" && ls | tr '\n' ' ')"
ls -l "$dist"
