set -u
O=${OUT:?}
{ date -u; uptime; nproc; uname -r; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; } > "$O/machine.txt" 2>&1
# 1. What one read of /proc/cpuinfo costs here (a leg read it three times before da5668b).
python3 - > "$O/cpuinfo.txt" <<'PY'
import time
b = open('/proc/cpuinfo').read()
n = 500
t = time.perf_counter(); c = time.process_time()
for i in range(n): open('/proc/cpuinfo').read()
print(f"/proc/cpuinfo: {len(b)} bytes, {b.count('processor')} CPUs; a read {(time.perf_counter()-t)/n*1e6:.1f} us wall, {(time.process_time()-c)/n*1e6:.1f} us CPU")
PY
# 2. The installed layout: bin/vouch finds its libraries through its RPATH alone.
{ readelf -d .carry/bin/vouch | grep -i path; env -u LD_LIBRARY_PATH .carry/bin/vouch --version; echo "exit $?"; } > "$O/layout.txt" 2>&1
export LD_LIBRARY_PATH=$PWD/.carry/lib
# 3. A real run on NVML: three 4 s legs of 1 ms spin kernels.
timeout 200 .carry/bin/vouch run --reps 3 --warmup 0 --out "$O/run" -- python3 tests/gpu/tracer_torch.py load --kind long --seconds 4 > "$O/run.txt" 2>&1
echo "exit $?" >> "$O/run.txt"
# 4. Per-leg overhead on NVML: 40 legs of `true` (their windows idle; the gaps are vouch's).
timeout 120 .carry/bin/vouch run --reps 40 --warmup 0 --out "$O/true" -- true > "$O/true.txt" 2>&1
echo "exit $?" >> "$O/true.txt"
python3 - "$O/true/record.json" >> "$O/true.txt" <<'PY'
import json, statistics, sys
legs = json.load(open(sys.argv[1]))["legs"]
s = [l["result"]["start_unix_ns"] for l in legs]; w = [l["result"]["wall_ns"] for l in legs]
gaps = [(b - a) / 1e6 for a, b in zip(s, s[1:])]
print(f"legs {len(legs)}: leg-to-leg median {statistics.median(gaps):.3f} ms, command's wall median {statistics.median(w)/1e6:.3f} ms, beyond the command {statistics.median(g - x/1e6 for g, x in zip(gaps, w)):.3f} ms")
PY
for f in "$O"/run/legs/*/samples.jsonl "$O"/true/legs/*/samples.jsonl; do gzip -9 "$f"; done 2>/dev/null
cat "$O/cpuinfo.txt" "$O/layout.txt"; tail -8 "$O/run.txt"; tail -3 "$O/true.txt"
