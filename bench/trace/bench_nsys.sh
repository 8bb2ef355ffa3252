#!/usr/bin/env bash
# Benchmark: `vouch trace summarize` on an Nsight Systems-style SQLite database with
# 5 million kernel rows (generated from the documented schema by gen_nsys.py), whole trace
# and --window decode_step (NVTX ranges, attribution by correlation id), alternated with the
# reference: the `sqlite3` shell running the same aggregates over the same rows (kernel count,
# sum, min start, max end; per kernel name count, sum, min, max; launch-API count and sum),
# which is less than vouch computes (no union, gaps, medians or windows). Prints the ratio.
#
# BASE=OTHER_VOUCH also times a second build in the same rounds (before/after) and checks that
# its summaries (--json, whole and window, and the text summary) are byte-identical to VOUCH's.
# The last lines give each run's median kernel rows/s and median ratio to sqlite3.
#
# usage: bench/trace/bench_nsys.sh [VOUCH] [WORKDIR] [KERNELS]     (from the repository root)
# ROUNDS=N alternated rounds (default 3); KEEP=1 keeps WORKDIR and reuses its database.
set -eu
VOUCH=${1:-./build-rel/vouch}
W=${2:-/tmp/vouch_nsys_bench}
N=${3:-5000000}
mkdir -p "$W"
if [ "${KEEP:-0}" != 1 ]; then trap 'rm -rf "$W"' EXIT; fi
[ -s "$W/db.sqlite" ] || python3 bench/trace/gen_nsys.py "$W/db.sqlite" --kernels "$N" > /dev/null
cp bench/trace/nsys_whole.sql "$W/aggregates.sql"
measure() {  # measure OUT COMMAND... : sets WALL CPU RSS
  /usr/bin/time -v "$@" > "$W/out.txt" 2> "$W/time.txt" || { cat "$W/time.txt"; exit 1; }
  read -r WALL CPU RSS < <(awk -F': ' '
    /Elapsed \(wall clock\)/ {k=split($2,a,":"); w=0; for(i=1;i<=k;i++) w=w*60+a[i]}
    /User time/ {u=$2} /System time/ {s=$2} /Maximum resident set size/ {r=$2}
    END {printf "%.2f %.2f %.0f\n", w, u+s, r/1024}' "$W/time.txt")
}
BASE=${BASE:-}
if [ -n "$BASE" ]; then  # byte-identical output, checked before timing anything
  for args in "--json" "--window decode_step --json" "" "--window decode_step"; do
    # shellcheck disable=SC2086
    "$VOUCH" trace summarize "$W/db.sqlite" $args > "$W/new.out"
    # shellcheck disable=SC2086
    "$BASE" trace summarize "$W/db.sqlite" $args > "$W/base.out"
    if ! cmp -s "$W/new.out" "$W/base.out"; then
      echo "bench_nsys: FAIL: 'trace summarize $args' differs between $VOUCH and $BASE" >&2
      diff "$W/base.out" "$W/new.out" | head -20 >&2
      exit 1
    fi
  done
  echo "# outputs byte-identical to $BASE (--json and text, whole and --window decode_step)"
fi
echo "# $(date -u +%FT%TZ) $(uname -n) nproc=$(nproc) load: $(cut -d' ' -f1-3 /proc/loadavg); $N kernel rows + $N runtime rows"
echo "| round | run | wall | cpu (user+sys) | kernel rows/s of cpu | peak RSS | sqlite3 cpu, same round | vouch / sqlite3 speed |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
: > "$W/rows.txt"
for r in $(seq "${ROUNDS:-3}"); do
  measure sqlite3 -readonly "$W/db.sqlite" ".read $W/aggregates.sql"
  ref=$CPU
  for bin in "$VOUCH" ${BASE:+"$BASE"}; do
    label=vouch
    [ "$bin" = "$BASE" ] && label=base
    for mode in whole window; do
      args=()
      [ $mode = window ] && args=(--window decode_step)
      measure "$bin" trace summarize "$W/db.sqlite" "${args[@]}" --json
      awk -v r="$r" -v m="$label summarize $mode" -v n="$N" -v w="$WALL" -v c="$CPU" -v rss="$RSS" \
        -v ref="$ref" 'BEGIN {
        printf "| %d | %s | %.2f s | %.2f s | %.2f M/s | %d MB | %.2f s | %.2fx |\n",
          r, m, w, c, n/c/1e6, rss, ref, ref/c }'
      echo "$label-$mode $N $CPU $ref" >> "$W/rows.txt"
    done
  done
done
# Medians over the rounds, per run.
for run in $(cut -d' ' -f1 "$W/rows.txt" | sort -u); do
  grep "^$run " "$W/rows.txt" | awk '{print $2/$3/1e6, $4/$3}' | sort -n | awk -v run="$run" '
    { rate[NR] = $1; ratio[NR] = $2 }
    END { m = int((NR + 1) / 2); printf "# median %s: %.2f M kernel rows/s, ", run, rate[m] }'
  grep "^$run " "$W/rows.txt" | awk '{print $4/$3}' | sort -n | awk '
    { v[NR] = $1 } END { m = int((NR + 1) / 2); printf "%.2fx sqlite3\n", v[m] }'
done
