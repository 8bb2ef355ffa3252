#!/usr/bin/env bash
# Call 2 (issue 34): tests/gpu/check_modes_ab.sh again after the kernel-mix labels became modes
# (call 1 showed 4 legs an arm too few for the statistical modes test, while the trace saw two
# kernel mixes per arm). The same .carry/ layout and tracer build as gpu1.sh.
set -u
O=${OUT:?}
R=$O/r
mkdir -p "$R"
export LD_LIBRARY_PATH=$PWD/.carry/lib
{ date -u; uptime; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv; } > "$R/machine.txt" 2>&1
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
INC=$(dirname "$(find "$CUDA_HOME"/ /usr/local/cuda*/ -name cupti.h 2>/dev/null | head -1)")
LIB=$(find "$CUDA_HOME"/ /usr/local/cuda*/ -name 'libcupti.so*' 2>/dev/null | sort | head -1)
[ -f .carry/lib/libvouch_cupti.so ] || g++ -std=c++17 -O2 -shared -fPIC -fvisibility=hidden \
  -o .carry/lib/libvouch_cupti.so src/cupti/tracer.cc src/cupti/options.cc src/cupti/loader.cc \
  src/cupti/select.cc src/cupti/counter.cc -I"$INC" -I"$CUDA_HOME/include" \
  -DVOUCH_CUPTI_BUILD_LIB="\"$LIB\"" -static-libstdc++ -static-libgcc -Wl,--exclude-libs,ALL \
  -Wl,--version-script=src/cupti/exports.map -lpthread -ldl > "$R/tracer_build.txt" 2>&1
export VOUCH=$PWD/.carry/bin/vouch PYTHONPATH=$PWD/python
mkdir -p "$R/modes"
OUT=$R/modes timeout 400 bash tests/gpu/check_modes_ab.sh
echo "check_modes_ab.sh exit $?" | tee -a "$R/machine.txt"
find "$R" -name 'gpu-trace.*.jsonl' -size +2M -delete
cat "$R/modes/summary.txt" "$R/modes/status.txt"
grep -h "decided by rank\|kernel mix\|rank test" "$R"/modes/*.out | head -12
tar -czf "$O/call2.tar.gz" -C "$O" r && rm -rf "$R"
