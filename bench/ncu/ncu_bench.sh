#!/usr/bin/env bash
# `vouch ncu` against Python's csv module reading the same Nsight Compute CSV (issue 39), in
# the same run: CPU time (user + system) and peak RSS of each child (wait4's rusage),
# alternated rounds, the load average written beside each round.
#   SIZE (MB, default 300): the large file of each page (raw, details), built from the real
#     exports in tests/fixtures by gen_ncu.py; ROUNDS rounds (default 3) on each;
#   CURVE (MB, default 5): the cost curve at CURVE, 4x and 16x (each page), best of 3.
# Python is the interpreter itself (sys.executable), not a pyenv shim (~660 ms a call).
#
# usage: bench/ncu/ncu_bench.sh [VOUCH] [WORKDIR]        (from the repository root)
set -euo pipefail
VOUCH=${1:-./build/vouch}
W=${2:-$(mktemp -d /tmp/vouch-ncu-bench.XXXXXX)}
SIZE=${SIZE:-300}
ROUNDS=${ROUNDS:-3}
CURVE=${CURVE:-5}
PAGES=${PAGES:-"raw details"}
# The interpreter itself: python3 may be a pyenv shim, a script that costs ~0.4-0.7 s a call.
PY=$(python3 -c 'import sys; print(sys.executable)')
HERE=$(dirname "$0")
mkdir -p "$W"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$W"' EXIT
PYCSV='import csv, sys
n = 0
with open(sys.argv[1], newline="") as f:
    for row in csv.reader(f):
        n += 1
print(n)'

measure() { "$PY" "$HERE/measure.py" "$@"; }
# round FILE TAG N: one round (the order alternates with N); prints one line.
round() {
  local file=$1 tag=$2 n=$3 v p
  local bytes load
  bytes=$(stat -c %s "$file")
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  if [ $((n % 2)) = 1 ]; then p=$(measure "$PY" -c "$PYCSV" "$file"); v=$(measure "$VOUCH" ncu --json "$file")
  else v=$(measure "$VOUCH" ncu --json "$file"); p=$(measure "$PY" -c "$PYCSV" "$file"); fi
  awk -v tag="$tag" -v n="$n" -v v="$v" -v p="$p" -v b="$bytes" -v load="$load" 'BEGIN{
    split(v, a, " "); split(p, q, " ");
    printf "%-8s round %s: vouch %.3f s %7.1f MiB | python csv %.3f s %7.1f MiB | python/vouch CPU %.2fx | vouch RSS/file %.3f | load %s\n",
      tag, n, a[1], a[2], q[1], q[2], q[1] / a[1], a[2] * 1048576 / b, load }'
}

echo "ncu bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, vouch $("$VOUCH" --version 2>&1 | head -1), $PY"
for page in $PAGES; do
  f="$W/$page.csv"
  "$PY" "$HERE/gen_ncu.py" "tests/fixtures/ncu_$page.csv" "$f" --mb "$SIZE"
  for r in $(seq "$ROUNDS"); do round "$f" "$page" "$r"; done
  rm -f "$f"
done
echo "cost curve (best of 3 CPU seconds each; RSS of the last):"
for page in $PAGES; do
  for mult in 1 4 16; do
    f="$W/curve.csv"
    mb=$(awk -v c="$CURVE" -v m="$mult" 'BEGIN{print c * m}')
    "$PY" "$HERE/gen_ncu.py" "tests/fixtures/ncu_$page.csv" "$f" --mb "$mb" > /dev/null
    best_v=999 best_p=999 rss=0
    for r in 1 2 3; do
      v=$(measure "$VOUCH" ncu --json "$f"); p=$(measure "$PY" -c "$PYCSV" "$f")
      best_v=$(awk -v a="$best_v" -v b="${v% *}" 'BEGIN{print (b < a ? b : a)}')
      best_p=$(awk -v a="$best_p" -v b="${p% *}" 'BEGIN{print (b < a ? b : a)}')
      rss=${v#* }
    done
    awk -v page="$page" -v m="$mult" -v mb="$mb" -v v="$best_v" -v p="$best_p" -v rss="$rss" 'BEGIN{
      printf "  %-7s %2sx (%4.0f MB): vouch %.3f s (%.2f ms/MB, %.1f MiB RSS) | python csv %.3f s | python/vouch %.2fx\n",
        page, m, mb, v, v * 1000 / mb, rss, p, p / v }'
    rm -f "$f"
  done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
