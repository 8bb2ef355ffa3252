#!/usr/bin/env bash
# GPU check for the tracer's own cost estimate (issue 23 item 6), on a machine with an NVIDIA
# GPU and PyTorch (not run without one):
#   LD_LIBRARY_PATH=$PWD/.carry/lib VOUCH=.carry/bin/vouch \
#     VOUCH_CUPTI_LIB=.carry/lib/libvouch_cupti.so bash tests/gpu/check_tracer_cost.sh OUTDIR
# On the short-kernel loops of bench/cupti/ (tests/gpu/tracer_torch.py load --kind short, with
# 200 us of host work between launches, "short_5k", and back to back, "short"), for the
# tracer's two modes (launch-API records on, the default, and VOUCH_GPU_TRACE_API=off):
#   measured   `vouch ab` untraced A against traced B (as bench/cupti/cost.sh), headline
#              iters_per_s: the cost is 1 - B/A, with its interval
#   estimated  `vouch run --gpu-trace` on the same loop: gpu.tracer_cost_fraction per leg
#              (launches x the documented per-launch cost, docs/gpu-trace.md), its median
# and checks, per loop and mode: the estimate lies within max(1 percentage point, half the
# measured cost) of the measured cost, or inside the measured interval; and the run printed the
# 2 % warning exactly when the estimate is above 2 %. cost_check.txt holds the table, status.txt
# one line per step. LOOPS (default "short_5k short") and MODES ("api lean") pick the parts.
# Never touches clocks.
set -u
OUT=${1:?usage: check_tracer_cost.sh OUTDIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VOUCH=${VOUCH:-$ROOT/build/vouch}
case "$VOUCH" in /*) ;; *) VOUCH=$ROOT/$VOUCH ;; esac
LIB=${VOUCH_CUPTI_LIB:?set VOUCH_CUPTI_LIB to libvouch_cupti.so}
case "$LIB" in /*) ;; *) LIB=$ROOT/$LIB ;; esac
export VOUCH_LOCK_FILE=${VOUCH_LOCK_FILE:-/tmp/vouch-gpu-check.lock}
PY=${PYTHON:-python3}
PAIRS=${PAIRS:-6}
REPS=${REPS:-3}
SECS=${SECS:-4}
LOOPS=${LOOPS:-short_5k short}
MODES=${MODES:-api lean}
: > "$OUT/status.txt"
. "$HERE/common.sh"
printf '%-9s %-5s %10s %22s %10s %8s %s\n' loop mode measured "interval" estimated warned ok \
  > "$OUT/cost_check.txt"

for loop in $LOOPS; do
  case $loop in
    short_5k) args="--kind short --host-us 200" ;;
    short) args="--kind short" ;;
    *) echo "unknown loop $loop" >&2; exit 64 ;;
  esac
  LOAD="$PY $ROOT/tests/gpu/tracer_torch.py load --seconds $SECS $args"
  for mode in $MODES; do
    api=on
    [ "$mode" = lean ] && api=off
    d=$OUT/$loop-$mode
    # Measured: untraced against traced, the tracer injected into B by hand (no --gpu-trace, so
    # that both arms run the same vouch machinery).
    step "$loop-$mode-ab" 0 "$VOUCH" ab --a-name untraced --b-name traced \
      --a-env VOUCH_BENCH_ARM=untraced \
      --b-env CUDA_INJECTION64_PATH="$LIB" --b-env NVTX_INJECTION64_PATH="$LIB" \
      --b-env VOUCH_GPU_TRACE="$d-traces/t.%p.jsonl" --b-env VOUCH_GPU_TRACE_API=$api \
      --pairs "$PAIRS" --seed 11 --band 1 --min-busy-pct 10 --headline iters_per_s \
      --out "$d-ab" -- $LOAD
    rm -rf "$d-traces"
    # Estimated: the same loop under --gpu-trace, the mode inherited from the environment.
    step "$loop-$mode-run" 0 env VOUCH_GPU_TRACE_API=$api "$VOUCH" run --gpu-trace \
      --gpu-trace-lib "$LIB" --warmup 1 --reps "$REPS" --min-busy-pct 10 --out "$d-run" -- $LOAD
    find "$d-ab" "$d-run" -name 'gpu-trace.*.jsonl' -delete 2>/dev/null
    find "$d-ab" "$d-run" -name samples.jsonl -delete 2>/dev/null
    "$PY" - "$d-ab/record.json" "$d-run/record.json" "$OUT/$loop-$mode-run.err" "$loop" "$mode" \
      >> "$OUT/cost_check.txt" <<'PYEOF' || fail=1
import json, statistics, sys
ab, run, err, loop, mode = sys.argv[1:6]
v = json.load(open(ab))["extra"]["verdict"]["decision"]
r = v["b_over_a"]  # iters_per_s traced / untraced
measured, lo, hi = 1 - r["value"], 1 - r["hi"], 1 - r["lo"]
legs = [l for l in json.load(open(run))["legs"] if l["role"] == "measured" and l["valid"]]
est = [m["value"] for l in legs for m in l["metrics"] if m["name"] == "gpu.tracer_cost_fraction"]
if not est:
    print(f"{loop:9} {mode:5} no traced leg gave gpu.tracer_cost_fraction")
    sys.exit(1)
e = statistics.median(est)
modes = {l["gpu_trace"]["tracer_cost"]["api"] for l in legs}
want_mode = "off" if mode == "lean" else "launch"
warned = "the tracer's estimated cost is" in open(err).read()
close = abs(e - measured) <= max(0.01, 0.5 * abs(measured)) or lo <= e <= hi
ok = close and (warned == (max(est) > 0.02)) and modes == {want_mode}
print(f"{loop:9} {mode:5} {100*measured:9.2f}% {100*lo:9.2f}% .. {100*hi:6.2f}% "
      f"{100*e:9.2f}% {str(warned):>8} {'ok' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
PYEOF
  done
done
cat "$OUT/cost_check.txt"
exit $fail
