#!/usr/bin/env bash
# Leg executor benchmark: (a) per-leg overhead vs hyperfine on `true`, alternated;
# (b) a 1 GB output flood: vouch's peak RSS and the file's integrity.
# Usage: bench/leg/run.sh [build-dir] [runs-per-round] [rounds] [flood-bytes]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
N="${2:-300}"
ROUNDS="${3:-5}"
FLOOD_BYTES="${4:-1000000000}"
# LEG_BENCH=/path/to/leg_bench uses a prebuilt driver (another machine, no build there).
if [ -n "${LEG_BENCH:-}" ]; then
  BENCH="$LEG_BENCH"
else
  ninja -C "$BUILD" leg_bench >/dev/null
  BENCH="$BUILD/leg_bench"
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
TRUE_BIN="$(type -P true)"

echo "# leg executor benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), kernel $(uname -r), $(ls /proc | grep -c '^[0-9]') processes"
echo "## (a) overhead on '$TRUE_BIN', $ROUNDS alternated rounds of $N runs"
printf '%-6s %14s %14s %16s %12s\n' round hyperfine_ms vouch_run_ms vouch_legwall_ms diff_ms
hf_sum=0; v_sum=0
for r in $(seq 1 "$ROUNDS"); do
  hyperfine -N --warmup 20 --runs "$N" --export-json "$WORK/hf.json" "$TRUE_BIN" >/dev/null 2>&1
  hf=$(python3 -c "import json;print(json.load(open('$WORK/hf.json'))['results'][0]['mean']*1e3)")
  v_json=$("$BENCH" overhead "$N" "$WORK")
  v=$(python3 -c "import json,sys;print(json.loads(sys.argv[1])['run_call']['mean_ms'])" "$v_json")
  vin=$(python3 -c "import json,sys;print(json.loads(sys.argv[1])['leg_wall']['mean_ms'])" "$v_json")
  printf '%-6s %14.3f %14.3f %16.3f %12.3f\n' "$r" "$hf" "$v" "$vin" "$(python3 -c "print($v-$hf)")"
  hf_sum=$(python3 -c "print($hf_sum+$hf)"); v_sum=$(python3 -c "print($v_sum+$v)")
done
python3 -c "hf=$hf_sum/$ROUNDS; v=$v_sum/$ROUNDS; print(f'mean  hyperfine {hf:.3f} ms  vouch Run() {v:.3f} ms  difference {v-hf:+.3f} ms (target: within 5 ms)')"

echo "## (b) flood of $FLOOD_BYTES bytes"
ref=$("$BENCH" gen "$FLOOD_BYTES" | sha256sum | cut -d' ' -f1)
flood_json=$("$BENCH" flood "$FLOOD_BYTES" "$WORK/flood.out")
echo "$flood_json"
size=$(stat -c %s "$WORK/flood.out")
got=$(sha256sum "$WORK/flood.out" | cut -d' ' -f1)
echo "file size $size (expected $FLOOD_BYTES); sha256 $got; reference $ref; $([ "$got" = "$ref" ] && [ "$size" = "$FLOOD_BYTES" ] && echo INTACT || echo MISMATCH)"
[ "$got" = "$ref" ] && [ "$size" = "$FLOOD_BYTES" ]
