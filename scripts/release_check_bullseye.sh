#!/usr/bin/env bash
# Installs dist/'s wheel, .deb and tarball in a clean Debian 11 (bullseye, glibc 2.31) root made
# here, and runs each there: the wheel into a fresh `python3 -m venv` with `pip install
# --no-index` (offline), then `vouch --version`, `vouch help metrics`, a leg of a Python
# benchmark on the simulated device that marks its region with `import vouch`, and
# `python -c 'import vouch'`; the .deb with dpkg -i (the system Python imports vouch through
# its .pth); the tarball unpacked (PYTHONPATH=vouch-VERSION/python). Exit 1 naming what failed.
#   bash scripts/release_check_bullseye.sh [PRISTINE_ROOT]   # as root; default
#   /var/tmp/vouch-bullseye-clean: made once by debootstrap (minbase + python3-venv) from the
#   mirror apt uses here, then copied afresh for every check, so each check starts clean.
set -euo pipefail
cd "$(dirname "$0")/.."
pristine=$(realpath -m "${1:-${VOUCH_BULLSEYE_CLEAN:-/var/tmp/vouch-bullseye-clean}}")
fail() { echo "release check (Debian 11): $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot)"
one() {
  local f=( $1 )
  [ ${#f[@]} -eq 1 ] && [ -e "${f[0]}" ] || fail "expected one file $1, found: ${f[*]}"
  echo "${f[0]}"
}
whl=$(one "dist/vouch-*-py3-none-manylinux_2_*_x86_64.whl")
deb=$(one "dist/vouch_*_amd64.deb")
tgz=$(one "dist/vouch-*-linux-x86_64.tar.gz")
mirror=${VOUCH_DEBIAN_MIRROR:-$(grep -rhoE 'https?://[^[:space:]]+/debian/?([[:space:]]|$)' \
  /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | head -1 | tr -d '[:space:]' || true)}
mirror=${mirror%/}
mirror=${mirror:-http://deb.debian.org/debian}
if [ ! -f "$pristine/.vouch-clean" ]; then
  echo "release check (Debian 11): debootstrap bullseye into $pristine from $mirror"
  rm -rf "$pristine"
  debootstrap --variant=minbase --include=python3,python3-venv bullseye "$pristine" "$mirror" \
    >"$pristine.debootstrap.log" 2>&1 || { tail -20 "$pristine.debootstrap.log"; exit 1; }
  touch "$pristine/.vouch-clean"
fi
work=$(mktemp -d /var/tmp/vouch-bullseye-check.XXXXXX)
r=$work/root
cleanup() {
  umount "$r/proc" 2>/dev/null || true
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
cp -a "$pristine" "$r"
mount -t proc proc "$r/proc"
mkdir -p "$r/check"
cp "$whl" "$deb" "$tgz" "$r/check/"
cat >"$r/check/bench.py" <<'PY'
import time
import vouch
time.sleep(0.3)  # start-up outside the region
for _ in range(40):
    with vouch.region("step"):
        time.sleep(0.1)
vouch.metric("steps_per_s", 10.0, "1/s", "higher")
PY
in_root() { chroot "$r" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 "$@"; }
glibc=$(in_root ldd --version | awk 'NR==1 {print $NF}')
[ "$glibc" = 2.31 ] || fail "the root's glibc is $glibc, not Debian 11's 2.31"
leg() { # leg NAME VOUCH PYTHON [ENV...]: a simulated run of bench.py, valid, region marked
  local name=$1 vouch=$2 python=$3
  shift 3
  in_root "$@" "$vouch" --sim h200-busy --lock-file /check/lock run --warmup 0 --reps 1 \
    --out "/check/$name-run" -- "$python" /check/bench.py >"$work/$name.out" 2>&1 ||
    { cat "$work/$name.out"; fail "$name: the simulated run failed"; }
  grep -q '"steps_per_s"' "$r/check/$name-run/record.json" || fail "$name: no steps_per_s in the record"
  grep -q '"event":"begin"' "$r/check/$name-run"/legs/*/metrics.jsonl ||
    fail "$name: vouch.region wrote no begin marker"
  in_root "$@" "$vouch" help metrics | grep -q '^# Metrics' || fail "$name: vouch help metrics"
  echo "release check (Debian 11): $name: $(in_root "$@" "$vouch" --version), simulated run valid, region marked by import vouch"
}

# The wheel: a fresh venv, pip offline.
in_root python3 -m venv /check/venv
in_root /check/venv/bin/python -m pip install -q --no-index --no-cache-dir "/check/$(basename "$whl")" ||
  fail "wheel: pip install --no-index (pip $(in_root /check/venv/bin/python -m pip --version | awk '{print $2}'))"
in_root /check/venv/bin/python -c 'import vouch' || fail "wheel: import vouch"
leg wheel /check/venv/bin/vouch /check/venv/bin/python

# The .deb: dpkg -i, the system Python imports vouch through /usr/lib/python3/dist-packages/vouch.pth.
in_root dpkg -i "/check/$(basename "$deb")" >/dev/null || fail ".deb: dpkg -i"
in_root python3 -c 'import vouch' || fail ".deb: import vouch in the system Python"
leg deb /usr/bin/vouch /usr/bin/python3

# The tarball, unpacked.
in_root tar -C /check -xzf "/check/$(basename "$tgz")"
t=$(basename "$(one "$r/check/vouch-*/bin/vouch" | xargs dirname | xargs dirname)")
in_root env PYTHONPATH="/check/$t/python" python3 -c 'import vouch' || fail "tarball: import vouch"
leg tarball "/check/$t/bin/vouch" /usr/bin/python3 PYTHONPATH="/check/$t/python"
echo "release check (Debian 11): all passed on glibc $glibc ($(basename "$whl"))"
