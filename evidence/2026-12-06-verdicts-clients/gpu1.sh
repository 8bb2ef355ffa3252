#!/usr/bin/env bash
# Call 1 (issues 34 and 35): vouch from the build tree (RelWithDebInfo, VOUCH_PORTABLE, in
# .carry/ with its libraries), the CUPTI tracer built here with g++ against the machine's CUDA;
# tests/gpu/check_modes_ab.sh (issue 34) and tests/gpu/check_profiler.sh (issue 35).
set -u
O=${OUT:?}
R=$O/r
mkdir -p "$R"
export LD_LIBRARY_PATH=$PWD/.carry/lib
{ date -u; uptime; nproc; uname -r
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'; } > "$R/machine.txt" 2>&1
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
INC=$(dirname "$(find "$CUDA_HOME"/ /usr/local/cuda*/ -name cupti.h 2>/dev/null | head -1)")
LIB=$(find "$CUDA_HOME"/ /usr/local/cuda*/ -name 'libcupti.so*' 2>/dev/null | sort | head -1)
echo "cupti.h in $INC; libcupti $LIB" >> "$R/machine.txt"
g++ -std=c++17 -O2 -shared -fPIC -fvisibility=hidden -o .carry/lib/libvouch_cupti.so \
  src/cupti/tracer.cc src/cupti/options.cc src/cupti/loader.cc src/cupti/select.cc \
  src/cupti/counter.cc -I"$INC" -I"$CUDA_HOME/include" -DVOUCH_CUPTI_BUILD_LIB="\"$LIB\"" \
  -static-libstdc++ -static-libgcc -Wl,--exclude-libs,ALL \
  -Wl,--version-script=src/cupti/exports.map -lpthread -ldl > "$R/tracer_build.txt" 2>&1
echo "tracer build: exit $?" | tee -a "$R/machine.txt"
export VOUCH=$PWD/.carry/bin/vouch PYTHONPATH=$PWD/python
"$VOUCH" --version >> "$R/machine.txt" 2>&1
mkdir -p "$R/modes"
OUT=$R/modes timeout 300 bash tests/gpu/check_modes_ab.sh
echo "check_modes_ab.sh exit $?" | tee -a "$R/machine.txt"
ITERS=60000 timeout 200 bash tests/gpu/check_profiler.sh "$R/profiler"
echo "check_profiler.sh exit $?" | tee -a "$R/machine.txt"
find "$R" -name 'gpu-trace.*.jsonl' -size +2M -delete
find "$R" -name 'samples*' -size +2M -delete
cat "$R/machine.txt" "$R/modes/summary.txt" "$R/modes/status.txt" "$R/profiler/status.txt" 2>/dev/null
tar -czf "$O/call1.tar.gz" -C "$O" r && rm -rf "$R"
ls -la "$O"
