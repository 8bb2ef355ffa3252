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
# CPU time (user + sys of the whole process tree, which a loaded machine's queue does not
# inflate as wall time): the marginal CPU of a leg of `true` (runs of LEGS and 3 x LEGS legs,
# the difference over 2 x LEGS, so start-up cancels) against hyperfine's marginal run.
cpu() { python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{(r.ru_utime + r.ru_stime) * 1e3:.1f}")' "$@"; }
vcpu() { rm -rf "$tmp/c"; VOUCH_LOCK_FILE=$tmp/lock cpu "$VOUCH" --sim "$SIM" run \
  --min-busy-readings 1 --warmup 0 --reps "$1" --out "$tmp/c" -- true; }
hcpu() { cpu hyperfine -N --runs "$1" --warmup 0 true; }
for r in $(seq 1 "$ROUNDS"); do
  v1=$(vcpu "$LEGS"); h1=$(hcpu "$LEGS"); v3=$(vcpu $((3 * LEGS))); h3=$(hcpu $((3 * LEGS)))
  python3 -c 'import sys; v1, h1, v3, h3 = map(float, sys.argv[1:5]); n = 2 * int(sys.argv[5])
v, h = (v3 - v1) / n, (h3 - h1) / n
print(f"cpu round {sys.argv[6]}: a leg of true costs vouch {v:.2f} ms of CPU, a run hyperfine "
      f"{h:.2f} ms (whole process trees, marginal): difference {v - h:+.2f} ms")' \
    "$v1" "$h1" "$v3" "$h3" "$LEGS" "$r"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
