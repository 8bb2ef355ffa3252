#!/usr/bin/env bash
# Long runs stay linear: `vouch run --reps N -- true` on the simulated device for a short and a
# long run (default 10 and 1,000 legs), each leg's overhead beyond the command (time between
# leg starts minus the leg's own wall time, from the record) near leg 10 and near the last
# leg, and the bytes vouch wrote (every write(2)/pwrite, counted by strace in a second run of
# each size). The reference is the same binary's short run: overhead at leg ~1,000 against
# leg ~10 and bytes per leg of the long run against the short one. OLD=path/to/vouch adds the
# same rows for another build (before/after in one run).
#   bench/run/scaling.sh [VOUCH] [SHORT] [LONG]
set -euo pipefail
VOUCH=${1:-./build-rel/vouch}
SHORT=${2:-10}
LONG=${3:-1000}
SIM=tests/data/sim/h200_copy_busy.jsonl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# $(date -u +%FT%TZ) $(uname -n) nproc=$(nproc) load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| build | legs | wall | overhead/leg near leg 10 (median of legs 5-14) | near the last leg (median of the last 10) | bytes written | bytes/leg |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
run_one() {  # LABEL VOUCH N
  local label=$1 bin=$2 n=$3 d=$tmp/$1-$3
  local t0 t1
  t0=$(date +%s.%N)
  VOUCH_LOCK_FILE=$tmp/lock "$bin" --sim "$SIM" run --min-busy-readings 1 --warmup 0 --reps "$n" \
    --out "$d" -- true > /dev/null 2>&1 || true
  t1=$(date +%s.%N)
  VOUCH_LOCK_FILE=$tmp/lock strace -f -qq -e trace=write,pwrite64,writev -e signal=none -o "$tmp/st" \
    "$bin" --sim "$SIM" run --min-busy-readings 1 --warmup 0 --reps "$n" --out "$d.st" -- true \
    > /dev/null 2>&1 || true
  local bytes
  bytes=$(awk '/= [0-9]+$/ {s += $NF} END {printf "%d", s}' "$tmp/st")
  rm -rf "$d.st"
  python3 - "$d/record.json" "$label" "$n" "$t0" "$t1" "$bytes" <<'PY'
import json, statistics, sys
rec = json.load(open(sys.argv[1]))
legs = rec["legs"]
n = int(sys.argv[3])
starts = [l["result"]["start_unix_ns"] for l in legs]
walls = [l["result"]["wall_ns"] for l in legs]
over = [(b - a - w) / 1e6 for a, b, w in zip(starts, starts[1:], walls)]
early = statistics.median(over[4:14]) if len(over) >= 14 else statistics.median(over)
late = statistics.median(over[-10:])
wall = float(sys.argv[5]) - float(sys.argv[4])
b = int(sys.argv[6])
print(f"| {sys.argv[2]} | {len(legs)} of {n} | {wall:.1f} s | {early:.2f} ms | {late:.2f} ms | "
      f"{b/1e6:.2f} MB | {b/max(len(legs),1)/1e3:.1f} kB |")
PY
}
for n in "$SHORT" "$LONG"; do
  run_one new "$VOUCH" "$n"
  [ -n "${OLD:-}" ] && run_one old "$OLD" "$n"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
