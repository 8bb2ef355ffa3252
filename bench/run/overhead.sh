#!/usr/bin/env bash
# vouch's overhead per leg beyond the command's own time, against hyperfine's per-run
# overhead on the same trivial command, alternated in one run.
#   bench/run/overhead.sh [VOUCH] [LEGS] [ROUNDS]
# SIM_SAMPLES=N replays a long stream instead (the fixture repeated to N samples, 10 ms apart):
# the simulated device's lookups must not grow with it. Start-up = the whole run's wall time less
# its legs' marginal cost (reading the stream, the preflight, the run folder).
# vouch runs on the simulated device (no GPU here): the sampler, window, metrics and record
# are all real; only NVML is replaced. Per-leg cost = the marginal wall (and CPU) time of one
# more run of `true`, measured the same way for both tools. hyperfine -N runs it without a shell.
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
# Wall time, the same way on both sides (issue 39: the earlier figure subtracted the command's
# own time on vouch's side only, which flattered vouch by 5-9 ms): each tool's whole process
# runs LEGS and 3 x LEGS times `true`; the difference over 2 x LEGS is its marginal wall time per
# run, start-up cancelled, the command's own time inside both. Order alternated per round.
wall() { python3 -c 'import subprocess, sys, time
t = time.perf_counter()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(f"{(time.perf_counter() - t) * 1e3:.3f}")' "$@"; }
vwall() { rm -rf "$tmp/w"; VOUCH_LOCK_FILE=$tmp/lock wall "$VOUCH" --sim "$SIM" run \
  --min-busy-readings 1 --warmup 0 --reps "$1" --out "$tmp/w" -- true; }
hwall() { wall hyperfine -N --runs "$1" --warmup 0 true; }
for r in $(seq 1 "$ROUNDS"); do
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  if [ $((r % 2)) -eq 1 ]; then
    h1=$(hwall "$LEGS"); v1=$(vwall "$LEGS"); h3=$(hwall $((3 * LEGS))); v3=$(vwall $((3 * LEGS)))
  else
    v1=$(vwall "$LEGS"); h1=$(hwall "$LEGS"); v3=$(vwall $((3 * LEGS))); h3=$(hwall $((3 * LEGS)))
  fi
  python3 -c 'import sys; v1, h1, v3, h3 = map(float, sys.argv[1:5]); n = 2 * int(sys.argv[5])
v, h = (v3 - v1) / n, (h3 - h1) / n
print(f"wall round {sys.argv[6]} (load {sys.argv[7]}): a leg of true takes vouch {v:.2f} ms, a "
      f"run hyperfine {h:.2f} ms (marginal, both whole processes): difference {v - h:+.2f} ms; "
      f"vouch start-up about {v1 - int(sys.argv[5]) * v:.0f} ms")' \
    "$v1" "$h1" "$v3" "$h3" "$LEGS" "$r" "$load"
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
