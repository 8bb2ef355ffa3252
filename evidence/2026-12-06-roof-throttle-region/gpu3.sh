#!/usr/bin/env bash
# One device call (issues 38 and 35): vouch from the build tree (RelWithDebInfo, VOUCH_PORTABLE,
# in .carry/ with its libraries). Clocks, power limits and modes untouched.
# 1. `vouch doctor --calibrate` (this boot's copy-bandwidth ceiling), then tests/gpu/check_roof.sh:
#    the copy loop's true bandwidth passes, twice its bytes is refused; throttle windows of a
#    compute loop and a copy loop with the driver's violation counters.
# 2. A bf16 GEMM loop in PyTorch under `clock sample` (the power-capped case the issue names).
# 3. bench/python/region_bench.py on the GPU host: the new module, the old one (3cc89e2), and with
#    PyTorch imported (real NVTX push/pop).
set -u
O=${OUT:?}
R=$O/r
mkdir -p "$R"
export LD_LIBRARY_PATH=$PWD/.carry/lib VOUCH=$PWD/.carry/bin/vouch PYTHONPATH=$PWD/python
export VOUCH_CEILINGS_DIR=$R/ceilings VOUCH_LOCK_FILE=/tmp/vouch-gpu-check.lock
{ date -u; uptime; nproc; uname -r; cat /proc/sys/kernel/random/boot_id
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'; "$VOUCH" --version; } > "$R/machine.txt" 2>&1
"$VOUCH" doctor --calibrate > "$R/calibrate.out" 2>&1; echo "calibrate exit $?" >> "$R/calibrate.out"
cat "$R/calibrate.out"; cat "$R"/ceilings/*.json 2>/dev/null | head -40
timeout 200 bash tests/gpu/check_roof.sh "$R/roof"; echo "check_roof.sh exit $?" | tee -a "$R/machine.txt"
cat > "$R/gemm.py" <<'PY'
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); b = torch.randn_like(a)
t0 = time.time(); n = 0
while time.time() - t0 < 10:
    for _ in range(20): c = a @ b
    torch.cuda.synchronize(); n += 20
print(f"{n} GEMMs, {2 * 8192**3 * n / (time.time() - t0) / 1e12:.0f} TFLOP/s")
PY
timeout 60 "$VOUCH" clock sample --out "$R/throttle-gemm" -- python3 "$R/gemm.py" > "$R/throttle_gemm.out" 2>&1
echo "gemm clock sample exit $?" >> "$R/throttle_gemm.out"
timeout 30 "$VOUCH" clock check "$R/throttle-gemm/window.json" --max-throttled-pct 50 > "$R/throttle_gemm_check.out" 2>&1
echo "clock check --max-throttled-pct 50 exit $?" >> "$R/throttle_gemm_check.out"
find "$R/throttle-gemm" -name samples.jsonl -delete
grep -h "driver counters\|throttl\|capped" "$R"/throttle_gemm*.out | head; tail -3 "$R"/throttle_gemm*.out
cd "$R" && mkdir -p region
B=$OLDPWD/bench/python/region_bench.py
for round in 1 2 3; do
  python3 "$B" --rounds 7 > region/new_$round.txt 2>&1
  python3 "$B" --rounds 7 --module "$OLDPWD/gpu_tmp/old" > region/old_$round.txt 2>&1
  python3 -c "import sys, runpy, torch; sys.argv = ['$B', '--rounds', '7']; runpy.run_path('$B', run_name='__main__')" > region/torch_$round.txt 2>&1
done
cd "$OLDPWD"; head -50 "$R"/region/*.txt
tar -czf "$O/call3.tar.gz" -C "$O" r
