#!/usr/bin/env bash
# GPU check for physical plausibility and the driver's throttle counters (issue 38), on a
# machine with an NVIDIA GPU:   tests/gpu/check_roof.sh OUTDIR
# 1. busy --mode memory (a device-to-device copy loop) reports its true bandwidth: the leg
#    passes the roof (the GPU's datasheet memory bandwidth, src/roof);
# 2. the same loop reporting twice its bytes: the leg is refused, with both figures;
# 3. a compute (power-hungry) loop and the copy loop under `clock sample`: each window's
#    throttle line (the NVML violation counters at its edges, docs/throttle.md) is kept.
# Never touches clocks. status.txt lists each step.
set -u
OUT=${1:?usage: check_roof.sh OUTDIR}
mkdir -p "$OUT"
VOUCH=${VOUCH:-./build/vouch}
BUSY=${BUSY:-$OUT/busy}
export VOUCH_LOCK_FILE=${VOUCH_LOCK_FILE:-/tmp/vouch-gpu-check.lock}
: > "$OUT/status.txt"
fail=0
[ -x "$BUSY" ] || nvcc -O3 -arch=sm_90 -o "$BUSY" tests/gpu/busy.cu || exit 1
. "$(dirname "$0")/common.sh"
# The copy loop with its reported bytes times $FACTOR: its metrics go to a side file first.
cat > "$OUT/copy_scaled.sh" <<SH
#!/bin/sh
real=\$VOUCH_METRICS; side=\$(mktemp)
VOUCH_METRICS=\$side "$BUSY" --mode memory --seconds 4 || exit \$?
awk -v f="\${FACTOR:-1}" '{ if (match(\$0, /"value":[0-9.eE+-]+/)) { v = substr(\$0, RSTART + 8, RLENGTH - 8); if (\$0 ~ /copy_gb_per_s/) v = v * f; sub(/"value":[0-9.eE+-]+/, "\"value\":" v) } print }' "\$side" >> "\$real"
rm -f "\$side"
SH
chmod +x "$OUT/copy_scaled.sh"
step roof_true 0 "$VOUCH" run --warmup 1 --reps 3 --out "$OUT/roof-true" -- "$OUT/copy_scaled.sh"
step roof_twice 1 "$VOUCH" run --warmup 0 --reps 2 --env FACTOR=2 --out "$OUT/roof-twice" -- "$OUT/copy_scaled.sh"
grep -h "copy_gb_per_s\|above what this GPU can do" "$OUT"/roof_*.out "$OUT"/roof_*.err | head -20 | tee -a "$OUT/status.txt"
# A capped compute loop may wander past the 5 % spread (exit 3): either way its window is written.
judged() { "$@"; rc=$?; [ $rc = 0 ] || [ $rc = 3 ]; }
step throttle_compute 0 judged "$VOUCH" clock sample --out "$OUT/throttle-compute" -- "$BUSY" --mode compute --seconds 10
step throttle_copy 0 judged "$VOUCH" clock sample --out "$OUT/throttle-copy" -- "$BUSY" --mode memory --seconds 10
# busy's compute loop does not reach the power cap on an H100 (0.0 % capped, 2026-12-06); a
# PyTorch bf16 GEMM loop does (72 % of its window): the capped case, where PyTorch is installed.
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  cat > "$OUT/gemm.py" <<'PY'
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); b = torch.randn_like(a)
t0 = time.time(); n = 0
while time.time() - t0 < 10:
    for _ in range(20): c = a @ b
    torch.cuda.synchronize(); n += 20
print(f"{n} GEMMs, {2 * 8192**3 * n / (time.time() - t0) / 1e12:.0f} TFLOP/s")
PY
  step throttle_gemm 0 judged "$VOUCH" clock sample --out "$OUT/throttle-gemm" -- python3 "$OUT/gemm.py"
  step throttle_capped_refused 3 "$VOUCH" clock check "$OUT/throttle-gemm/window.json" --max-throttled-pct 50
fi
step throttle_copy_kept 0 "$VOUCH" clock check "$OUT/throttle-copy/window.json" --max-throttled-pct 50
grep -h "driver counters\|max-throttled-pct" "$OUT"/throttle_*.out | tee -a "$OUT/status.txt"
for d in roof-true roof-twice throttle-compute throttle-copy throttle-gemm; do
  find "$OUT/$d" -name samples.jsonl -delete 2>/dev/null  # keep summaries; the raw samples are large
done
echo "fail=$fail" | tee -a "$OUT/status.txt"
exit $fail
