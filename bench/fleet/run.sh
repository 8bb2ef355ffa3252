#!/usr/bin/env bash
# Slurm's cost to vouch fleet, on the local test cluster (scripts/slurm/start.sh, 12 nodes on
# this machine), the simulated device and a leg that sleeps LEG_S (0.4 s) and reports tok_s:
#  1. overhead per block: `vouch fleet ab --nodes 1` against plain `vouch ab`, same pairs;
#  2. fan-out: `vouch fleet ab --nodes 8` against `--nodes 1` for the same number of pairs.
# Each is a ratio of wall times measured in the same run. Usage: bench/fleet/run.sh [VOUCH]
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
vouch=$(realpath "${1:-build/vouch}")
pairs=${PAIRS:-32}
leg_s=${LEG_S:-0.4}
work=$(mktemp -d /tmp/vouch-bench-fleet.XXXXXX)
slurm="$work/slurm"
trap 'bash "$repo/scripts/slurm/stop.sh" "$slurm"; rm -rf "$work"' EXIT
bash scripts/slurm/start.sh "$slurm" >/dev/null
export SLURM_CONF=$slurm/slurm.conf
for i in $(seq 1 12); do cp tests/data/sim/h200_copy_busy.jsonl "$work/sim-n$i.jsonl"; done
cp tests/data/sim/h200_copy_busy.jsonl "$work/sim.jsonl"
cat >"$work/leg.sh" <<LEG
#!/bin/sh
sleep $leg_s
echo "{\"name\":\"tok_s\",\"value\":\$SPEED,\"unit\":\"tok/s\",\"better\":\"higher\"}" >> "\$VOUCH_METRICS"
LEG
chmod +x "$work/leg.sh"
common=(--min-busy-readings 3 --band 1 --a-env SPEED=100 --b-env SPEED=105 --cwd "$work")
now() { date +%s.%N; }
run() {  # NAME CMD... : prints NAME seconds; a verdict of any kind (exit 0, 2, 3) is a run
  local name=$1 t0 t1 rc=0
  shift
  t0=$(now)
  "$@" >"$work/$name.log" 2>&1 || rc=$?
  t1=$(now)
  [ "$rc" -le 3 ] || { echo "bench/fleet: $name failed (exit $rc):" >&2; tail -5 "$work/$name.log" >&2; exit 1; }
  echo "$name $(python3 -c "print($t1 - $t0)")"
}
blocks=$((pairs / 2))
cd "$work"
local_s=$(VOUCH_SIM=$work/sim.jsonl VOUCH_LOCK_FILE=$work/lock run local "$vouch" ab --pairs "$pairs" --seed 1 --out local "${common[@]}" -- ./leg.sh | cut -d' ' -f2)
one_s=$(VOUCH_SIM=$work/sim-%n.jsonl VOUCH_LOCK_FILE=$work/lock-%n run one "$vouch" fleet ab --poll-s 0.2 --gres gpu:1 --nodes 1 --pairs "$pairs" --seed 1 --dir one "${common[@]}" -- ./leg.sh | cut -d' ' -f2)
eight_s=$(VOUCH_SIM=$work/sim-%n.jsonl VOUCH_LOCK_FILE=$work/lock-%n run eight "$vouch" fleet ab --poll-s 0.2 --gres gpu:1 --nodes 8 --pairs "$pairs" --seed 1 --dir eight "${common[@]}" -- ./leg.sh | cut -d' ' -f2)
python3 - "$local_s" "$one_s" "$eight_s" "$blocks" "$pairs" <<'PY'
import sys
local, one, eight, blocks, pairs = map(float, sys.argv[1:])
print(f"pairs {int(pairs)} ({int(blocks)} ABBA blocks), legs of {__import__('os').environ.get('LEG_S','0.4')} s")
print(f"local vouch ab              {local:7.2f} s")
print(f"fleet ab, 1 node            {one:7.2f} s  ratio to local {one/local:.3f}; Slurm overhead {one-local:+.2f} s in all, {(one-local)/blocks:+.3f} s per block")
print(f"fleet ab, 8 nodes           {eight:7.2f} s  ratio to 1 node {eight/one:.3f} (ideal 0.125 + the warm-ups: each node warms up once)")
PY
