#!/usr/bin/env bash
# GPU check for the release wheel (issue 25), on the GPU machine, from the wheel alone (not the
# build tree):
#   bash tests/gpu/check_wheel.sh dist/vouch-*.whl OUTDIR
# pip install --no-index --target a fresh folder; vouch --version; vouch doctor; then
# vouch ab --gpu-trace --headline gpu.active_ns_per.decode_step of tests/gpu/decode_region.py
# (marked only with vouch.region; B does +10 % GPU work per step): the verdict must be B slower.
# Records the seconds from pip install to the first verdict. Never touches clocks.
set -u
WHL=${1:?usage: check_wheel.sh WHEEL OUTDIR}
OUT=${2:?usage: check_wheel.sh WHEEL OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PY=${PYTHON:-python3}
: >"$OUT/status.txt"
note() { echo "$*" | tee -a "$OUT/status.txt"; }
fail=0
date -u +%Y-%m-%dT%H:%M:%SZ >"$OUT/date.txt"
(nvidia-smi; nproc; uptime; "$PY" --version; "$PY" -c 'import torch; print(torch.__version__)') >"$OUT/machine.txt" 2>&1
DEST=${VOUCH_WHEEL_DEST:-$(mktemp -d /tmp/vouch-wheel.XXXXXX)}
t0=$(date +%s.%N)
"$PY" -m pip install --no-index --no-deps --no-cache-dir --target "$DEST" "$WHL" >"$OUT/pip.txt" 2>&1 ||
  { note "FAIL: pip install --no-index --target"; exit 1; }
t_pip=$(date +%s.%N)
export PATH=$DEST/bin:$PATH PYTHONPATH=$DEST${PYTHONPATH:+:$PYTHONPATH}
export VOUCH_LOCK_FILE=/tmp/vouch-wheel-check.lock
note "vouch: $(command -v vouch); pip install took $(awk "BEGIN{printf \"%.1f\", $t_pip - $t0}") s"
vouch --version >"$OUT/version.txt" 2>&1 || { note "FAIL: vouch --version"; fail=1; }
note "$(cat "$OUT/version.txt")"
vouch doctor >"$OUT/doctor.txt" 2>&1
note "vouch doctor: exit $?"
DEC="$PY $HERE/decode_region.py --seconds 4"
vouch ab --gpu-trace --a "$DEC --layers 20" --b "$DEC --layers 22" --max-pairs 8 --seed 3 --band 1 \
  --headline gpu.active_ns_per.decode_step --out "$OUT/ab" --markdown "$OUT/ab.md" \
  >"$OUT/ab.out" 2>"$OUT/ab.err"
rc=$?
t_verdict=$(date +%s.%N)
note "vouch ab --gpu-trace: exit $rc"
grep -q "B slower" "$OUT/ab.out" || { note "FAIL: the A/B did not say B slower"; fail=1; }
grep -h "A/B verdict\|ratio B/A\|pairs" "$OUT/ab.out" | head -10 >>"$OUT/status.txt"
note "seconds from pip install to the first verdict: $(awk "BEGIN{printf \"%.1f\", $t_verdict - $t0}")"
# The legs' raw traces and samples are large; their folds stay.
find "$OUT/ab" \( -name samples.jsonl -o -name 'gpu-trace.*.jsonl' \) -delete 2>/dev/null
[ $fail = 0 ] && note "check_wheel: all ok" || note "check_wheel: FAILED"
exit $fail
