#!/usr/bin/env bash
# Benchmark: `vouch trace summarize` on an Nsight Systems-style SQLite database with
# 5 million kernel rows (generated from the documented schema by gen_nsys.py), whole trace
# and --window decode_step (NVTX ranges, attribution by correlation id).
#
# usage: bench/trace/bench_nsys.sh [VOUCH] [WORKDIR] [KERNELS]     (from the repository root)
set -eu
VOUCH=${1:-./build/vouch}
W=${2:-/tmp/vouch_nsys_bench}
N=${3:-5000000}
mkdir -p "$W"
trap 'rm -rf "$W"' EXIT
python3 bench/trace/gen_nsys.py "$W/db.sqlite" --kernels "$N"
echo "| run | kernel rows | wall | cpu (user+sys) | kernel rows/s of cpu | peak RSS |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for mode in whole window; do
  args=()
  [ $mode = window ] && args=(--window decode_step)
  /usr/bin/time -v "$VOUCH" trace summarize "$W/db.sqlite" "${args[@]}" --json > "$W/out.json" 2> "$W/time.txt"
  awk -F': ' -v m="$mode" -v n="$N" '
    /Elapsed \(wall clock\)/ {k=split($2,a,":"); w=0; for(i=1;i<=k;i++) w=w*60+a[i]}
    /User time/ {u=$2} /System time/ {s=$2} /Maximum resident set size/ {r=$2}
    END {printf "| summarize %s | %d | %.2f s | %.2f s | %.2f M/s | %.0f MB |\n", m, n, w, u+s, n/(u+s)/1e6, r/1024}' "$W/time.txt"
done
