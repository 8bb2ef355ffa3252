#!/usr/bin/env bash
# The CUPTI tracer's cost, as vouch A/Bs on one machine with a GPU (docs/BENCHMARKS.md):
#   VOUCH=.carry/bin/vouch VOUCH_CUPTI_LIB=.carry/lib/libvouch_cupti.so bash bench/cupti/cost.sh OUTDIR
# Three PyTorch loops (tests/gpu/tracer_torch.py load): back-to-back tiny kernels (the worst
# case), tiny kernels with 200 us of host work between launches (about 5000 launches/s, the
# decode-like case) and long spin kernels (1 ms each; matrix products hit the H200's power cap
# and the clock wandered out of every window). Each loop marks its measured region (begin/end
# on VOUCH_METRICS), torch.profiler's set-up and export outside it; the loops are host-bound by
# design, so the window's busy floor is lowered to 10 % (--min-busy-pct), the clock rules stay. For each loop, two A/Bs of the same command:
# untraced (A) against traced by libvouch_cupti.so (B), and untraced against torch.profiler
# (the peer, in the same run). The headline is the loop's iters_per_s over the SECS-second (4) loop; the
# ratio B/A and its interval are the cost. Prints one line per A/B; the records stay in OUTDIR.
# 2 + 2*PAIRS legs of ~7 s per A/B (about 100 s): LOOPS="short" (or short_5k, long) runs one loop's two A/Bs.
set -u
OUT=${1:?usage: cost.sh OUTDIR}
mkdir -p "$OUT/traces"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VOUCH=${VOUCH:-$ROOT/build/vouch}
LIB=${VOUCH_CUPTI_LIB:?set VOUCH_CUPTI_LIB to libvouch_cupti.so}
PY=${PYTHON:-python3}
PAIRS=${PAIRS:-6}
SECS=${SECS:-4}  # each loop's measured seconds (at least 3 s of busy readings at 100 ms)
# The back-to-back loop is seen busy in only about 70 % of its readings (2.8-2.9 s of 3 or 4 s
# on the H200, 2026-12-02: its windows were refused), so it runs twice as long.
SHORT_SECS=${SHORT_SECS:-$((SECS * 2))}
ARMS=" ${ARMS:-traced torchprof} "  # which A/Bs of each loop
LOOPS=" ${LOOPS:-short short_5k long} "  # a subset keeps one run under a time limit
LOAD="$PY $ROOT/tests/gpu/tracer_torch.py load --seconds $SECS"
COMMON="--pairs $PAIRS --seed 11 --band 1 --min-busy-pct 10 --headline iters_per_s"
# MAX_PAIRS: the sequential A/B goes on past PAIRS, a pair at a time, while undecided.
[ -n "${MAX_PAIRS:-}" ] && COMMON="$COMMON --max-pairs $MAX_PAIRS"
rc=0
for loop in "short:--kind short --seconds $SHORT_SECS" "short_5k:--kind short --host-us 200" "long:--kind long"; do
  name=${loop%%:*}
  args=${loop#*:}
  case "$LOOPS" in *" $name "*) ;; *) continue ;; esac
  r1=0 r2=0
  case "$ARMS" in *" traced "*)
  "$VOUCH" ab --a-name untraced --b-name traced --a-env VOUCH_BENCH_ARM=untraced \
    --b-env CUDA_INJECTION64_PATH="$LIB" --b-env NVTX_INJECTION64_PATH="$LIB" \
    --b-env VOUCH_GPU_TRACE="$OUT/traces/$name.%p.jsonl" \
    $COMMON --out "$OUT/$name-traced" \
    --markdown "$OUT/$name-traced.md" -- $LOAD $args > "$OUT/$name-traced.txt" 2>&1
  r1=$?
  rm -f "$OUT"/traces/$name.*.jsonl ;;
  esac
  case "$ARMS" in *" torchprof "*)
  "$VOUCH" ab --a-name untraced --b-name torch_profiler --a-env VOUCH_BENCH_ARM=untraced \
    --b-env TRACER_TORCH_PROFILER=1 $COMMON \
    --out "$OUT/$name-torchprof" --markdown "$OUT/$name-torchprof.md" -- $LOAD $args \
    > "$OUT/$name-torchprof.txt" 2>&1
  r2=$? ;;
  esac
  for k in $ARMS; do
    find "$OUT/$name-$k" -name samples.jsonl -delete 2>/dev/null
    printf '%-9s %-10s ' "$name" "$k"
    grep -h "A/B verdict\|  ratio" "$OUT/$name-$k.txt" | tr '\n' ' '
    echo
  done
  # Exit 0 or 2 (decided or inconclusive) are results; anything else is a failure to measure.
  for r in $r1 $r2; do [ "$r" = 0 ] || [ "$r" = 2 ] || rc=1; done
done
exit $rc
