set -u
O=${OUT:?}
export LD_LIBRARY_PATH=$PWD/.carry/lib
{ date -u; uptime; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; } > "$O/machine.txt" 2>&1
.carry/bin/vouch --version >> "$O/machine.txt" 2>&1
# A 25 s GPU-busy leg (1 ms spin kernels) under the paced driver reads: the window, its
# readings and what the polls missed, counted from the driver's buffers.
timeout 120 .carry/bin/vouch clock sample --out "$O/cs" -- python3 tests/gpu/tracer_torch.py load --kind long --seconds 25 > "$O/clock_sample.txt" 2>&1
echo "exit $?" >> "$O/clock_sample.txt"
python3 - "$O/cs/samples.jsonl" > "$O/samples_check.txt" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ts = [r["t_s"] for r in rows]
print("samples", len(rows), "first", ts[0], "last", ts[-1], "longest gap s", max(b - a for a, b in zip(ts, ts[1:])))
PY
gzip -9 "$O/cs/samples.jsonl"
cat "$O/clock_sample.txt" "$O/samples_check.txt"
