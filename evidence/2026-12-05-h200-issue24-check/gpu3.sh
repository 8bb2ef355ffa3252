set -u
# Call 3: the process list re-read only when the GPU's memory used moves (or once a second).
# 1. the sampler thread alone, real NVML, the list read every time (--process-reread-ms 0, as
#    before) against the new default (1000), 4 rounds of 12 s alternated;
# 2. vouch clock sample --interval-ms 10 -- sleep 30 (sampler_cpu.sh), the new binary, 2 rounds;
# 3. a leg whose PyTorch process takes 1 GiB, then 2 GiB more, then exits: every snapshot's
#    list against the memory used beside it (procs_check.py).
O=${OUT:?}
export LD_LIBRARY_PATH=$PWD/.carry/lib
B=.carry/bin
E=evidence/2026-12-05-h200-issue24-check
{ date -u; uptime; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; } > "$O/machine.txt" 2>&1
for r in 1 2 3 4; do
  order="0 1000"; [ $((r % 2)) = 0 ] && order="1000 0"
  for v in $order; do
    echo "round $r reread $v: $(timeout 40 $B/sampler_bench --seconds 12 --process-reread-ms $v 2>&1 | tail -1)"
  done
done | tee "$O/sampler_bench.txt"
SIM=none SECS=30 ROUNDS=2 VOUCHES="now=$PWD/$B/vouch" BENCHES="" timeout 100 \
  bash bench/telemetry/sampler_cpu.sh "$O/sampler" > "$O/sampler.log" 2>&1
echo "sampler_cpu.sh exit $?"; cat "$O/sampler/cpu.txt"
timeout 60 $B/vouch clock sample --out /tmp/steps --interval-ms 10 --quiet -- python3 -c '
import torch, time
a = torch.empty(1 << 30, dtype=torch.uint8, device="cuda"); torch.cuda.synchronize(); time.sleep(1.5)
b = torch.empty(2 << 30, dtype=torch.uint8, device="cuda"); torch.cuda.synchronize(); time.sleep(1.5)
del a; torch.cuda.empty_cache(); torch.cuda.synchronize(); time.sleep(1.5)' > "$O/steps.txt" 2>&1
echo "clock sample exit $?"
python3 $E/procs_check.py /tmp/steps/samples.jsonl | tee "$O/procs_check.txt"
echo "procs_check exit ${PIPESTATUS[0]}"
gzip -c /tmp/steps/samples.jsonl > "$O/steps-samples.jsonl.gz"
