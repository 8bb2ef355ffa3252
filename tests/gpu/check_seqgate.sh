#!/usr/bin/env bash
# GPU check for the sequential gate and the MDE (issue 23), on a machine with an NVIDIA GPU and
# PyTorch, with the tracer (VOUCH on PATH or $VOUCH; its libvouch_cupti.so beside it):
#   bash tests/gpu/check_seqgate.sh OUTDIR
# A host-bound decode loop marked with `import vouch` (tests/gpu/decode_region.py): a traced
# baseline, then gates of unchanged code on GPU time per step and on the wall clock (tok/s),
# fixed (3 legs) and sequential (--max-reps), each with its MDE line; and a planted +10 % GPU
# work per step that the GPU-time gate must fail. status.txt: one line per step. Never touches
# clocks.
set -u
OUT=${1:?usage: check_seqgate.sh OUTDIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
VOUCH=${VOUCH:-vouch}
PY=${PYTHON:-python3}
export VOUCH_LOCK_FILE=${VOUCH_LOCK_FILE:-/tmp/vouch-seqgate.lock}
: >"$OUT/status.txt"
note() { echo "$*" | tee -a "$OUT/status.txt"; }
DEC="$PY $HERE/decode_region.py --seconds 3 --host-noise-ms 2"
G=gpu.active_ns_per.decode_step
step() { # step NAME CMD...: runs CMD, notes its exit, the look lines and the MDE lines
  local name=$1
  shift
  "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
  local rc=$?
  note "$name: exit $rc; legs $(grep -c '"role": *"measured"' "$OUT/$name/record.json" 2>/dev/null || echo ?)"
  grep -h 'look \|mde: \|inconclusive\|PASS\|FAIL\|gate:' "$OUT/$name.out" "$OUT/$name.err" | head -8 |
    sed 's/^/    /' | tee -a "$OUT/status.txt"
  return $rc
}
step base "$VOUCH" baseline --gpu-trace --trials 5 --headline $G --out "$OUT/base" \
  --baseline "$OUT/base.json" -- $DEC --layers 20
step gate-fixed "$VOUCH" gate --gpu-trace --baseline "$OUT/base.json" --reps 3 --out "$OUT/gate-fixed" \
  -- $DEC --layers 20
step gate-seq "$VOUCH" gate --gpu-trace --baseline "$OUT/base.json" --reps 3 --max-reps 9 \
  --out "$OUT/gate-seq" -- $DEC --layers 20
step gate-planted "$VOUCH" gate --gpu-trace --baseline "$OUT/base.json" --reps 3 --max-reps 9 \
  --out "$OUT/gate-planted" -- $DEC --layers 22
# The same unchanged code gated on the wall clock: the host noise the GPU time does not see.
step gate-wall "$VOUCH" gate --gpu-trace --baseline "$OUT/base.json" --reps 3 --max-reps 9 \
  --threshold decode.tokens_per_s=fail:3 --out "$OUT/gate-wall" -- $DEC --layers 20
find "$OUT" \( -name samples.jsonl -o -name 'gpu-trace.*.jsonl' \) -delete 2>/dev/null
