#!/usr/bin/env bash
# GPU check: a traced leg whose program runs its own profiler is right or refused, never zero
# (issue 35, items 2 and 3). On a machine with an NVIDIA GPU and PyTorch:
#   VOUCH=.carry/bin/vouch bash tests/gpu/check_profiler.sh OUTDIR
# Each case is one `vouch run --gpu-trace` leg of tests/gpu/profiler_leg.py (a loop of N
# one-kernel adds inside vouch.region("step")). A case passes when the leg is valid with
# gpu.kernels equal to the kernels the program launched in its region ("right"), or invalid
# with a "gpu trace:" reason and no gpu.* figure in its record ("refused"). Valid with any
# other count, or a gpu.* figure beside a refusal, fails. Cases (status.txt lists each):
#   none          no profiler: must be right (the control)
#   torch         torch.profiler(CPU, CUDA) around the region
#   torch_late    torch.profiler over the middle half of the region
#   graph         no profiler; a CUDA graph captured outside the region, replayed inside: must
#                 be right (captured launches are not counted as launches)
#   count_off     torch, with the tracer's launch count off (VOUCH_GPU_TRACE_COUNT=off): only
#                 the sampler's rule can refuse it
#   kineto_env    KINETO_USE_DAEMON=1 (PyTorch's on-demand Kineto); with dynolog's `dyno` on PATH
#                 a `dyno gputrace` request is sent while the loop runs, else it is said
#   ncu           `ncu` as the leg's wrapper (when ncu is on PATH)
# Also kept: each leg's trace header (which CUPTI, path and version, and why; the launch count
# mode) in OUTDIR/headers.txt, and `vouch show` of each run (the record gives the same answer).
# CASES picks cases (default all); ITERS the loop length (default 100000). Never touches clocks.
set -u
OUT=${1:?usage: check_profiler.sh OUTDIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VOUCH=${VOUCH:-$ROOT/build/vouch}
case "$VOUCH" in /*) ;; *) VOUCH=$ROOT/$VOUCH ;; esac
export VOUCH_LOCK_FILE=${VOUCH_LOCK_FILE:-/tmp/vouch-gpu-check.lock}
export PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH}
PY=${PYTHON:-python3}
ITERS=${ITERS:-100000}
CASES=" ${CASES:-none graph torch torch_late count_off kineto_env ncu} "
want() { case "$CASES" in *" $1 "*) return 0 ;; esac; return 1; }
: > "$OUT/status.txt"
: > "$OUT/headers.txt"
fail=0
note() { echo "$*" | tee -a "$OUT/status.txt"; }

date -u +%Y-%m-%dT%H:%M:%SZ > "$OUT/date.txt"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
"$VOUCH" --version > "$OUT/vouch_version.txt" 2>&1
"$PY" -c "import torch; print(torch.__version__, torch.version.cuda)" > "$OUT/torch_version.txt" 2>&1
"$PY" -c "import glob, os, torch; print('\n'.join(glob.glob(os.path.join(os.path.dirname(torch.__file__), '..', 'nvidia', '*', 'lib', 'libcupti*'))))" > "$OUT/torch_cupti.txt" 2>&1
(nproc; uptime) > "$OUT/machine.txt" 2>&1

# judge CASE: reads OUT/CASE/record.json; prints one line; exit 0 when right or refused.
judge() {
  "$PY" - "$OUT/$1" "$1" <<'EOF'
import glob, json, os, sys
d, case = sys.argv[1], sys.argv[2]
rec = json.load(open(os.path.join(d, "record.json")))
leg = [l for l in rec["legs"] if l["role"] == "measured"][0]
gpu = {m["name"]: m.get("value") for m in leg["metrics"] if m["name"].startswith("gpu.")}
out = open(os.path.join(d, leg["dir"], "stdout.txt")).read().strip().splitlines()
prog = json.loads(out[-1]) if out and out[-1].startswith("{") else {}
launched = prog.get("launched")
for f in sorted(glob.glob(os.path.join(d, leg["dir"], "gpu-trace.*.jsonl"))):
    h = json.loads(open(f).readline())
    keep = {k: h.get(k) for k in ("pid", "cupti_path", "cupti_loaded_version", "cupti_choice",
                                  "cupti_version", "launch_count", "subscribe_error",
                                  "other_subscriber", "error", "ok")}
    print("%s %s: %s" % (case, os.path.basename(f), json.dumps(keep)), file=open(os.path.join(os.path.dirname(d), "headers.txt"), "a"))
gt = leg.get("gpu_trace") or {}
checks = gt.get("tracer_checks", [])
if leg["valid"]:
    k = gpu.get("gpu.kernels")
    ok = k is not None and launched is not None and int(k) == int(launched)
    print("%s: %s: valid, gpu.kernels %s of %s launched, gpu.active_ns %s, profiler saw %s; checks %s"
          % (case, "right" if ok else "WRONG", k, launched, gpu.get("gpu.active_ns"),
             prog.get("profiler_cuda_events"), json.dumps(checks)))
else:
    by_trace = [r for r in leg["reasons"] if r.startswith("gpu trace")]
    ok = not gpu and case not in ("none", "graph")  # no profiler of their own: must be right
    print("%s: %s: invalid, %d gpu.* figures; launched %s, profiler saw %s; reasons: %s"
          % (case, ("refused" if by_trace else "refused (not by the trace)") if ok else "WRONG",
             len(gpu), launched, prog.get("profiler_cuda_events"), " | ".join(leg["reasons"])))
sys.exit(0 if ok else 1)
EOF
}

# leg CASE ENV... -- COMMAND...: one vouch run --gpu-trace leg, judged.
leg() {
  local c=$1
  shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  rm -rf "$OUT/$c"
  env "${envs[@]}" "$VOUCH" run --gpu-trace --warmup 0 --reps 1 --out "$OUT/$c" -- "$@" \
    > "$OUT/$c.out" 2> "$OUT/$c.err"
  note "$c: vouch run rc=$?"
  if [ ! -f "$OUT/$c/record.json" ]; then note "$c: FAIL: no record"; fail=1; return; fi
  judge "$c" >> "$OUT/status.txt" 2>&1 || fail=1
  tail -1 "$OUT/status.txt"
  "$VOUCH" show "$OUT/$c" > "$OUT/$c.show.txt" 2>&1
  find "$OUT/$c" -name 'gpu-trace.*.jsonl' -size +20M -delete 2>/dev/null
}

P="$PY $HERE/profiler_leg.py"
want none && leg none -- $P none --iters "$ITERS"
want graph && leg graph -- $P graph --iters "$ITERS"
want torch && leg torch -- $P torch_profiler --iters "$ITERS"
want torch_late && leg torch_late -- $P torch_late --iters "$ITERS"
want count_off && leg count_off VOUCH_GPU_TRACE_COUNT=off -- $P torch_profiler --iters "$ITERS"
if want kineto_env; then
  if command -v dyno > /dev/null 2>&1; then
    # The request goes to the leg's Python process once it runs; the loop is slowed to ~10 s.
    ( sleep 6; pid=$(pgrep -f "profiler_leg.py kineto_env" | head -1)
      [ -n "$pid" ] && dyno gputrace --pids "$pid" --duration-ms 3000 --log-file "$OUT/ondemand.json" ) \
      > "$OUT/dyno.out" 2>&1 &
    leg kineto_env KINETO_USE_DAEMON=1 -- $P kineto_env --iters 20000 --sleep-s 0.0005
    wait
  else
    note "kineto_env: dynolog's dyno is not on PATH: the on-demand request is not sent (the leg runs with KINETO_USE_DAEMON=1 only)"
    leg kineto_env KINETO_USE_DAEMON=1 -- $P kineto_env --iters "$ITERS"
  fi
fi
if want ncu; then
  if command -v ncu > /dev/null 2>&1; then
    leg ncu -- ncu --target-processes all --launch-count 20 -o "$OUT/ncu_report" -f $P none --iters 20000
  else
    note "ncu: not on PATH: skipped"
  fi
fi
cat "$OUT/headers.txt" >> "$OUT/status.txt"
note "check_profiler: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
