#!/usr/bin/env bash
# GPU check for issue 23 (decisive verdicts), on a machine with an NVIDIA GPU and PyTorch, with
# the tracer (VOUCH on PATH or $VOUCH; its libvouch_cupti.so beside it):
#   PART=gate bash tests/gpu/check_seqgate.sh OUTDIR   (about 6 minutes)
#   PART=ab   bash tests/gpu/check_seqgate.sh OUTDIR   (about 6 minutes)
# A host-bound decode loop marked with `import vouch` (tests/gpu/decode_region.py, 5 s legs:
# a leg's window needs 3 s of GPU work):
#   gate: a traced baseline, then gates of unchanged code on GPU time per step, fixed (3 legs)
#         and sequential (--max-reps 9), each with its MDE line; a planted +10 % GPU work per
#         step that the sequential gate must fail at its first look; the unchanged code gated
#         on the wall clock (tok/s, fail at 3 %), where host noise keeps it undecided longer.
#   ab:   a sequential A/B on GPU time per step (B +10 % work: decided at the first look), the
#         same A/B on tok/s (the wall clock), and an A/A (same code both arms) that must not
#         claim a direction.
# status.txt: one line per step with its exit and legs, and its look/verdict/mde lines. Never
# touches clocks.
set -u
OUT=${1:?usage: check_seqgate.sh OUTDIR}
PART=${PART:-gate}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
VOUCH=${VOUCH:-vouch}
PY=${PYTHON:-python3}
SECS=${SECS:-5}
export VOUCH_LOCK_FILE=${VOUCH_LOCK_FILE:-/tmp/vouch-seqgate.lock}
touch "$OUT/status.txt"
note() { echo "$*" | tee -a "$OUT/status.txt"; }
DEC="$PY $HERE/decode_region.py --seconds $SECS --host-noise-ms 2"
G=gpu.active_ns_per.decode_step
step() { # step NAME CMD...: runs CMD, notes its exit, wall time, the look, verdict and MDE lines
  local name=$1 t0=$SECONDS
  shift
  "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
  local rc=$?
  note "$name: exit $rc; $((SECONDS - t0)) s; measured legs $(grep -c '"role": *"measured"' "$OUT/$name/record.json" 2>/dev/null || echo ?)"
  grep -h 'look \|mde\|verdict\|inconclusive\|PASS\|FAIL\|no change\|slower\|faster\|modes\|host\|refused' \
    "$OUT/$name.out" "$OUT/$name.err" | grep -v 'output is kept' | head -14 | sed 's/^/    /' |
    tee -a "$OUT/status.txt"
  return $rc
}
if [ "$PART" = gate ]; then
  step base "$VOUCH" baseline --gpu-trace --trials 5 --headline $G --out "$OUT/base" \
    --baseline "$OUT/base.json" -- $DEC --layers 20
  step gate-fixed "$VOUCH" gate --gpu-trace --baseline "$OUT/base.json" --reps 3 --out "$OUT/gate-fixed" \
    -- $DEC --layers 20
  step gate-seq "$VOUCH" gate --gpu-trace --baseline "$OUT/base.json" --reps 3 --max-reps 9 \
    --out "$OUT/gate-seq" -- $DEC --layers 20
  step gate-planted "$VOUCH" gate --gpu-trace --baseline "$OUT/base.json" --reps 3 --max-reps 9 \
    --out "$OUT/gate-planted" -- $DEC --layers 22
  # The same unchanged code gated on the wall clock: the host noise GPU time does not see.
  step gate-wall "$VOUCH" gate --gpu-trace --baseline "$OUT/base.json" --reps 3 --max-reps 9 \
    --threshold decode.tokens_per_s=fail:3 --out "$OUT/gate-wall" -- $DEC --layers 20
else
  step ab-gpu "$VOUCH" ab --gpu-trace --a "$DEC --layers 20" --b "$DEC --layers 22" --max-pairs 8 \
    --seed 3 --band 1 --headline $G --out "$OUT/ab-gpu" --markdown "$OUT/ab-gpu.md"
  step ab-wall "$VOUCH" ab --gpu-trace --a "$DEC --layers 20" --b "$DEC --layers 22" --max-pairs 8 \
    --seed 3 --band 1 --headline decode.tokens_per_s --out "$OUT/ab-wall" --markdown "$OUT/ab-wall.md"
  step aa "$VOUCH" ab --gpu-trace --a-env RUN=a --b-env RUN=b --max-pairs 8 --seed 4 --band 1 \
    --headline $G --out "$OUT/aa" --markdown "$OUT/aa.md" -- $DEC --layers 20
fi
find "$OUT" \( -name samples.jsonl -o -name 'gpu-trace.*.jsonl' \) -delete 2>/dev/null
exit 0
