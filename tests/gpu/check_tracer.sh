#!/usr/bin/env bash
# GPU check for the CUPTI tracer and --gpu-trace (issue 10), on a machine with an NVIDIA GPU,
# nvcc and PyTorch:
#   LD_LIBRARY_PATH=$PWD/.carry/lib VOUCH=.carry/bin/vouch bash tests/gpu/check_tracer.sh OUTDIR
# The tracer is $VOUCH_CUPTI_LIB, else .carry/lib/libvouch_cupti.so, else build/…, else it is
# built here from src/cupti/tracer.cc and options.cc with nvcc. Steps (status.txt lists each one):
#   a  a PyTorch region traced by the tracer and by torch.profiler: equal kernel counts
#   b  a CUDA graph replayed: every graph kernel counted, with its graph id and node id
#   p  a process killed by SIGTERM and by SIGKILL mid-run: what was flushed stays, marked partial
#   c  host-bound decode A/B through `vouch ab --gpu-trace` on GPU time per step: B slower in
#      at most 8 pairs (and the same A/B on the wall clock, for comparison)
#   aa an A/A with the same headline: not decided
#   d  two arms running identical kernels: flagged as identity
#   e  the cost bench (bench/cupti/cost.sh): traced vs untraced, torch.profiler as the peer
# PARTS (default "a b p c aa d e") picks the parts, so that each run fits a 10-minute limit; the
# cost bench takes LOOPS (bench/cupti/cost.sh). The recorded activity files are copied to
# OUTDIR/fixtures. Never touches clocks.
set -u
PARTS=" ${PARTS:-a b p c aa d e} "
want() { case "$PARTS" in *" $1 "*) return 0 ;; esac; return 1; }
OUT=${1:?usage: check_tracer.sh OUTDIR}
mkdir -p "$OUT/fixtures"
OUT=$(cd "$OUT" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VOUCH=${VOUCH:-$ROOT/build/vouch}
case "$VOUCH" in /*) ;; *) VOUCH=$ROOT/$VOUCH ;; esac
export VOUCH_LOCK_FILE=${VOUCH_LOCK_FILE:-/tmp/vouch-gpu-check.lock}
PY=${PYTHON:-python3}
: > "$OUT/status.txt"
fail=0
. "$HERE/common.sh"
note() { echo "$*" | tee -a "$OUT/status.txt"; }
check() {  # check NAME PYTHON-EXPRESSION-PROGRAM (reads JSON files; prints ok/FAIL lines)
  local name=$1
  shift
  if "$PY" -c "$@" >> "$OUT/status.txt" 2>&1; then note "check $name: ok"; else note "check $name: FAIL"; fail=1; fi
}

date -u +%Y-%m-%dT%H:%M:%SZ > "$OUT/date.txt"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
"$VOUCH" --version > "$OUT/vouch_version.txt" 2>&1
"$PY" -c "import torch; print(torch.__version__, torch.version.cuda)" > "$OUT/torch_version.txt" 2>&1
(nproc; uptime) > "$OUT/machine.txt" 2>&1

# The tracer library.
LIB=${VOUCH_CUPTI_LIB:-}
for c in "$ROOT/.carry/lib/libvouch_cupti.so" "$ROOT/build/libvouch_cupti.so"; do
  [ -z "$LIB" ] && [ -f "$c" ] && LIB=$c
done
if [ -z "$LIB" ]; then
  CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
  LIB=$OUT/libvouch_cupti.so
  note "building $LIB with nvcc ($CUDA_HOME)"
  nvcc -std=c++17 -O2 -shared -Xcompiler -fPIC,-fvisibility=hidden -o "$LIB" "$ROOT/src/cupti/tracer.cc" "$ROOT/src/cupti/options.cc" "$ROOT/src/cupti/loader.cc" "$ROOT/src/cupti/select.cc" "$ROOT/src/cupti/counter.cc" \
    -I"$CUDA_HOME/include" -I"$CUDA_HOME/extras/CUPTI/include" -L"$CUDA_HOME/lib64" \
    -L"$CUDA_HOME/extras/CUPTI/lib64" -ldl -Xlinker -rpath,"$CUDA_HOME/lib64" \
    -Xlinker --version-script="$ROOT/src/cupti/exports.map" > "$OUT/build_tracer.log" 2>&1 || { note "FAIL: tracer build"; exit 1; }
fi
if ldd "$LIB" | grep -q "not found"; then
  for d in /usr/local/cuda/lib64 /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda-13.0/lib64; do
    [ -e "$d/libcupti.so.13" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}" && break
  done
fi
ldd "$LIB" > "$OUT/ldd_tracer.txt" 2>&1
note "tracer: $LIB"
# Trace one command: T FILE_PATTERN COMMAND...
T() {
  local pat=$1
  shift
  CUDA_INJECTION64_PATH=$LIB NVTX_INJECTION64_PATH=$LIB VOUCH_GPU_TRACE=$pat "$@"
}
newest() { ls -t $1 2>/dev/null | head -1; }

# Programs.
nvcc -O2 -arch=sm_90 -o "$OUT/tracer_graph" "$HERE/tracer_graph.cu" > "$OUT/build_graph.log" 2>&1 || { note "FAIL: nvcc tracer_graph"; fail=1; }

F=$OUT/fixtures
# (a) PyTorch region: tracer vs torch.profiler.
if want a; then
step a_traced 0 T "$F/torch_count.%p.jsonl" "$PY" "$HERE/tracer_torch.py" count
step a_torch_profiler 0 "$PY" "$HERE/tracer_torch.py" count --torch-profiler --trace "$OUT/torch_count_kineto.json"
A_TRACE=$(newest "$F/torch_count.*.jsonl")
step a_count 0 "$PY" "$HERE/tracer_count.py" "$A_TRACE" --region region
check a_equal "
import json
t = json.load(open('$OUT/a_count.out'))
p = json.loads(open('$OUT/a_torch_profiler.out').read().strip().splitlines()[-1])
n, m = t['regions']['region']['kernels_by_time'], p['torch_profiler_kernels']
print(f'(a) kernels over region: tracer {n} (by launch {t[\"regions\"][\"region\"][\"kernels_by_launch\"]}), torch.profiler {m}; dropped {t[\"dropped\"]} partial {t[\"partial\"]}')
assert n == m and n > 0 and not t['partial'] and t['dropped'] == 0
"

fi

# (b) CUDA graph replay.
if want b; then
# Launch-API records are opt-in (VOUCH_GPU_TRACE_API=on): this step counts graph launch calls.
step b_traced 0 T "$F/graph.%p.jsonl" env VOUCH_GPU_TRACE_API=on "$OUT/tracer_graph" 6 50 20
B_TRACE=$(newest "$F/graph.*.jsonl")
step b_count 0 "$PY" "$HERE/tracer_count.py" "$B_TRACE" --region replay --region plain
check b_graph "
import json
t = json.load(open('$OUT/b_count.out'))
w = json.loads(open('$OUT/b_traced.out').read().strip().splitlines()[-1])
r = t['regions']
print(f'(b) graph kernels: tracer {t[\"graph_kernels\"]} (ids {t[\"graph_ids\"]}, nodes {t[\"graph_nodes\"]}), launched {w[\"graph_kernels\"]}; replay region {r[\"replay\"][\"kernels_by_time\"]}, plain region {r[\"plain\"][\"kernels_by_time\"]} of {w[\"plain_kernels\"]}; graph launch calls {t[\"graph_launch_calls\"]}')
assert t['graph_kernels'] == w['graph_kernels'] and t['graph_nodes'] == w['graph_nodes']
assert len(t['graph_ids']) == 1 and r['replay']['kernels_by_time'] == w['graph_kernels']
assert r['plain']['kernels_by_time'] == w['plain_kernels'] and t['graph_launch_calls'] == w['replays']
"

fi

# (p) Partial traces: SIGTERM (flushed by the handler) and SIGKILL (the buffers that filled; at
# ~5,000 launches/s a 2 MiB buffer fills about every second; VOUCH_GPU_TRACE_FLUSH_MS=N adds the
# partly filled ones).
want p && for sig in TERM KILL; do
  # exec: $! is the traced Python process itself, not a subshell around it.
  ( exec env CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB" VOUCH_GPU_TRACE="$F/killed_$sig.%p.jsonl" \
      "$PY" "$HERE/tracer_torch.py" load --kind short --host-us 200 --iters 100000000 ) > "$OUT/p_$sig.out" 2>&1 &
  pid=$!
  sleep 12
  kill -s $sig $pid
  ( sleep 10; kill -s KILL $pid 2>/dev/null ) &
  guard=$!
  wait $pid
  note "p_$sig: exit $? (pid $pid)"
  kill $guard 2>/dev/null
  P=$(newest "$F/killed_$sig.*.jsonl")
  # Keep the fixture small: the header and the first records, as the reader sees a partial file.
  step p_${sig}_count 0 "$PY" "$HERE/tracer_count.py" "$P"
  nsig=$(grep -c '"t":"signal"' "$P")
  check p_$sig "
import json
t = json.load(open('$OUT/p_${sig}_count.out'))
print(f'(p) SIG$sig: partial {t[\"partial\"]}, kernels {t[\"kernels\"]}, signal records $nsig')
assert t['partial'] and t['kernels'] > 1000
assert ('$sig' != 'TERM') or $nsig == 1
"
  { head -200 "$P"; grep '"t":"signal"' "$P"; } > "$F/killed_$sig.head.jsonl"
  rm -f "$P"
done

# (c), (d): through vouch ab --gpu-trace, when this vouch has it.
DEC="$PY $HERE/tracer_torch.py decode --seconds 4 --layers 16"
H=gpu.active_ns_per.decode_step
if ! "$VOUCH" ab --help 2>&1 | grep -q -- "--gpu-trace"; then
  { want c || want aa || want d; } && note "vouch ab has no --gpu-trace yet: (c) and (d) skipped"
elif want c; then
  step c_ab_more_gpu 0 "$VOUCH" ab --gpu-trace --a "$DEC" --b "$DEC --extra 1" --max-pairs 8 --seed 3 --band 1 \
    --headline $H --out "$OUT/c-ab" --markdown "$OUT/c-ab.md"
  grep -q "B slower" "$OUT/c_ab_more_gpu.out" || { note "FAIL: (c) A/B not decided B slower"; fail=1; }
  # The same A/B on the wall clock (informational: the host noise is what GPU time avoids).
  "$VOUCH" ab --a "$DEC" --b "$DEC --extra 1" --pairs 4 --seed 3 --band 1 --headline decode.tokens_per_s \
    --out "$OUT/c-ab-wall" --markdown "$OUT/c-ab-wall.md" > "$OUT/c_ab_wall.out" 2> "$OUT/c_ab_wall.err"
  note "c_ab_wall (informational, wall clock): rc=$?"
  # A leg's trace through the shared trace model.
  LEG=$(ls -d "$OUT"/c-ab/legs/*measured*/ 2>/dev/null | head -1)
  TR=$(ls "$LEG"gpu-trace*.jsonl 2>/dev/null | head -1)
  [ -n "$TR" ] && step c_summarize 0 "$VOUCH" trace summarize "$TR" --window decode_step
  # Small fixtures of the two arms (20 steps each) for the tests without a GPU.
  step c_fixture_a 0 T "$F/decode_a.%p.jsonl" $DEC --steps 20
  step c_fixture_b 0 T "$F/decode_b.%p.jsonl" $DEC --steps 20 --extra 1
  # The legs' raw traces are large (tens of MB each): their folds (gpu-trace.json) stay.
  for d in c-ab c-ab-wall; do
    find "$OUT/$d" \( -name samples.jsonl -o -name 'gpu-trace.*.jsonl' \) -delete 2>/dev/null
  done
  grep -h "A/B verdict\|ratio B/A\|identity\|GPU:" "$OUT"/c_*.out | head -60 >> "$OUT/status.txt"
fi
if "$VOUCH" ab --help 2>&1 | grep -q -- "--gpu-trace" && want aa; then
  # A/A: identical kernels, so identity would refuse any verdict; --change-not-on-gpu lets the
  # statistics speak, and they must not decide.
  "$VOUCH" ab --gpu-trace --change-not-on-gpu --a-env RUN=a --b-env RUN=b --pairs 8 --seed 4 --band 1 \
    --headline $H --out "$OUT/c-aa" --markdown "$OUT/c-aa.md" -- $DEC > "$OUT/c_aa.out" 2> "$OUT/c_aa.err"
  rc=$?
  note "c_aa: rc=$rc (want 0 no change or 2 inconclusive)"
  { [ $rc = 0 ] || [ $rc = 2 ]; } || fail=1
  grep -q "B slower\|B faster" "$OUT/c_aa.out" && { note "FAIL: (c) A/A decided"; fail=1; }
  find "$OUT/c-aa" \( -name samples.jsonl -o -name 'gpu-trace.*.jsonl' \) -delete 2>/dev/null
  grep -h "A/B verdict\|ratio B/A\|identity\|GPU:" "$OUT"/c_aa.out | head -20 >> "$OUT/status.txt"
fi
if "$VOUCH" ab --help 2>&1 | grep -q -- "--gpu-trace" && want d; then
  # (d) B only does more host work: the same kernels, so identity; refused without the flag.
  step d_identity 3 "$VOUCH" ab --gpu-trace --a "$DEC --host-noise-ms 1" --b "$DEC --host-noise-ms 3" --pairs 4 --seed 5 \
    --headline decode.tokens_per_s --out "$OUT/d-identity" --markdown "$OUT/d-identity.md"
  grep -qi "identity" "$OUT/d_identity.out" || { note "FAIL: (d) identity not flagged"; fail=1; }
  step d_identity_host 0 "$VOUCH" ab --gpu-trace --change-not-on-gpu --a "$DEC --host-noise-ms 1" --b "$DEC --host-noise-ms 3" \
    --pairs 4 --seed 5 --headline decode.tokens_per_s --out "$OUT/d-identity-host"
  for d in d-identity d-identity-host; do
    find "$OUT/$d" \( -name samples.jsonl -o -name 'gpu-trace.*.jsonl' \) -delete 2>/dev/null
  done
  grep -h "A/B verdict\|ratio B/A\|identity\|kernel" "$OUT"/d_*.out | head -40 >> "$OUT/status.txt"
fi

# (e) The cost bench.
want e && step e_cost 0 env VOUCH="$VOUCH" VOUCH_CUPTI_LIB="$LIB" PYTHON="$PY" bash "$ROOT/bench/cupti/cost.sh" "$OUT/cost"
want e && cat "$OUT/e_cost.out" >> "$OUT/status.txt"

# Fixtures: gzip the large ones.
[ -f "$OUT/torch_count_kineto.json" ] && gzip -kf "$OUT/torch_count_kineto.json" && mv "$OUT/torch_count_kineto.json.gz" "$F/"
ls -la "$F" >> "$OUT/status.txt"
echo "fail=$fail" | tee -a "$OUT/status.txt"
exit $fail
