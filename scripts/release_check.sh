#!/usr/bin/env bash
# Installs dist/'s tarball, wheel and .deb (scripts/release.sh) in clean environments (env -i, a
# fresh folder, no LD_LIBRARY_PATH) and runs each: --version, help, `vouch help TOPIC` and the
# documents under share/doc/vouch/, and a leg on the simulated device whose Python benchmark
# marks its region with `import vouch` from the package itself (the wheel's module, the
# tarball's python/ through PYTHONPATH, the .deb's through its .pth). Every library but glibc's
# must come from the package's own lib/. The wheel's manylinux_2_NN tag must be exactly the
# newest GLIBC_2.x symbol version any ELF file in it needs. Exit 1 naming what failed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d /tmp/vouch-release-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home"
fail() { echo "release check: $*" >&2; exit 1; }
clean() { env -i HOME="$work/home" PATH=/usr/bin:/bin LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 "$@"; }
one() { # one GLOB: the single file it names
  local f=( $1 )
  [ ${#f[@]} -eq 1 ] && [ -e "${f[0]}" ] || fail "expected one file $1, found: ${f[*]}"
  echo "${f[0]}"
}
tgz=$(one "dist/vouch-*-linux-x86_64.tar.gz")
whl=$(one "dist/vouch-*-py3-none-manylinux_2_*_x86_64.whl")
deb=$(one "dist/vouch_*_amd64.deb")
nn=$(basename "$whl" | sed -E 's/.*manylinux_2_([0-9]+)_x86_64\.whl/\1/')
sim=$root/tests/data/sim/h200_copy_busy.jsonl
cat >"$work/bench.py" <<'PY'
import time
import vouch
time.sleep(0.3)  # start-up outside the region
for _ in range(40):
    with vouch.region("step"):
        time.sleep(0.1)
vouch.metric("steps_per_s", 10.0, "1/s", "higher")
PY

# The tag, proved: the newest GLIBC_2.x over every ELF file in the wheel is 2.NN.
mkdir -p "$work/unzipped"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$work/unzipped"
newest=0 newest_file= elves=0
while IFS= read -r -d '' f; do
  [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
  elves=$((elves + 1))
  v=$(objdump -T "$f" | grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n -u | tail -1)
  v=${v#GLIBC_2.}
  [ -n "$v" ] && [ "$v" -gt "$newest" ] && newest=$v newest_file=${f#"$work/unzipped/"}
done < <(find "$work/unzipped" -type f -print0)
[ "$elves" -ge 1 ] || fail "wheel: no ELF file in it"
[ "$newest" = "$nn" ] ||
  fail "wheel: tagged manylinux_2_$nn but its newest GLIBC symbol is 2.$newest ($newest_file)"
echo "release check: wheel tag manylinux_2_$nn proved: newest GLIBC_2.$newest over its $elves ELF files ($newest_file)"

docs() { # docs NAME VOUCH DOCDIR [ENV...]: the documents shipped and printed offline
  local name=$1 vouch=$2 dir=$3 topic
  shift 3
  for topic in metrics gpu-trace sim exit-codes guide; do
    [ -s "$dir/$topic.md" ] || fail "$name: no $dir/$topic.md"
  done
  for topic in metrics gpu-trace sim exit-codes; do
    clean "$@" "$vouch" help "$topic" >"$work/help-$topic.txt" || fail "$name: vouch help $topic failed"
    cmp -s "$work/help-$topic.txt" "$dir/$topic.md" ||
      fail "$name: vouch help $topic differs from the shipped $dir/$topic.md"
  done
  if clean "$@" "$vouch" help run | grep -n 'docs/\|tests/data'; then
    fail "$name: vouch help run points to a source path"
  fi
}

bundled() { # bundled FILE TREE: every library FILE needs but glibc's resolves inside TREE
  local name path
  while read -r name path; do
    case "$name" in linux-vdso* | libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | libutil.so* | libresolv.so* | ld-linux*) continue ;; esac
    path=$(realpath -m "${path:-/nowhere}")
    [[ $path == "$(realpath "$2")"/* ]] || fail "$1 takes $name from $path, not from its own lib/"
  done < <(clean ldd "$1" | awk '/=>/ {print $1, $3}')
  local need
  need=$(objdump -T "$1" | grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n -u | tail -1)
  [ "${need#GLIBC_2.}" -le "$nn" ] || fail "$1 needs $need, newer than the wheel's manylinux_2_$nn"
}
leg() { # leg NAME VOUCH [ENV...]: a simulated run of bench.py, valid, with its metric and region
  local name=$1 vouch=$2 python=$3
  shift 3
  clean "$@" "$vouch" --sim "$sim" --lock-file "$work/lock" run --warmup 0 --reps 1 \
    --out "$work/$name-run" -- "$python" "$work/bench.py" >"$work/$name.out" 2>&1 ||
    { cat "$work/$name.out"; fail "$name: the simulated run failed"; }
  grep -q '"steps_per_s"' "$work/$name-run/record.json" || fail "$name: no steps_per_s in the record"
  grep -q '"event":"begin"' "$work/$name-run"/legs/*/metrics.jsonl ||
    fail "$name: vouch.region wrote no begin marker"
  echo "release check: $name: simulated run valid, region marked by import vouch"
}

# 1. The tarball, unpacked anywhere.
mkdir -p "$work/tgz" && tar -C "$work/tgz" -xzf "$tgz"
t=$(one "$work/tgz/vouch-*")
clean "$t/bin/vouch" --version | grep -q '^vouch ' || fail "tarball: vouch --version"
clean "$t/bin/vouch" help >/dev/null || fail "tarball: vouch help"
bundled "$t/bin/vouch" "$t/lib"
# The tracer is loaded into the user's process, which brings its own libgcc/libstdc++: only
# that it finds every library (its libcupti beside it) is checked.
if [ -f "$t/lib/libvouch_cupti.so" ] && clean ldd "$t/lib/libvouch_cupti.so" | grep -q 'not found'; then
  fail "tarball: the tracer lacks a library: $(clean ldd "$t/lib/libvouch_cupti.so" | grep 'not found')"
fi
docs tarball "$t/bin/vouch" "$t/share/doc/vouch"
clean PYTHONPATH="$t/python" /usr/bin/python3 -c 'import vouch' || fail "tarball: import vouch with PYTHONPATH=python"
leg tarball "$t/bin/vouch" /usr/bin/python3 PYTHONPATH="$t/python"
echo "release check: tarball runs ($(clean "$t/bin/vouch" --version))"

# 2. The wheel, in a fresh virtual environment and with pip --target, no index, no root needed.
clean /usr/bin/python3 -m venv "$work/venv"
clean "$work/venv/bin/python" -m pip install -q --no-index --no-cache-dir "$whl" ||
  fail "wheel: pip install --no-index into a venv"
clean "$work/venv/bin/vouch" --version | grep -q '^vouch ' || fail "wheel: vouch --version from the venv"
n=$(one "$work/venv/lib/python3*/site-packages/vouch/_native/bin/vouch")
bundled "$n" "$(dirname "$(dirname "$n")")/lib"
docs wheel "$work/venv/bin/vouch" "$(dirname "$(dirname "$n")")/share/doc/vouch"
leg wheel "$work/venv/bin/vouch" "$work/venv/bin/python"
clean /usr/bin/python3 -m pip install -q --no-index --no-cache-dir --target "$work/target" "$whl" ||
  fail "wheel: pip install --target"
clean PYTHONPATH="$work/target" "$work/target/bin/vouch" --version | grep -q '^vouch ' ||
  fail "wheel: vouch --version from pip --target"
echo "release check: wheel installs (venv and --target) and runs"

# 3. The .deb: only libc6 as dependency; installed and removed where we are root, else unpacked.
dep=$(dpkg-deb -f "$deb" Depends)
[ "$dep" = "libc6 (>= 2.$nn)" ] || fail ".deb depends on '$dep', not only libc6 (>= 2.$nn)"
if [ "$(id -u)" -eq 0 ] && ! dpkg -s vouch >/dev/null 2>&1; then
  dpkg -i "$deb" >/dev/null
  trap 'dpkg -r vouch >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  clean vouch --version | grep -q '^vouch ' || fail ".deb: /usr/bin/vouch --version"
  bundled /opt/vouch/bin/vouch /opt/vouch/lib
  docs deb /usr/bin/vouch /opt/vouch/share/doc/vouch
  # No PYTHONPATH: the system Python finds the module through the .deb's vouch.pth.
  clean /usr/bin/python3 -c 'import vouch' || fail ".deb: import vouch in the system Python (vouch.pth)"
  leg deb /usr/bin/vouch /usr/bin/python3
  dpkg -r vouch >/dev/null
  [ ! -e /usr/bin/vouch ] || fail ".deb: dpkg -r left /usr/bin/vouch"
  echo "release check: .deb installs, runs and removes"
else
  dpkg-deb -x "$deb" "$work/deb"
  clean "$work/deb/opt/vouch/bin/vouch" --version | grep -q '^vouch ' || fail ".deb: unpacked vouch --version"
  [ "$(cat "$work/deb/usr/lib/python3/dist-packages/vouch.pth")" = /opt/vouch/python ] ||
    fail ".deb: no vouch.pth naming /opt/vouch/python"
  clean PYTHONPATH="$work/deb/opt/vouch/python" /usr/bin/python3 -c 'import vouch' ||
    fail ".deb: import vouch from the unpacked /opt/vouch/python"
  docs deb "$work/deb/opt/vouch/bin/vouch" "$work/deb/opt/vouch/share/doc/vouch"
  echo "release check: .deb unpacked and runs (not installed: not root, or a vouch package is installed)"
fi
echo "release check: all passed (glibc >= 2.$nn)"
