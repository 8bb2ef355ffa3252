#!/usr/bin/env bash
# Issue 24's GPU check, one command on one H200 (under 8 minutes):
#   bash bench/cupti/h200_default.sh OUTDIR
# (VOUCH: the vouch binary, default .carry/bin/vouch, else build/vouch; needs nvcc, PyTorch.)
#  1. builds libvouch_cupti.so (src/cupti/tracer.cc, options.cc) with nvcc, and launch_cost.cu;
#  2. checks the new default on 2,000 back-to-back launches: the header says "api":"off", no
#     launch-API lines, every kernel recorded; and with VOUCH_GPU_TRACE_API=on the "a" lines
#     come back (the opt-in still works);
#  3. the tracer's cost with its shipped defaults (launch-API records off) as vouch A/Bs,
#     bench/cupti/cost.sh: the three loops (short = back to back, short_5k = ~5,000 launches/s,
#     long = 1 ms kernels), each untraced vs traced and untraced vs torch.profiler (the peer),
#     PAIRS (3) pairs of SECS (3) s legs;
#  4. the sampler's CPU with real NVML: `vouch clock sample --interval-ms 10 -- sleep 30`,
#     vouch's CPU % of one core from /proc (bench/telemetry/sampler_cpu.sh, SIM=none, 1 round).
#  5. with SAMPLER_BENCH set, the sampler thread's CPU alone and without each periodic part;
#  6. a thread that only wakes every 10 and 20 ms (bench/telemetry/wakeup_bench.cc): the floor.
# Writes OUTDIR/summary.txt (the figures), OUTDIR/status.txt (each step's exit), the A/B
# records and logs under OUTDIR/cost, the sampler's under OUTDIR/sampler.
set -u
OUT=${1:?usage: h200_default.sh OUTDIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${VOUCH:-}" ]; then
  VOUCH=$ROOT/build/vouch
  [ -x "$ROOT/.carry/bin/vouch" ] && VOUCH=$ROOT/.carry/bin/vouch
fi
export VOUCH
[ -d "$ROOT/.carry/lib" ] && export LD_LIBRARY_PATH="$ROOT/.carry/lib:${LD_LIBRARY_PATH:-}"
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
note() { echo "$*" | tee -a "$OUT/status.txt"; }
: > "$OUT/status.txt"
: > "$OUT/summary.txt"
{ date -u; uptime; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  "$VOUCH" --version; git -C "$ROOT" log --oneline -1; } > "$OUT/machine.txt" 2>&1

# 1. Build.
B=$OUT/build
mkdir -p "$B"
nvcc -std=c++17 -O2 -shared -Xcompiler -fPIC,-fvisibility=hidden -o "$B/libvouch_cupti.so" \
  "$ROOT/src/cupti/tracer.cc" "$ROOT/src/cupti/options.cc" "$ROOT/src/cupti/loader.cc" "$ROOT/src/cupti/select.cc" "$ROOT/src/cupti/counter.cc" -I"$CUDA_HOME/include" \
  -I"$CUDA_HOME/extras/CUPTI/include" -L"$CUDA_HOME/lib64" -L"$CUDA_HOME/extras/CUPTI/lib64" \
  -lcupti -ldl -Xlinker -rpath,"$CUDA_HOME/lib64" \
  -Xlinker --version-script="$ROOT/src/cupti/exports.map" > "$B/nvcc.log" 2>&1
note "build tracer: exit $?"
nvcc -O2 -arch=sm_90 -o "$B/launch_cost" "$ROOT/bench/cupti/launch_cost.cu" >> "$B/nvcc.log" 2>&1
note "build launch_cost: exit $?"
export VOUCH_CUPTI_LIB=$B/libvouch_cupti.so
LIB=$VOUCH_CUPTI_LIB

# 2. What the default records (and the opt-in).
for mode in default on; do
  f=$OUT/check-$mode.jsonl
  rm -f "$f"
  extra=""
  [ $mode = on ] && extra="VOUCH_GPU_TRACE_API=on"
  timeout 30 env CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB" VOUCH_GPU_TRACE="$f" $extra \
    "$B/launch_cost" --host-us 0 --launches 2000 --label "$mode" > "$OUT/check-$mode.out" 2>&1
  rc=$?
  api=$(head -1 "$f" 2>/dev/null | grep -o '"api":"[a-z]*","api_from":"[A-Za-z_]*"')
  k=$(grep -c '"t":"k"' "$f" 2>/dev/null)
  a=$(grep -c '"t":"a"' "$f" 2>/dev/null)
  note "check $mode: exit $rc, header $api, kernel lines $k, launch-API lines $a (2000 launches + warm-up)"
  echo "records, $mode: $api kernels $k launch-API $a" >> "$OUT/summary.txt"
done
timeout 60 "$VOUCH" trace summarize "$OUT/check-default.jsonl" > "$OUT/check-default.summary.txt" 2>&1
note "trace summarize (default trace): exit $?"

# 3. The tracer's cost, shipped defaults (about 48 s per A/B: 2 + 2*PAIRS legs of ~6 s).
# LOOPS and ARMS pick a subset (a loop left unresolved by an earlier call, with more PAIRS);
# COST_TIMEOUT bounds the step.
PAIRS=${PAIRS:-3} SECS=${SECS:-3} LOOPS=${LOOPS:-short short_5k long} ARMS=${ARMS:-traced torchprof} \
  timeout "${COST_TIMEOUT:-420}" bash "$ROOT/bench/cupti/cost.sh" "$OUT/cost" > "$OUT/cost.log" 2>&1
note "cost.sh: exit $?"
rm -rf "$OUT/cost/traces"
{ echo "tracer cost, shipped defaults (B/A iters_per_s; cost = 1 - ratio):"; cat "$OUT/cost.log"; } >> "$OUT/summary.txt"

# 4. The sampler's CPU with real NVML at 10 ms.
SIM=none SECS=30 ROUNDS=1 VOUCHES="real=$VOUCH" BENCHES="" \
  timeout 60 bash "$ROOT/bench/telemetry/sampler_cpu.sh" "$OUT/sampler" > "$OUT/sampler.log" 2>&1
note "sampler_cpu.sh: exit $?"
{ echo "sampler CPU, real NVML, 10 ms, sleep 30:"; cat "$OUT/sampler/cpu.txt"; } >> "$OUT/summary.txt"
# 5. Where the sampler thread's CPU goes (SAMPLER_BENCH: bench/telemetry/sampler_bench): the
# thread alone, as shipped, then without the process list, without the driver's sample
# buffers, without both, and at 20 ms; 10 s each.
if [ -n "${SAMPLER_BENCH:-}" ]; then
  for args in "" "--process-ms 0" "--driver-ms 0" "--process-ms 0 --driver-ms 0" "--interval-ms 20"; do
    echo "sampler_bench $args: $(timeout 30 "$SAMPLER_BENCH" --seconds 10 $args 2>&1 | tail -1)"
  done | tee -a "$OUT/summary.txt" > "$OUT/sampler_bench.txt"
  note "sampler_bench: exit $?"
fi
# 6. The floor under it: a thread that only wakes every 10 (and 20) ms on this machine, no NVML
# (bench/telemetry/wakeup_bench.cc, standalone, built here with g++).
g++ -O2 -std=c++20 -pthread -o "$B/wakeup_bench" "$ROOT/bench/telemetry/wakeup_bench.cc" 2>>"$B/nvcc.log"
for ms in 10 20; do
  echo "wakeup_bench --interval-ms $ms: $(timeout 30 "$B/wakeup_bench" --seconds 10 --interval-ms $ms 2>&1)"
done | tee -a "$OUT/summary.txt" > "$OUT/wakeup_bench.txt"
note "wakeup_bench: exit $?"
find "$OUT/cost" -name samples.jsonl -delete 2>/dev/null
cat "$OUT/summary.txt"
