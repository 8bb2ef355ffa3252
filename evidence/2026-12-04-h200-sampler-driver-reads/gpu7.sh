set -u
O=${OUT:?}
export LD_LIBRARY_PATH=$PWD/.carry/lib
{ date -u; uptime; nvidia-smi --query-gpu=name,driver_version --format=csv; } > "$O/machine.txt" 2>&1
for r in 1 2 3 4; do
  order="paced now"; [ $((r % 2)) = 0 ] && order="now paced"
  for b in $order; do
    f=.carry/bin/sampler_bench; [ $b = paced ] && f=.carry/bin/sampler_bench_paced
    echo "round $r $b: $(timeout 40 $f --seconds 20 2>&1 | tail -1)"
  done
done | tee "$O/sampler_bench.txt"
