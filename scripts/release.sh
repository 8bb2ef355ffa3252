#!/usr/bin/env bash
# Writes the release files to dist/ (issue 25):
#   vouch-VERSION-linux-x86_64.tar.gz        bin/vouch, lib/ (every shared library it needs but
#                                            glibc's, found through $ORIGIN/../lib), the CUPTI
#                                            tracer where CUDA was found, README, licences
#   vouch-VERSION-py3-none-manylinux_2_NN_x86_64.whl   the same binary and libraries, the tracer
#                                            and the Python module (`import vouch`); `vouch` on
#                                            PATH through the wheel's console script
#   vouch_VERSION_amd64.deb                  (CPack) the same tree under /opt/vouch, /usr/bin/vouch
# NN is the newest glibc symbol version the binary or a bundled library needs (objdump -T).
#   bash scripts/release.sh                  # configures and builds build-release (Release, portable)
#   bash scripts/release.sh --from DIR       # packages an existing build configured with
#                                            # -DVOUCH_PORTABLE=ON (scripts/test.sh's build)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=build-release
if [ "${1:-}" = "--from" ]; then
  build=${2:?--from needs a build folder}
  grep -q '^VOUCH_PORTABLE:BOOL=ON' "$build/CMakeCache.txt" ||
    { echo "release: $build was not configured with -DVOUCH_PORTABLE=ON" >&2; exit 1; }
else
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVOUCH_PORTABLE=ON -DVOUCH_TESTS=OFF \
    -DVOUCH_BENCH=OFF -DVOUCH_CUPTI="${VOUCH_CUPTI:-AUTO}" "${launcher[@]}" >/dev/null
fi
ninja -C "$build" vouch $(grep -q '^VOUCH_CUPTI_LIBRARY:FILEPATH=/' "$build/CMakeCache.txt" && echo vouch_cupti)
version=$("$build/vouch" --version | awk '{print $2}')
dist=$root/dist
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
tree=$stage/vouch-$version
cmake --install "$build" --prefix "$tree" --strip >/dev/null
# Every shared library but glibc's (and the dynamic loader), resolved from the binary and the
# tracer, copied beside them; the tracer's libcupti comes along (a process without its own finds it).
glibc='^(linux-vdso|libc|libm|libdl|libpthread|librt|libutil|libresolv|ld-linux(-x86-64)?)\.so'
mapfile -t libs < <(ldd "$tree/bin/vouch" | awk '/=> \// {print $3}')
[ -f "$tree/lib/libvouch_cupti.so" ] &&
  mapfile -t -O "${#libs[@]}" libs < <(ldd "$tree/lib/libvouch_cupti.so" | awk '/libcupti/ {print $3}')
for lib in "${libs[@]}"; do
  base=$(basename "$lib")
  [[ $base =~ $glibc ]] && continue
  cp -L "$lib" "$tree/lib/$base"
  chmod 0644 "$tree/lib/$base"
done
# The newest GLIBC_x.y any of them needs: the wheel's manylinux tag.
glibc_max=$(for f in "$tree/bin/vouch" "$tree"/lib/*.so*; do objdump -T "$f"; done |
  grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n -u | tail -1)
nn=${glibc_max#GLIBC_2.}
cp README.md "$tree/"
mkdir -p "$tree/licenses"
cp scripts/release/LICENSES.md "$tree/licenses/"
# libutf8proc is linked statically (libutf8proc.a, CMakeLists.txt): nothing to bundle, its
# licence still ships.
for pkg in libfmt9 libsimdjson14 libsqlite3-0 libssl3 zlib1g libre2-9 libutf8proc2 libstdc++6 libgcc-s1; do
  [ -f "/usr/share/doc/$pkg/copyright" ] && cp "/usr/share/doc/$pkg/copyright" "$tree/licenses/$pkg.copyright"
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
