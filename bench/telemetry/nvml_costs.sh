#!/usr/bin/env bash
# Where the sampler's CPU goes on a machine with a GPU (issue 24), one command:
#   BENCHES="before=PATH now=PATH" bash bench/telemetry/nvml_costs.sh OUTDIR
# 1. nvml_calls (built here with g++ against the CUDA toolkit's nvml.h): each NVML call the
#    sampler makes, alone, paced as the sampler paces it, its CPU per call and the thread's CPU
#    (SECS s a case, 3; ROUNDS rounds, 2);
# 2. sampler_bench for each binary in BENCHES (label=path), 10 s each, the binaries alternated
#    for ROUNDS rounds: the sampler thread's CPU in % of one core, as shipped by each.
# Writes OUTDIR/nvml_calls.jsonl, OUTDIR/sampler_bench.txt and prints both.
set -u
OUT=${1:?usage: nvml_costs.sh OUTDIR}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECS=${SECS:-3}
ROUNDS=${ROUNDS:-2}
# The portable build's libraries (scripts/portable.sh), for sampler_bench.
[ -d "$ROOT/.carry/lib" ] && export LD_LIBRARY_PATH="$ROOT/.carry/lib:${LD_LIBRARY_PATH:-}"
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
{ uptime; nproc; grep -m1 "model name" /proc/cpuinfo
  cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || echo "no cpufreq governor"
  cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > "$OUT/machine.txt" 2>&1
g++ -O2 -std=c++17 -I"$CUDA_HOME/include" "$ROOT/bench/telemetry/nvml_calls.cc" -ldl \
  -o "$OUT/nvml_calls" 2> "$OUT/build.log" || { echo "nvml_calls: build failed"; cat "$OUT/build.log"; }
: > "$OUT/nvml_calls.jsonl"
for r in $(seq 1 "$ROUNDS"); do
  [ -x "$OUT/nvml_calls" ] && timeout 300 "$OUT/nvml_calls" --seconds "$SECS" |
    sed "s/^{/{\"round\":$r,/" >> "$OUT/nvml_calls.jsonl"
done
cat "$OUT/nvml_calls.jsonl"
: > "$OUT/sampler_bench.txt"
for r in $(seq 1 "$ROUNDS"); do
  set -- ${BENCHES:-}
  [ $((r % 2)) = 0 ] && set -- $(printf '%s\n' "$@" | tac)
  for b in "$@"; do
    echo "round $r ${b%%=*}: $(timeout 30 "${b#*=}" --seconds 10 2>&1 | tail -1)" >> "$OUT/sampler_bench.txt"
  done
done
cat "$OUT/sampler_bench.txt"
