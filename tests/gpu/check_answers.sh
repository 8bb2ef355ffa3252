#!/usr/bin/env bash
# GPU check for issue 11 (gates that know their noise, telemetry readings), on a machine with
# an NVIDIA GPU:   tests/gpu/check_answers.sh OUTDIR
# 1. nvmlDeviceGetSamples on real NVML: a window polled at 10 ms and one at 250 ms; the folds'
#    driver_samples (power, utilization) and driver_samples_errors (clocks: NOT_FOUND on the
#    H200) are printed, and the 250 ms window must warn that it polled too slowly.
# 2. The noise-aware gate: a baseline of 5 trials, then three A/A gates of 3 legs on the same
#    work (each must exit 0 or 2, never 1), and one with 8 % more work (must exit 1).
# Never touches clocks. status.txt lists each step.
set -u
OUT=${1:?usage: check_answers.sh OUTDIR}
mkdir -p "$OUT"
VOUCH=${VOUCH:-./build/vouch}
BUSY=${BUSY:-$OUT/busy}
export VOUCH_LOCK_FILE=${VOUCH_LOCK_FILE:-/tmp/vouch-gpu-check.lock}
: > "$OUT/status.txt"
fail=0
[ -x "$BUSY" ] || nvcc -O3 -arch=sm_90 -o "$BUSY" tests/gpu/busy.cu || exit 1
. "$(dirname "$0")/common.sh"
W="--mode compute --seconds 4"
step poll_10ms 0 "$VOUCH" clock sample --out "$OUT/poll10" -- "$BUSY" $W
step poll_250ms 0 "$VOUCH" clock sample --interval-ms 250 --min-busy-readings 10 --out "$OUT/poll250" -- "$BUSY" $W
grep -q "slower than the driver's update period" "$OUT/poll_250ms.err" "$OUT/poll_250ms.out" \
  || { echo "poll_250ms: no slow-poll warning" | tee -a "$OUT/status.txt"; fail=1; }
for d in poll10 poll250; do
  python3 -c "import json,sys; f=json.load(open('$OUT/$d/window.json'))['gpus'][0]['fold']; print('$d', 'readings', f['readings'], 'missed', f['missed_readings'], 'period_s', f['update_period_s'], 'driver', f.get('driver_samples'), 'errors', f.get('driver_samples_errors'))" | tee -a "$OUT/status.txt"
done
step baseline 0 "$VOUCH" baseline --trials 5 --baseline "$OUT/baseline.json" --headline iters_per_s \
  --out "$OUT/baseline-record" -- "$BUSY" $W
for i in 1 2 3; do
  "$VOUCH" gate --baseline "$OUT/baseline.json" --warmup 1 --reps 3 --out "$OUT/gate-aa$i" -- "$BUSY" $W \
    > "$OUT/gate_aa$i.out" 2> "$OUT/gate_aa$i.err"
  rc=$?
  echo "gate_aa$i rc=$rc (0 or 2 wanted, never 1)" | tee -a "$OUT/status.txt"
  [ "$rc" = 0 ] || [ "$rc" = 2 ] || fail=1
done
step gate_8pct 1 "$VOUCH" gate --baseline "$OUT/baseline.json" --warmup 1 --reps 3 --out "$OUT/gate-8pct" \
  -- "$BUSY" $W --work-scale 1.08
grep -h "interval\|noise:\|gate:" "$OUT"/gate_*.out | tee -a "$OUT/status.txt"
exit $fail
