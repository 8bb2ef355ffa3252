#!/usr/bin/env bash
# Benchmark: `vouch trace summarize` on a >= 1 GB Kineto trace, against the reference reader
# ../shared/bench-reference/kineto_simdjson_stream.cc (built here; alternated ROUNDS times,
# default 5, CPU time of each process, the throughput ratio printed), then the detailed rows
# and Python's json module doing the same summary (tests/data/trace/independent_summary.py)
# on a 200 MB slice of the same events (Python on the full GB would take minutes and ~10 GB
# of RAM). NO_DETAIL=1 stops after the ratio.
#
# usage: bench/trace/bench_kineto.sh [VOUCH] [WORKDIR]      (from the repository root)
# Needs ~1.3 GB of disk in WORKDIR (default /tmp/vouch_trace_bench); deletes it after.
# Environment: NO_PYTHON=1 skips the (slow) Python rows; KEEP=1 keeps WORKDIR and reuses
# big.json and slice.json found there (to compare two builds on the same files: delete
# WORKDIR by hand afterwards); REPS=N runs each vouch row N times (default 1).
set -eu
VOUCH=${1:-./build/vouch}
W=${2:-/tmp/vouch_trace_bench}
FIX=tests/fixtures/kineto_lm_small.json.gz
mkdir -p "$W"
if [ "${KEEP:-0}" != 1 ]; then trap 'rm -rf "$W"' EXIT; fi
[ -s "$W/big.json" ] || python3 bench/trace/gen_kineto.py "$FIX" "$W/big.json" --mb 1080
[ -s "$W/slice.json" ] || python3 bench/trace/gen_kineto.py "$FIX" "$W/slice.json" --mb 200

measure() {  # measure LABEL BYTES COMMAND...
  local label=$1 bytes=$2
  shift 2
  /usr/bin/time -v "$@" > "$W/out.txt" 2> "$W/time.txt" || { cat "$W/time.txt"; exit 1; }
  local wall user rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$W/time.txt")
  user=$(awk -F': ' '/User time/ {print $2}' "$W/time.txt")
  sys=$(awk -F': ' '/System time/ {print $2}' "$W/time.txt")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$W/time.txt")
  awk -v l="$label" -v b="$bytes" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" 'BEGIN {
    printf "| %-44s | %8.1f MB | %7.2f s | %7.2f s | %8.1f MB/s | %7.0f MB | %5.2fx |\n",
      l, b/1e6, w, u+s, b/1e6/(u+s), r/1024, r*1024/b }'
}

BIG=$(stat -c %s "$W/big.json")
SLICE=$(stat -c %s "$W/slice.json")
# The reference reader (simdjson On-Demand, streaming, 5 fields per event), built here with
# the flags its README gives, alternated with vouch's whole-trace summary on the same file.
REF_SRC=${REF_SRC:-../shared/bench-reference/kineto_simdjson_stream.cc}
[ -f "$REF_SRC" ] || REF_SRC=/work/shared/bench-reference/kineto_simdjson_stream.cc
g++ -std=c++17 -O2 -DNDEBUG "$REF_SRC" -o "$W/kineto_ref" -lsimdjson
cpu_of() {  # cpu_of COMMAND... : prints the process's user+sys seconds
  /usr/bin/time -f "%U %S" -o "$W/t.txt" "$@" > "$W/o.txt" 2> /dev/null || { cat "$W/o.txt"; exit 1; }
  awk '{print $1 + $2}' "$W/t.txt"
}
echo "# $(date -u +%FT%TZ) $(uname -n) nproc=$(nproc) load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$W/kineto_ref" "$W/big.json" > "$W/ref.json"
echo "# reference: $(cat "$W/ref.json")"
echo "| round | reference cpu | reference MB/s | vouch whole-trace cpu | vouch MB/s | vouch / reference throughput |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
for r in $(seq "${ROUNDS:-5}"); do
  ref=$(cpu_of "$W/kineto_ref" "$W/big.json")
  vch=$(cpu_of "$VOUCH" trace summarize "$W/big.json" --json)
  awk -v r="$r" -v b="$BIG" -v a="$ref" -v v="$vch" 'BEGIN {
    printf "| %d | %.2f s | %.0f | %.2f s | %.0f | %.2fx |\n", r, a, b/1e6/a, v, b/1e6/v, a/v }'
done
[ "${NO_DETAIL:-0}" = 1 ] && exit 0
echo
echo "| run | input | wall | cpu (user+sys) | MB/s of cpu | peak RSS | RSS / file |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for _ in $(seq "${REPS:-1}"); do
  measure "vouch summarize --window decode_step (1 GB)" "$BIG" "$VOUCH" trace summarize "$W/big.json" --window decode_step --json
  measure "vouch summarize whole trace (1 GB)" "$BIG" "$VOUCH" trace summarize "$W/big.json" --json
  measure "vouch summarize --window decode_step (slice)" "$SLICE" "$VOUCH" trace summarize "$W/slice.json" --window decode_step --json
done
[ "${NO_PYTHON:-0}" = 1 ] && exit 0
measure "python json, floats, --window (slice)" "$SLICE" python3 tests/data/trace/independent_summary.py "$W/slice.json" --window decode_step --float
measure "python json, Decimal (exact), --window (slice)" "$SLICE" python3 tests/data/trace/independent_summary.py "$W/slice.json" --window decode_step
