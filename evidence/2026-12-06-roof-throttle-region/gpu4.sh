#!/usr/bin/env bash
# Call 4 (issues 38 and 35), after call 3: vouch at 9c691e3 (the below-base total no longer
# judged; check_roof.sh's capped case a PyTorch GEMM loop) and the region's new hot path
# (a870aca). The same .carry/ layout as gpu3.sh.
set -u
O=${OUT:?}
R=$O/r
mkdir -p "$R"
export LD_LIBRARY_PATH=$PWD/.carry/lib VOUCH=$PWD/.carry/bin/vouch PYTHONPATH=$PWD/python
export VOUCH_CEILINGS_DIR=$R/ceilings VOUCH_LOCK_FILE=/tmp/vouch-gpu-check.lock
{ date -u; uptime; cat /proc/sys/kernel/random/boot_id
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv; } > "$R/machine.txt" 2>&1
"$VOUCH" doctor --calibrate > "$R/calibrate.out" 2>&1; echo "calibrate exit $?" >> "$R/calibrate.out"
cat "$R/calibrate.out"
timeout 240 bash tests/gpu/check_roof.sh "$R/roof"; echo "check_roof.sh exit $?" | tee -a "$R/machine.txt"
mkdir -p "$R/region"
B=$PWD/bench/python/region_bench.py
for round in 1 2 3; do
  python3 "$B" --rounds 7 > "$R/region/new_$round.txt" 2>&1
  python3 "$B" --rounds 7 --module "$PWD/gpu_tmp/old" > "$R/region/old_$round.txt" 2>&1
  python3 -c "import sys, runpy, torch; sys.argv = ['$B', '--rounds', '7']; runpy.run_path('$B', run_name='__main__')" > "$R/region/torch_$round.txt" 2>&1
done
grep -H "CPU\|wall" "$R"/region/*.txt
tar -czf "$O/call4.tar.gz" -C "$O" r
