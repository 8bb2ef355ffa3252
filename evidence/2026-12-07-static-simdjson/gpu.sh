#!/usr/bin/env bash
# Stop 46's one GPU call (issue 39, start-up): the release configuration's binary (Release,
# VOUCH_PORTABLE, VOUCH_STATIC_DEPS, Debian's simdjson compiled in from its source package,
# libstdc++ static), built on Debian 12 and carried in .carry/bin, on the GPU machine
# (Ubuntu 24.04). It needs only libc, libm and the loader there. Checks: it starts; it reads a
# Kineto trace and an ncu CSV (the simdjson and CSV readers); and tests/gpu/check_profiler.sh
# (issue 35's traced legs, with the CUPTI tracer built there as in 2026-12-06's call 1).
set -u
O=${OUT:?}
R=$O/r
mkdir -p "$R"
{ date -u; uptime; nproc; uname -r; grep PRETTY /etc/os-release
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'; } > "$R/machine.txt" 2>&1
export VOUCH=$PWD/.carry/bin/vouch PYTHONPATH=$PWD/python
{ "$VOUCH" --version; echo "--version exit $?"; ldd "$VOUCH"; } >> "$R/machine.txt" 2>&1
# Start-up on this machine: 300 runs of --version against /bin/true (no hyperfine here).
python3 - "$VOUCH" >> "$R/machine.txt" 2>&1 <<'PY'
import os, sys, time
def t(cmd, n=300):
    best = []
    for _ in range(n):
        t0 = time.perf_counter(); pid = os.posix_spawn(cmd[0], cmd, os.environ); os.waitpid(pid, 0)
        best.append(time.perf_counter() - t0)
    best.sort(); return best[len(best) // 2] * 1e3
print(f"start-up median: vouch --version {t([sys.argv[1], '--version']):.2f} ms, /bin/true {t(['/bin/true']):.2f} ms")
PY
"$VOUCH" trace summarize .carry/fixtures/kineto_lm_small.json.gz > "$R/trace_summarize.txt" 2>&1
echo "trace summarize exit $?" | tee -a "$R/machine.txt"
"$VOUCH" ncu .carry/fixtures/ncu_raw.csv > "$R/ncu.txt" 2>&1
echo "ncu exit $?" | tee -a "$R/machine.txt"
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
export LD_LIBRARY_PATH=$PWD/.carry/lib
PROFILER_LEG_NUMEL_LOG2=25 ITERS=50000 timeout 300 bash tests/gpu/check_profiler.sh "$R/profiler"
echo "check_profiler.sh exit $?" | tee -a "$R/machine.txt"
find "$R" -name 'gpu-trace.*.jsonl' -size +2M -delete
find "$R" -name 'samples*' -size +2M -delete
cat "$R/machine.txt" "$R/profiler/status.txt" 2>/dev/null
head -30 "$R/trace_summarize.txt" "$R/ncu.txt"
tar -czf "$O/call.tar.gz" -C "$O" r && rm -rf "$R"
ls -la "$O"
