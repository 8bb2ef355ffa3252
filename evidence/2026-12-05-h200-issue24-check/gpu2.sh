set -u
# Call 2: the two other loops of issue 24's GPU check (short_5k: ~5,000 launches/s; long: 1 ms
# kernels), traced and torch.profiler, 4 pairs of 4 s, bench/cupti/cost.sh with the tracer as
# h200_default.sh builds it. Results packed in one tarball (the device returns few files).
O=${OUT:?}
export LD_LIBRARY_PATH=$PWD/.carry/lib
W=/tmp/call2; mkdir -p $W
{ date -u; uptime; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; } > $W/machine.txt 2>&1
CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
nvcc -std=c++17 -O2 -shared -Xcompiler -fPIC,-fvisibility=hidden -o $W/libvouch_cupti.so \
  src/cupti/tracer.cc src/cupti/options.cc -I$CUDA_HOME/include -I$CUDA_HOME/extras/CUPTI/include \
  -L$CUDA_HOME/lib64 -L$CUDA_HOME/extras/CUPTI/lib64 -lcupti -ldl -Xlinker -rpath,$CUDA_HOME/lib64 \
  -Xlinker --version-script=src/cupti/exports.map
VOUCH=$PWD/.carry/bin/vouch VOUCH_CUPTI_LIB=$W/libvouch_cupti.so PAIRS=4 SECS=4 LOOPS="short_5k long" \
  timeout 520 bash bench/cupti/cost.sh $W/cost 2>&1 | tee $W/cost.log
echo "cost.sh exit ${PIPESTATUS[0]}"
rm -rf $W/cost/traces $W/libvouch_cupti.so
find $W/cost -name samples.jsonl -delete
tar -C /tmp -czf "$O/call2.tgz" call2
