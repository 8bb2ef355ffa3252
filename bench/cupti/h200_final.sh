#!/usr/bin/env bash
# One H200 call for the tracer's cost with its shipped defaults (docs/BENCHMARKS.md):
#   bash bench/cupti/h200_final.sh OUTDIR
# Builds libvouch_cupti.so from src/cupti/tracer.cc and options.cc with nvcc, then runs bench/cupti/cost.sh:
# short_5k traced and torch.profiler (PAIRS, 8), then short and long traced (PAIRS_OTHER, 4).
# Leaves OUTDIR/final.tgz (records, logs) and OUTDIR/final.txt (the verdict lines).
set -u
OUT=${1:?usage: h200_final.sh OUTDIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
W=${FINAL_WORK:-$(mktemp -d)}
mkdir -p "$W/final"
nvcc -std=c++17 -O2 -shared -Xcompiler -fPIC,-fvisibility=hidden -o "$W/libvouch_cupti.so" \
  "$ROOT/src/cupti/tracer.cc" "$ROOT/src/cupti/options.cc" "$ROOT/src/cupti/loader.cc" "$ROOT/src/cupti/select.cc" "$ROOT/src/cupti/counter.cc" -I"$CUDA_HOME/include" -I"$CUDA_HOME/extras/CUPTI/include" \
  -L"$CUDA_HOME/lib64" -L"$CUDA_HOME/extras/CUPTI/lib64" -lcupti -ldl -Xlinker -rpath,"$CUDA_HOME/lib64" \
  -Xlinker --version-script="$ROOT/src/cupti/exports.map" || exit 1
export VOUCH_CUPTI_LIB=$W/libvouch_cupti.so
{ date -u; uptime; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv;
  "${VOUCH:-$ROOT/build/vouch}" --version; git -C "$ROOT" log --oneline -1; } > "$W/final/machine.txt" 2>&1
PAIRS=${PAIRS:-8} LOOPS=short_5k ARMS="traced torchprof" bash "$ROOT/bench/cupti/cost.sh" "$W/final/c5k" \
  > "$W/final/c5k.log" 2>&1
PAIRS=${PAIRS_OTHER:-4} LOOPS="short long" ARMS=traced bash "$ROOT/bench/cupti/cost.sh" "$W/final/other" \
  > "$W/final/other.log" 2>&1
cat "$W/final/c5k.log" "$W/final/other.log" > "$OUT/final.txt"
rm -rf "$W/final"/*/traces
tar -C "$W" -czf "$OUT/final.tgz" final
