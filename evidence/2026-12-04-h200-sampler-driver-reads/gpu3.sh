set -u
O=${OUT:?}
export LD_LIBRARY_PATH=$PWD/.carry/lib
{ date -u; uptime; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; git log --oneline -1; } > "$O/machine.txt" 2>&1
for r in 1 2 3; do
  order="before now now_1s"; [ $r = 2 ] && order="now_1s now before"; [ $r = 3 ] && order="now before now_1s"
  for b in $order; do
    case $b in
      before) cmd=".carry/bin/sampler_bench_before" ;;
      now) cmd=".carry/bin/sampler_bench" ;;
      now_1s) cmd=".carry/bin/sampler_bench --driver-max-ms 1000" ;;
    esac
    echo "round $r $b: $(timeout 40 $cmd --seconds 20 2>&1 | tail -1)"
  done
done | tee "$O/sampler_bench.txt"
SIM=none SECS=30 ROUNDS=1 VOUCHES="now=.carry/bin/vouch" BENCHES="" \
  timeout 80 bash bench/telemetry/sampler_cpu.sh "$O/sampler_cpu" > "$O/sampler_cpu.log" 2>&1
echo "sampler_cpu: exit $?"; cat "$O/sampler_cpu/cpu.txt" 2>/dev/null; tail -5 "$O/sampler_cpu.log"
find "$O" -name samples.jsonl -delete
