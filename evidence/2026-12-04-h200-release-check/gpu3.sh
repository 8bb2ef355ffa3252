set -u
O=${OUT:?}
export LD_LIBRARY_PATH=$PWD/.carry/lib
{ date -u; uptime; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; } > "$O/machine.txt" 2>&1
# 1. A short leg's sampler: Start() and Stop() (the stop's last driver-buffer reads), 40 legs.
for r in 1 2; do
  echo "nvml: $(.carry/bin/sampler_bench --legs 40 --seconds 0.002)"
done > "$O/sampler_legs.txt" 2>&1
# 2. Per-leg cost on NVML, 40 legs of `true`, before (8a0acf4's host facts: /proc/cpuinfo three
# times a leg) and now, alternated.
gaps() {
python3 - "$1" <<'PY'
import json, statistics, sys
legs = json.load(open(sys.argv[1]))["legs"]
s = [l["result"]["start_unix_ns"] for l in legs]; w = [l["result"]["wall_ns"] for l in legs]
gaps = [(b - a) / 1e6 for a, b in zip(s, s[1:])]
print(f"legs {len(legs)}: leg-to-leg median {statistics.median(gaps):.3f} ms, beyond the command median {statistics.median(g - x/1e6 for g, x in zip(gaps, w)):.3f} ms")
PY
}
for r in 1 2 3; do
  for b in before now; do
    f=.carry/bin/vouch; [ $b = before ] && f=.carry/bin/vouch_before_host
    rm -rf /tmp/t-$b-$r
    $f run --reps 40 --warmup 0 --out /tmp/t-$b-$r -- true > /dev/null 2>&1
    echo "round $r $b: $(gaps /tmp/t-$b-$r/record.json)"
  done
done > "$O/per_leg.txt" 2>&1
cat "$O/sampler_legs.txt" "$O/per_leg.txt"
