set -u
O=${OUT:?}
export LD_LIBRARY_PATH=$PWD/.carry/lib
CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
g++ -O2 -std=c++17 -I"$CUDA_HOME/include" bench/telemetry/nvml_calls.cc -ldl -o /tmp/nc || exit 3
for r in 1 2; do timeout 100 /tmp/nc --seconds 2 --only samples_ | sed "s/^{/{\"round\":$r,/"; done > "$O/nvml_samples.jsonl"
for r in 1 2; do for b in before now; do
  f=.carry/bin/sampler_bench; [ $b = before ] && f=.carry/bin/sampler_bench_before
  echo "round $r $b: $(timeout 30 $f --seconds 10 2>&1 | tail -1)"
  echo "round $r $b --driver-ms 0: $(timeout 30 $f --seconds 10 --driver-ms 0 2>&1 | tail -1)"
done; done | tee "$O/sampler_bench.txt"
cat "$O/nvml_samples.jsonl"
