#!/usr/bin/env bash
# vouch's overhead per leg beyond the command's own time, against hyperfine's per-run
# overhead on the same trivial command, alternated in one run.
#   bench/run/overhead.sh [VOUCH] [LEGS] [ROUNDS]
# vouch runs on the simulated device (no GPU here): the sampler, window, metrics and record
# are all real; only NVML is replaced. Per-leg overhead = (time between leg starts) minus
# (the leg's own wall time), from the record. hyperfine -N runs `true` without a shell.
set -euo pipefail
VOUCH=${1:-./build/vouch}
LEGS=${2:-30}
ROUNDS=${3:-3}
SIM=tests/data/sim/h200_copy_busy.jsonl
tmp=$(mktemp -d)
for r in $(seq 1 "$ROUNDS"); do
  hyperfine -N --runs "$LEGS" --warmup 3 --export-json "$tmp/h$r.json" true > /dev/null 2>&1
  VOUCH_LOCK_FILE=$tmp/lock "$VOUCH" --sim "$SIM" run --min-busy-readings 1 --warmup 0 --reps "$LEGS" \
    --out "$tmp/v$r" -- true > /dev/null 2>&1 || true
  python3 - "$tmp/h$r.json" "$tmp/v$r/record.json" "$r" <<'PY'
import json, sys, statistics
h = json.load(open(sys.argv[1]))["results"][0]
rec = json.load(open(sys.argv[2]))
legs = rec["legs"]
starts = [l["result"]["start_unix_ns"] for l in legs]
walls = [l["result"]["wall_ns"] for l in legs]
gaps = [(b - a) / 1e6 for a, b in zip(starts, starts[1:])]
own = statistics.mean(walls[:-1]) / 1e6
per_leg = statistics.mean(gaps)
print(f"round {sys.argv[3]}: hyperfine true mean {h['mean']*1e3:.3f} ms/run; "
      f"vouch leg-to-leg {per_leg:.3f} ms, command's own wall {own:.3f} ms, "
      f"vouch overhead beyond the command {per_leg - own:.3f} ms/leg; "
      f"difference to hyperfine's whole run {per_leg - own - h['mean']*1e3:+.3f} ms")
PY
done
rm -rf "$tmp"
