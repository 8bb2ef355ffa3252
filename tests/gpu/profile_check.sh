#!/usr/bin/env bash
# GPU check for `vouch trace` and `vouch ncu` (run by the lead on an H200; needs PyTorch
# with CUDA, and Nsight Compute's `ncu` on PATH for the ncu part).
#
# usage: VOUCH=./build/vouch tests/gpu/profile_check.sh OUTDIR
#
# Profiles a small decode loop at batch 1 and 8 and at two prompt lengths, runs
# `vouch trace summarize --window decode_step`, `vouch trace diff` (batch and two-lengths
# mode), then `ncu --clock-control none --csv` (details and raw pages) on a tiny run and
# `vouch ncu` on both. Every output goes to OUTDIR; status.txt lists each step's exit code.
# Budget: about 2-3 minutes of GPU time (each run is a few seconds after start-up).
set -u
OUT=${1:?usage: profile_check.sh OUTDIR}
VOUCH=${VOUCH:-./build/vouch}
HERE=$(cd "$(dirname "$0")" && pwd)
WORKLOAD="python3 $HERE/profile_workload.py"
mkdir -p "$OUT"
: > "$OUT/status.txt"
fail=0

step() {  # step NAME EXPECTED_RC COMMAND...  (stdout -> NAME.out, stderr -> NAME.err)
  local name=$1 want=$2
  shift 2
  local t0=$(date +%s.%N)
  timeout 300 "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
  local rc=$?
  local t1=$(date +%s.%N)
  printf '%-28s rc=%-3s want=%-3s %6.1fs  %s\n' "$name" "$rc" "$want" "$(awk "BEGIN{print $t1 - $t0}")" "$*" >> "$OUT/status.txt"
  if [ "$rc" != "$want" ]; then
    echo "FAIL: $name (rc $rc, wanted $want); see $OUT/$name.err" >&2
    fail=1
  fi
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.csv" 2>&1
"$VOUCH" --version > "$OUT/vouch_version.txt" 2>&1

step workload_b1 0 $WORKLOAD --batch 1 --out "$OUT/trace_b1.json.gz"
step workload_b8 0 $WORKLOAD --batch 8 --out "$OUT/trace_b8.json"
step workload_p256 0 $WORKLOAD --batch 1 --prompt 256 --steps 8 --out "$OUT/trace_p256.json"
step workload_p1024 0 $WORKLOAD --batch 1 --prompt 1024 --steps 8 --out "$OUT/trace_p1024.json"

step summarize_b1_window 0 "$VOUCH" trace summarize "$OUT/trace_b1.json.gz" --window decode_step
step summarize_b1_window_json 0 "$VOUCH" trace summarize "$OUT/trace_b1.json.gz" --window decode_step --json
step summarize_b8_window_json 0 "$VOUCH" trace summarize "$OUT/trace_b8.json" --window decode_step --json
# The whole run mixes prefill and decode: vouch must ask "which annotation?" on stderr.
step summarize_b1_whole 0 "$VOUCH" trace summarize "$OUT/trace_b1.json.gz"
grep -q "Which annotation?" "$OUT/summarize_b1_whole.err" || { echo "FAIL: no phase warning" >&2; fail=1; }
step summarize_prefill 0 "$VOUCH" trace summarize "$OUT/trace_b1.json.gz" --window prefill
step diff_b1_b8 0 "$VOUCH" trace diff "$OUT/trace_b1.json.gz" "$OUT/trace_b8.json" --window decode_step
step diff_b1_b8_json 0 "$VOUCH" trace diff "$OUT/trace_b1.json.gz" "$OUT/trace_b8.json" --window decode_step --json
step diff_lengths_prefill 0 "$VOUCH" trace diff "$OUT/trace_p256.json" "$OUT/trace_p1024.json" --window prefill --lengths 256 1024
step diff_lengths_decode 0 "$VOUCH" trace diff "$OUT/trace_p256.json" "$OUT/trace_p1024.json" --window decode_step --lengths 256 1024

# Cross-check vouch's numbers with the independent Python computation on the real trace.
if [ -f "$HERE/../data/trace/independent_summary.py" ]; then
  step independent_b1_window 0 python3 "$HERE/../data/trace/independent_summary.py" "$OUT/trace_b1.json.gz" --window decode_step
  python3 - "$OUT/summarize_b1_window_json.out" "$OUT/independent_b1_window.out" >> "$OUT/status.txt" 2>&1 <<'PY' || fail=1
import json, sys
v = json.load(open(sys.argv[1]))["totals"]
p = json.load(open(sys.argv[2]))["totals"]
pairs = [("kernel_count", v["kernel_count"]), ("kernel_sum_ns", v["kernel_sum_ns"]),
         ("kernel_union_ns", v["kernel_union_ns"]), ("gpu_span_ns", v["gpu_span_ns"]),
         ("gap_total_ns", v["launch_gaps"]["total_ns"])]
bad = [(k, x, p[k]) for k, x in pairs if x != p[k]]
print("independent check:", "OK" if not bad else f"MISMATCH {bad}")
sys.exit(1 if bad else 0)
PY
fi

if command -v ncu > /dev/null; then
  NCU_ARGS="--clock-control none --csv --launch-count 6 -k regex:nvjet|gemm|sdpa|flash|cutlass"
  step ncu_details 0 ncu $NCU_ARGS $WORKLOAD --no-profile --steps 1 --layers 1
  cp "$OUT/ncu_details.out" "$OUT/ncu_details.csv"
  step ncu_raw 0 ncu $NCU_ARGS --page raw $WORKLOAD --no-profile --steps 1 --layers 1
  cp "$OUT/ncu_raw.out" "$OUT/ncu_raw.csv"
  step vouch_ncu_details 0 "$VOUCH" ncu "$OUT/ncu_details.csv"
  step vouch_ncu_details_json 0 "$VOUCH" ncu "$OUT/ncu_details.csv" --json
  step vouch_ncu_raw 0 "$VOUCH" ncu "$OUT/ncu_raw.csv"
  step vouch_ncu_raw_json 0 "$VOUCH" ncu "$OUT/ncu_raw.csv" --json
else
  echo "ncu not on PATH: ncu part skipped" | tee -a "$OUT/status.txt"
fi

# Hostile inputs on the real binary: a truncated real trace must be a clear error (rc 1).
head -c 100000 "$OUT/trace_b8.json" > "$OUT/truncated.json"
step truncated_trace 1 "$VOUCH" trace summarize "$OUT/truncated.json"

cat "$OUT/status.txt"
[ $fail = 0 ] && echo "profile_check: all steps as expected" || echo "profile_check: FAILURES (see above)"
exit $fail
