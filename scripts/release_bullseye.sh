#!/usr/bin/env bash
# The release files of scripts/release.sh, built on Debian 11 (bullseye, glibc 2.31) so that
# the wheel is manylinux_2_30 (nothing newer than glibc 2.30 is needed) and runs on Debian 11,
# Ubuntu 20.04/22.04, RHEL/Rocky 9, Amazon Linux 2023
# (a build on Debian 12 needs glibc 2.36: GCC 12's static libstdc++/libgcc call arc4random and
# _dl_find_object). Everything comes from Debian's package registry, nothing else is downloaded:
#   - a bullseye root made by debootstrap from the mirror this machine's apt uses, with
#     bullseye's own GCC 10, binutils, glibc and -dev packages (chroot + apt-get);
#   - what bullseye's packages are too old for, from Debian 12's packages: the header-only
#     CLI11 2.1 and nlohmann-json 3.11 (`apt-get download`, unpacked), fmt 9.1 and simdjson 3.0
#     built from Debian 12's source packages (`apt-get source`) inside the root, static;
#   - Debian 12's cmake 3.25 (bullseye has 3.18) run inside the root with its own libraries
#     beside it (patchelf), a build tool only: nothing of it is linked into vouch;
#   - GCC 10's libstdc++ lacks make_unique_for_overwrite and floating from_chars (GCC 11):
#     scripts/release/gcc10_compat.h supplies both, force-included in this build only.
# Then scripts/release.sh packages the build with the root's ldd and libraries (--root).
#   bash scripts/release_bullseye.sh [ROOT]    # as root on Debian 12; ROOT default
#                                              # /var/tmp/vouch-bullseye (kept: a second run
#                                              # reuses it and its ccache)
# Slow (a first run: debootstrap, ~250 MB of packages, fmt, simdjson and vouch built on the
# machine's cores: about 80 minutes on a 2-core VM shared with other builds, 7 for a rerun
# after a three-file change); so it is not part of scripts/test.sh.
# scripts/release_check_bullseye.sh then installs the files in a clean Debian 11 root.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
root=$(realpath -m "${1:-${VOUCH_BULLSEYE_ROOT:-/var/tmp/vouch-bullseye}}")
[ "$(id -u)" -eq 0 ] || { echo "release_bullseye: needs root (debootstrap, chroot, mount)" >&2; exit 1; }
for tool in debootstrap patchelf apt-get dpkg-deb; do
  command -v "$tool" >/dev/null ||
    { echo "release_bullseye: $tool is missing (apt-get install debootstrap patchelf)" >&2; exit 1; }
done
# The Debian mirror apt uses here (deb.debian.org unless this machine says otherwise).
mirror=$(bash scripts/debian_mirror.sh)  # the repository root: see the cd above
log() { echo "release_bullseye: $*"; }
# One run per root at a time (two would share its build folder and mounts).
mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
flock -n 9 || { echo "release_bullseye: another run is using $root" >&2; exit 1; }

if [ ! -f "$root/.vouch-debootstrap" ]; then
  log "debootstrap bullseye into $root from $mirror"
  debootstrap --variant=minbase bullseye "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
    { tail -20 "$root.debootstrap.log"; exit 1; }
  cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bullseye main
deb $mirror bullseye-updates main
deb $mirror-security bullseye-security main
EOF
  touch "$root/.vouch-debootstrap"
fi

# Mounts for the build (a killed run's leftovers included), undone on exit in reverse order.
mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}" || true; done
}
trap cleanup EXIT
bind() { # bind FROM TO [ro]
  mkdir -p "$2"
  mounts+=("$2")
  mountpoint -q "$2" && return 0
  mount --bind "$1" "$2"
  [ "${3:-}" = ro ] && mount -o remount,ro,bind "$2"
  return 0
}
mounts+=("$root/proc")
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
bind /dev "$root/dev"
bind "$src" "$root/src/vouch" ro
[ -f /usr/local/cuda/include/cupti.h ] && bind "$(realpath /usr/local/cuda)" "$root/usr/local/cuda" ro
in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/opt/hostcmake/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }

if [ ! -f "$root/.vouch-packages-2" ]; then
  log "bullseye's compiler and -dev packages (apt-get in the root)"
  in_root apt-get update -q >/dev/null
  in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    g++ ninja-build pkg-config libboost-dev libsqlite3-dev libssl-dev zlib1g-dev libre2-dev \
    libpq-dev libutf8proc-dev ccache binutils >/dev/null
  touch "$root/.vouch-packages-2"
fi

if [ ! -f "$root/.vouch-deps" ]; then
  log "Debian 12's CLI11, nlohmann-json (headers), fmt and simdjson (sources) into /opt/deps"
  dl=$root/opt/deps-src
  rm -rf "$dl" "$root/opt/deps" && mkdir -p "$dl/lists/partial" "$root/opt/deps/share/doc"
  echo "deb-src ${mirror} bookworm main" >"$dl/sources.list"
  apt_src=(-o Dir::Etc::SourceList="$dl/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o Dir::State::Lists="$dl/lists" -o APT::Sandbox::User=root)
  apt-get "${apt_src[@]}" update -q >/dev/null
  (cd "$dl" && apt-get -q -o APT::Sandbox::User=root download libcli11-dev nlohmann-json3-dev >/dev/null &&
    apt-get "${apt_src[@]}" source -q --download-only fmtlib simdjson >/dev/null)
  for deb in "$dl"/*.deb; do
    dpkg-deb -x "$deb" "$dl/x"
  done
  cp -a "$dl/x/usr/include" "$root/opt/deps/"
  cp -a "$dl/x/usr/share/cmake" "$root/opt/deps/share/"
  for name in fmtlib simdjson; do
    mkdir -p "$dl/$name"
    tar -C "$dl/$name" --strip-components=1 -xzf "$(ls "$dl"/${name}_*.orig.tar.gz)"
    tar -C "$dl/$name" -xJf "$(ls "$dl"/${name}_*.debian.tar.xz)"
  done
  mkdir -p "$root/opt/deps/share/doc/libfmt9" "$root/opt/deps/share/doc/libsimdjson14"
  cp "$dl/fmtlib/debian/copyright" "$root/opt/deps/share/doc/libfmt9/copyright"
  cp "$dl/simdjson/debian/copyright" "$root/opt/deps/share/doc/libsimdjson14/copyright"
  cp "$dl/x/usr/share/doc/libcli11-dev/copyright" "$root/opt/deps/share/doc/libcli11-dev.copyright"
  # Debian 12's cmake, with the libraries it runs on beside it (a build tool, never linked in).
  rm -rf "$root/opt/hostcmake" && mkdir -p "$root/opt/hostcmake/bin" "$root/opt/hostcmake/lib" "$root/opt/hostcmake/share"
  cp /usr/bin/cmake "$root/opt/hostcmake/bin/"
  cp -r "/usr/share/cmake-$(cmake --version | awk 'NR==1 {split($3, v, "."); print v[1] "." v[2]}')" "$root/opt/hostcmake/share/"
  for lib in $(ldd /usr/bin/cmake | awk '/=> \// {print $3}') /lib64/ld-linux-x86-64.so.2; do
    cp -L "$lib" "$root/opt/hostcmake/lib/"
  done
  patchelf --set-interpreter /opt/hostcmake/lib/ld-linux-x86-64.so.2 --force-rpath \
    --set-rpath /opt/hostcmake/lib "$root/opt/hostcmake/bin/cmake"
  for name in fmtlib simdjson; do
    in_root cmake -S "/opt/deps-src/$name" -B "/opt/deps-src/$name-build" -G Ninja \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/opt/deps -DBUILD_SHARED_LIBS=OFF \
      -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DFMT_DOC=OFF -DFMT_TEST=OFF \
      -DSIMDJSON_DEVELOPER_MODE=OFF -DSIMDJSON_ENABLE_THREADS=ON >/dev/null
    in_root ninja -C "/opt/deps-src/$name-build" install >/dev/null
  done
  touch "$root/.vouch-deps"
fi

log "building vouch with bullseye's GCC $(in_root gcc -dumpversion) and glibc $(in_root ldd --version | awk 'NR==1 {print $NF}')"
# web/node_modules (uPlot, for the report) is the checkout's, read through the bind mount. A
# unity build (as CI's sanitizer build): each header is parsed once per batch, not per file,
# which cuts the compile time by about 3 on a small machine.
in_root cmake -S /src/vouch -B /build/vouch -G Ninja -DCMAKE_BUILD_TYPE=Release -DVOUCH_PORTABLE=ON \
  -DVOUCH_TESTS=OFF -DVOUCH_BENCH=OFF -DVOUCH_WERROR=OFF -DVOUCH_CUPTI="${VOUCH_CUPTI:-AUTO}" \
  -DCMAKE_PREFIX_PATH=/opt/deps -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_UNITY_BUILD=ON \
  -DCMAKE_CXX_FLAGS="-include /src/vouch/scripts/release/gcc10_compat.h" >/dev/null
in_root env CCACHE_DIR=/root/.ccache nice ninja -k 0 -C /build/vouch vouch \
  $(grep -q '^VOUCH_CUPTI_LIBRARY:FILEPATH=/' "$root/build/vouch/CMakeCache.txt" && echo vouch_cupti)
VOUCH_RELEASE_ROOT=$root bash scripts/release.sh --from /build/vouch
# And the files installed and run in a clean Debian 11 root (wheel in a venv, .deb, tarball).
bash scripts/release_check_bullseye.sh
