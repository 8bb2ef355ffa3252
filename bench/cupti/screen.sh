#!/usr/bin/env bash
# Screens the CUPTI tracer's switches for their cost, on a machine with a GPU, nvcc and PyTorch:
#   bash bench/cupti/screen.sh OUTDIR
# Builds libvouch_cupti.so twice from src/cupti/tracer.cc and options.cc with nvcc (as shipped, and with
# -DVOUCH_CUPTI_DISCARD: records counted, never formatted or written) and bench/cupti/launch_cost.cu,
# then runs, for each configuration (CONFIGS below) in ROUNDS rounds, in an order shuffled per round
# (seeded), the loads in LOADS (default "b2b h200 torch5k"): launch_cost back to back (b2b:
# --host-us 0, 50,000 launches, or B2B_ARGS), launch_cost with 200 us of host work between
# launches (h200: about 5,000 launches/s), the cost bench's PyTorch loop short_5k (torch5k:
# tests/gpu/tracer_torch.py load --kind short --host-us 200) and its back-to-back loop
# (torchb2b: --kind short). Writes OUTDIR/screen.jsonl (one line per measurement) and prints the
# medians with each configuration's ratio to untraced.
# A screen, not a verdict: the configuration it picks is then measured as a vouch A/B by
# bench/cupti/cost.sh.
set -euo pipefail
OUT=${1:?usage: screen.sh OUTDIR}
mkdir -p "$OUT/traces"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PYTHON:-python3}
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-2}
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
INC="-I$CUDA_HOME/include -I$CUDA_HOME/extras/CUPTI/include"
LIBS="-L$CUDA_HOME/lib64 -L$CUDA_HOME/extras/CUPTI/lib64 -lcupti -ldl"
DEFS=""
build_lib() {  # OUTPUT EXTRA_FLAGS
  nvcc -std=c++17 -O2 -shared -Xcompiler -fPIC,-fvisibility=hidden $DEFS $2 -o "$1" \
    "$ROOT/src/cupti/tracer.cc" "$ROOT/src/cupti/options.cc" "$ROOT/src/cupti/loader.cc" "$ROOT/src/cupti/select.cc" "$ROOT/src/cupti/counter.cc" $INC $LIBS -Xlinker -rpath,"$CUDA_HOME/lib64" \
    -Xlinker --version-script="$ROOT/src/cupti/exports.map"
}
build_lib "$OUT/libvouch_cupti.so" ""
build_lib "$OUT/libvouch_cupti_discard.so" "-DVOUCH_CUPTI_DISCARD"
nvcc -O2 -arch=sm_90 -o "$OUT/launch_cost" "$ROOT/bench/cupti/launch_cost.cu"
echo "built (defines: ${DEFS:-none})"

LIB=$OUT/libvouch_cupti.so
T="CUDA_INJECTION64_PATH=$LIB NVTX_INJECTION64_PATH=$LIB"
# name|environment (space-separated assignments; VOUCH_GPU_TRACE is added per run). "shipped" is
# the tracer's defaults (launch-API records off since 2026-12-02); "api_on" the defaults of
# 2026-12-01 (launch-API records on); "before" those of 2026-11 (also a forced flush every
# second, 8 MiB buffers). ONLY="shipped|api_on" runs a subset (untraced always).
CONFIGS=(
  "untraced|"
  "shipped|$T"
  "before|$T VOUCH_GPU_TRACE_API=on VOUCH_GPU_TRACE_FLUSH_MS=1000 VOUCH_GPU_TRACE_BUFFER_MB=8"
  "flush_1s|$T VOUCH_GPU_TRACE_FLUSH_MS=1000"
  "api_on|$T VOUCH_GPU_TRACE_API=on"
  "clock_cupti|$T VOUCH_GPU_TRACE_CLOCK=cupti"
  "buf_8mb|$T VOUCH_GPU_TRACE_BUFFER_MB=8"
  "discard|CUDA_INJECTION64_PATH=$OUT/libvouch_cupti_discard.so"
)
LOADS=${LOADS:-b2b h200 torch5k}
B2B_ARGS=${B2B_ARGS:---launches 50000}
[ -n "${ONLY:-}" ] && mapfile -t CONFIGS < <(printf '%s\n' "${CONFIGS[@]}" | grep -E "^(untraced|${ONLY})\|")

one() {  # NAME ENV LOAD
  local name=$1 env=$2 load=$3 line
  local trace=""
  [ -n "$env" ] && trace="VOUCH_GPU_TRACE=$OUT/traces/$name.$load.%p.jsonl"
  case $load in
    b2b) line=$(env $env $trace "$OUT/launch_cost" --host-us 0 $B2B_ARGS --label "$name") ;;
    h200) line=$(env $env $trace "$OUT/launch_cost" --host-us 200 --seconds "$SECS" --label "$name") ;;
    torch5k | torchb2b)
      local r host=200
      [ $load = torchb2b ] && host=0
      r=$(env $env $trace "$PY" "$ROOT/tests/gpu/tracer_torch.py" load --kind short --host-us $host \
        --seconds "$SECS" | sed -n 's/^iters_per_s=\([0-9.]*\).*/\1/p')
      line="{\"label\":\"$name\",\"iters_per_s\":${r:-0}}" ;;
  esac
  echo "{\"config\":\"$name\",\"load\":\"$load\",\"round\":$round,\"result\":$line}" >> "$OUT/screen.jsonl"
  rm -f "$OUT"/traces/"$name".*.jsonl* 2>/dev/null || true
}

: > "$OUT/screen.jsonl"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$OUT/clocks_before.csv" 2>&1 || true
for round in $(seq 1 "$ROUNDS"); do
  mapfile -t order < <(printf '%s\n' "${CONFIGS[@]}" | "$PY" -c "import random,sys; l=sys.stdin.read().splitlines(); random.Random($round).shuffle(l); print('\n'.join(l))")
  for c in "${order[@]}"; do
    for load in $LOADS; do one "${c%%|*}" "${c#*|}" "$load"; done
  done
  echo "round $round done"
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$OUT/clocks_after.csv" 2>&1 || true

# Keep one trace of each traced configuration's torch loop, to check what it recorded.
for c in "${CONFIGS[@]}"; do
  name=${c%%|*} env=${c#*|}
  [ -z "$env" ] && continue
  env $env VOUCH_GPU_TRACE="$OUT/traces/$name.check.jsonl" "$OUT/launch_cost" --launches 2000 --label "$name" > /dev/null
  { printf '%s ' "$name"; head -1 "$OUT/traces/$name.check.jsonl" | cut -c1-400; echo;
    printf '  kernels %s api %s footer %s\n' "$(grep -c '"t":"k"' "$OUT/traces/$name.check.jsonl")" \
      "$(grep -c '"t":"a"' "$OUT/traces/$name.check.jsonl")" "$(tail -1 "$OUT/traces/$name.check.jsonl" | cut -c1-300)"; } >> "$OUT/check.txt"
done

"$PY" - "$OUT/screen.jsonl" <<'EOF' | tee "$OUT/summary.txt"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault((r["config"], r["load"]), []).append(r["result"])
configs = list(dict.fromkeys(r["config"] for r in rows))
def med(k, f):
    v = [x[f] for x in by.get(k, []) if x.get(f)]
    return statistics.median(v) if v else float("nan")
base = {l: med(("untraced", l), f) for l, f in [("b2b", "call_ns_mean"), ("h200", "call_ns_mean"), ("torch5k", "iters_per_s"), ("torchb2b", "iters_per_s")]}
bl0 = med(("untraced", "b2b"), "launches_per_s")
print(f"{'config':12} {'b2b call ns (mean/med)':>24} {'+ns':>6} {'b2b launches/s':>15} {'ratio':>7} {'5k call ns (mean/med)':>22} {'+ns':>6} {'5k launches/s':>14} {'torch5k it/s':>13} {'ratio':>7} {'torchb2b it/s':>14} {'ratio':>7}")
for c in configs:
    bm, bmed = med((c, "b2b"), "call_ns_mean"), med((c, "b2b"), "call_ns_median")
    bl = med((c, "b2b"), "launches_per_s")
    hm, hmed = med((c, "h200"), "call_ns_mean"), med((c, "h200"), "call_ns_median")
    hl = med((c, "h200"), "launches_per_s")
    t = med((c, "torch5k"), "iters_per_s")
    tb = med((c, "torchb2b"), "iters_per_s")
    print(f"{c:12} {bm:11.0f} /{bmed:7.0f} {bm - base['b2b']:6.0f} {bl:15.0f} {bl / bl0:7.4f} {hm:10.0f} /{hmed:7.0f} {hm - base['h200']:6.0f} {hl:14.1f} {t:13.1f} {t / base['torch5k']:7.4f} {tb:14.1f} {tb / base['torchb2b']:7.4f}")
EOF
