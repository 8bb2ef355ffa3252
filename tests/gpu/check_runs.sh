#!/usr/bin/env bash
# GPU check for runs, gate and A/B (issues 3 and 4), on a machine with an NVIDIA GPU:
#   tests/gpu/check_runs.sh OUTDIR
# vouch run on tests/gpu/busy.cu (with and without measured-region markers), a baseline and
# two gates (same work: pass; 5 % more work per iteration: fail), then vouch ab as A/A and
# as A/B with B doing 3 % more work. Never touches clocks. status.txt lists each step.
set -u
OUT=${1:?usage: check_runs.sh OUTDIR}
mkdir -p "$OUT"
VOUCH=${VOUCH:-./build/vouch}
BUSY=${BUSY:-$OUT/busy}
export VOUCH_LOCK_FILE=${VOUCH_LOCK_FILE:-/tmp/vouch-gpu-check.lock}
: > "$OUT/status.txt"
fail=0
[ -x "$BUSY" ] || nvcc -O3 -arch=sm_90 -o "$BUSY" tests/gpu/busy.cu || exit 1
. "$(dirname "$0")/common.sh"
W="--mode compute --seconds 4"
step run 0 "$VOUCH" run --warmup 1 --reps 3 --out "$OUT/run" -- "$BUSY" $W
step region_unmarked 1 "$VOUCH" run --warmup 0 --reps 1 --out "$OUT/region-unmarked" -- "$BUSY" $W --idle-before 6
step region_marked 0 "$VOUCH" run --warmup 0 --reps 1 --out "$OUT/region-marked" -- "$BUSY" $W --idle-before 6 --markers
step baseline 0 "$VOUCH" baseline --trials 3 --baseline "$OUT/baseline.json" --headline iters_per_s \
  --out "$OUT/baseline-record" -- "$BUSY" $W
step gate_same 0 "$VOUCH" gate --baseline "$OUT/baseline.json" --warmup 1 --reps 2 --out "$OUT/gate-same" \
  --markdown "$OUT/gate-same.md" -- "$BUSY" $W
step gate_more_work 1 "$VOUCH" gate --baseline "$OUT/baseline.json" --warmup 1 --reps 2 --out "$OUT/gate-more" \
  --markdown "$OUT/gate-more.md" -- "$BUSY" $W --work-scale 1.05
step ab_aa 0 "$VOUCH" ab --a-name A --b-name A2 --a-env RUN=a --b-env RUN=b --pairs 8 --seed 1 --band 1 \
  --headline iters_per_s --out "$OUT/ab-aa" --markdown "$OUT/ab-aa.md" -- "$BUSY" $W
step ab_more_work 0 "$VOUCH" ab --a "$BUSY $W" --b "$BUSY $W --work-scale 1.03" --pairs 8 --seed 2 --band 1 \
  --headline iters_per_s --out "$OUT/ab-3pct" --markdown "$OUT/ab-3pct.md"
grep -h "A/B verdict\|ratio \|SM clock" "$OUT"/ab_*.out | tee -a "$OUT/status.txt"
for d in run region-unmarked region-marked baseline-record gate-same gate-more ab-aa ab-3pct; do
  find "$OUT/$d" -name samples.jsonl -delete 2>/dev/null  # keep summaries; the raw samples are large
done
echo "fail=$fail" | tee -a "$OUT/status.txt"
exit $fail
