set -u
# Call 1: issue 24's GPU check at main (dc29e32, scripts/portable.sh Release build in .carry):
# the back-to-back loop (traced and torch.profiler), the sampler's CPU at 10 ms, its parts, the
# wake-up floor. bench/cupti/h200_default.sh does each step.
O=${OUT:?}
export LD_LIBRARY_PATH=$PWD/.carry/lib
{ date -u; uptime; nproc; uname -r; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__)'; } > "$O/machine.txt" 2>&1
VOUCH=$PWD/.carry/bin/vouch SAMPLER_BENCH=$PWD/.carry/bin/sampler_bench PAIRS=4 SECS=4 LOOPS=short \
  COST_TIMEOUT=330 timeout 540 bash bench/cupti/h200_default.sh "$O/check"
echo "h200_default.sh exit $?"
rm -rf "$O/check/build"
