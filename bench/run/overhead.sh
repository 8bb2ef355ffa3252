#!/usr/bin/env bash
# vouch's overhead per leg beyond the command's own time, against hyperfine's per-run
# overhead on the same trivial command, alternated in one run.
#   bench/run/overhead.sh [VOUCH] [LEGS] [ROUNDS]
# SIM_SAMPLES=N replays a long stream instead (the fixture repeated to N samples, 10 ms apart):
# the simulated device's lookups must not grow with it. Start-up = the first leg's start minus
# the moment vouch was launched (reading the stream, the preflight, the run folder).
# vouch runs on the simulated device (no GPU here): the sampler, window, metrics and record
# are all real; only NVML is replaced. Per-leg overhead = (time between leg starts) minus
# (the leg's own wall time), from the record. hyperfine -N runs `true` without a shell.
set -euo pipefail
VOUCH=${1:-./build/vouch}
LEGS=${2:-30}
ROUNDS=${3:-3}
SIM=tests/data/sim/h200_copy_busy.jsonl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# $(date -u +%FT%TZ) $(uname -n) nproc=$(nproc) load: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "${SIM_SAMPLES:-}" ]; then
  python3 - "$SIM" "$tmp/long.jsonl" "$SIM_SAMPLES" <<'PY'
import json, sys
src = [json.loads(l) for l in open(sys.argv[1]) if l.strip() and "processes" not in l]
n = int(sys.argv[3])
with open(sys.argv[2], "w") as out:
    for i in range(n):
        s = dict(src[i % len(src)])
        s["t_s"] = round(i * 0.01, 6)
        s["unix_s"] = round(1800000000.0 + i * 0.01, 6)
        out.write(json.dumps(s, separators=(",", ":")) + "\n")
PY
  SIM=$tmp/long.jsonl
  echo "# simulated stream: $SIM_SAMPLES samples ($(du -h "$SIM" | cut -f1))"
fi
hyper() { hyperfine -N --runs "$LEGS" --warmup 3 --export-json "$tmp/h$r.json" true > /dev/null 2>&1; }
for r in $(seq 1 "$ROUNDS"); do
  [ $((r % 2)) -eq 1 ] && hyper  # alternate the order: hyperfine first in odd rounds
  launch=$(date +%s.%N)
  VOUCH_LOCK_FILE=$tmp/lock "$VOUCH" --sim "$SIM" run --min-busy-readings 1 --warmup 0 --reps "$LEGS" \
    --out "$tmp/v$r" -- true > /dev/null 2>&1 || true
  [ $((r % 2)) -eq 0 ] && hyper
  python3 - "$tmp/h$r.json" "$tmp/v$r/record.json" "$r" "$launch" <<'PY'
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
      f"difference to hyperfine's whole run {per_leg - own - h['mean']*1e3:+.3f} ms; "
      f"start-up {(starts[0] / 1e9 - float(sys.argv[4])) * 1e3:.0f} ms")
PY
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
