#!/usr/bin/env bash
# vouch run's own memory against the number of legs: peak RSS (ru_maxrss of the vouch process,
# which the leg's own processes do not count in: they are its children, reaped by it) of
# `vouch run --reps N -- true` on the simulated device, for SHORT and LONG legs, alternating,
# ROUNDS rounds. Flat means the long run's peak within 10 % of the short one's; the slope is
# (peak at LONG - peak at SHORT) / (LONG - SHORT). OLD=path/to/vouch adds the same rows for
# another build (before/after in one run).
#   bench/run/memory.sh [VOUCH] [SHORT] [LONG] [ROUNDS]   (./build-rel/vouch 100 2000 2)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
VOUCH=${1:-$root/build-rel/vouch}
SHORT=${2:-100}
LONG=${3:-2000}
ROUNDS=${4:-2}
SIM=$root/tests/data/sim/h200_copy_busy.jsonl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# $(date -u +%FT%TZ) $(uname -n) nproc=$(nproc) load: $(cut -d' ' -f1-3 /proc/loadavg)"
peak() {  # VOUCH N -> "peak_kB legs"
  python3 - "$1" "$2" "$SIM" "$tmp" <<'PY'
import json, os, resource, subprocess, sys
vouch, n, sim, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
out = f"{tmp}/run-{os.getpid()}"
env = dict(os.environ, VOUCH_LOCK_FILE=f"{tmp}/lock")
# Only vouch is measured: RUSAGE_CHILDREN of this Python is the max over its waited-for
# children (vouch); vouch's own children (the legs) are vouch's, not this process's.
subprocess.run([vouch, "--sim", sim, "run", "--min-busy-readings", "1", "--warmup", "0",
                "--reps", str(n), "--out", out, "--", "true"], env=env,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
legs = len(json.load(open(f"{out}/record.json"))["legs"])
print(kb, legs)
PY
}
echo "| round | build | peak RSS at $SHORT legs | peak RSS at $LONG legs | long / short | growth per leg |"
echo "| ---: | --- | ---: | ---: | ---: | ---: |"
builds=("new:$VOUCH")
[ -n "${OLD:-}" ] && builds+=("old:$OLD")
for r in $(seq 1 "$ROUNDS"); do
  for b in "${builds[@]}"; do
    label=${b%%:*} bin=${b#*:}
    if [ $((r % 2)) -eq 1 ]; then
      read -r s sl < <(peak "$bin" "$SHORT"); read -r l ll < <(peak "$bin" "$LONG")
    else
      read -r l ll < <(peak "$bin" "$LONG"); read -r s sl < <(peak "$bin" "$SHORT")
    fi
    python3 -c "print(f'| $r | $label | {$s/1024:.1f} MB ($sl legs) | {$l/1024:.1f} MB ($ll legs) | {$l/$s:.3f} | {($l-$s)*1024/max($ll-$sl,1)/1e3:.2f} kB |')"
  done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
