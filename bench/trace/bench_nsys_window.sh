#!/usr/bin/env bash
# Benchmark: `vouch trace summarize --window decode_step` on an Nsight Systems-style SQLite
# database (gen_nsys.py: N kernel rows, N runtime rows, an NVTX decode_step range over every 64
# launches), alternated with the reference: the `sqlite3` shell computing the window's
# aggregates on the same file (each runtime call tied to the range of its thread it starts in,
# each kernel to its call by correlation id; per instance the kernel count, sum, first start,
# last end; per kernel name count, sum, min, max; per instance the launch calls' count and sum),
# which is less than vouch computes (no union, gaps, overlap, medians). Each round also runs
# the whole-trace summary (no --window): its peak RSS is the window's memory target. A second,
# cheaper anchor is timed too: bench_nsys.sh's whole-trace aggregates (no window, no join by
# time or correlation), which the window summary was compared with before.
#
# CPU time is user+sys and peak RSS GNU time's %M, per run; the load average is written beside
# each round. BASE=OTHER_VOUCH also times a second build in the same rounds and first checks that
# its window summaries (--json and text) are byte-identical to VOUCH's.
#
# usage: bench/trace/bench_nsys_window.sh [VOUCH] [WORKDIR] [KERNELS]   (from the repository root)
# ROUNDS=N alternated rounds (default 3); KEEP=1 keeps WORKDIR and reuses its database.
set -eu
VOUCH=${1:-./build-rel/vouch}
W=${2:-/tmp/vouch_nsys_window_bench}
N=${3:-5000000}
BASE=${BASE:-}
mkdir -p "$W"
if [ "${KEEP:-0}" != 1 ]; then trap 'rm -rf "$W"' EXIT; fi
[ -s "$W/db.sqlite" ] || python3 bench/trace/gen_nsys.py "$W/db.sqlite" --kernels "$N" > /dev/null
cat > "$W/window.sql" <<'SQL'
PRAGMA temp_store = MEMORY;
-- The instances: decode_step ranges, numbered by start.
CREATE TEMP TABLE w AS
  SELECT n.start AS s, n.end AS e, n.globalTid AS tid FROM NVTX_EVENTS n
  LEFT JOIN StringIds t ON t.id = n.textId
  WHERE coalesce(n.text, t.value) = 'decode_step' AND n.eventType IN (59, 60)
    AND n.end IS NOT NULL
  ORDER BY n.start;
-- Each runtime call with the latest instance of its thread that started at or before it, kept
-- where it starts before that instance ends.
CREATE TEMP TABLE c AS
  WITH ev AS (
    SELECT s AS t, 0 AS k, rowid AS inst, tid, NULL AS corr, NULL AS e2, NULL AS nameId FROM w
    UNION ALL
    SELECT start, 1, NULL, globalTid, correlationId, end, nameId
      FROM CUPTI_ACTIVITY_KIND_RUNTIME),
  tagged AS (
    SELECT t, k, corr, e2, nameId,
           max(inst) OVER (PARTITION BY tid ORDER BY t, k ROWS UNBOUNDED PRECEDING) AS inst
      FROM ev)
  SELECT tagged.inst AS inst, tagged.corr AS corr, tagged.t AS start, tagged.e2 AS end,
         tagged.nameId AS nameId
    FROM tagged JOIN w ON w.rowid = tagged.inst WHERE tagged.k = 1 AND tagged.t < w.e;
-- The window's kernels: launched by those calls.
CREATE TEMP TABLE kk AS
  SELECT c.inst AS inst, k.start AS start, k.end AS end, k.demangledName AS name
    FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN c ON c.corr = k.correlationId;
SELECT inst, COUNT(*), SUM(end - start), MIN(start), MAX(end) FROM kk GROUP BY inst;
SELECT s.value, g.n, g.total, g.lo, g.hi FROM
  (SELECT name, COUNT(*) AS n, SUM(end - start) AS total, MIN(end - start) AS lo,
          MAX(end - start) AS hi FROM kk GROUP BY name) g
  JOIN StringIds s ON s.id = g.name ORDER BY g.total DESC;
SELECT c.inst, COUNT(*), SUM(c.end - c.start) FROM c JOIN StringIds s ON s.id = c.nameId
  WHERE s.value LIKE '%LaunchKernel%' GROUP BY c.inst;
SELECT 'total', COUNT(*), SUM(end - start) FROM kk;
SQL
cp bench/trace/nsys_whole.sql "$W/whole.sql"
measure() {  # measure COMMAND... : sets CPU (s) and RSS (MB); the output in $W/out.txt
  /usr/bin/time -f '%U %S %M' -o "$W/time.txt" "$@" > "$W/out.txt" || { cat "$W/time.txt"; exit 1; }
  read -r CPU RSS < <(awk '{printf "%.2f %.0f\n", $1 + $2, $3 / 1024}' "$W/time.txt")
}
# The same aggregates: sqlite3's total kernel count and sum are vouch's window total.
measure sqlite3 -readonly "$W/db.sqlite" ".read $W/window.sql"
want=$(awk -F'|' '$1 == "total" {print $2, $3}' "$W/out.txt")
measure "$VOUCH" trace summarize "$W/db.sqlite" --window decode_step --json
got=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["totals"]; print(t["kernel_count"], t["kernel_sum_ns"])' "$W/out.txt" 2>/dev/null || true)
if [ "$want" != "$got" ]; then
  echo "bench_nsys_window: FAIL: sqlite3's window total ($want) is not vouch's ($got)" >&2
  exit 1
fi
echo "# sqlite3 and vouch agree on the window's kernels: count and sum $got"
if [ -n "$BASE" ]; then  # byte-identical output, checked before timing anything
  for args in "--json" ""; do
    # shellcheck disable=SC2086
    "$VOUCH" trace summarize "$W/db.sqlite" --window decode_step $args > "$W/new.out"
    # shellcheck disable=SC2086
    "$BASE" trace summarize "$W/db.sqlite" --window decode_step $args > "$W/base.out"
    if ! cmp -s "$W/new.out" "$W/base.out"; then
      echo "bench_nsys_window: FAIL: '--window decode_step $args' differs from $BASE" >&2
      diff "$W/base.out" "$W/new.out" | head -20 >&2
      exit 1
    fi
  done
  echo "# window outputs byte-identical to $BASE (--json and text)"
fi
echo "# $(date -u +%FT%TZ) $(uname -n) nproc=$(nproc); $N kernel rows + $N runtime rows"
echo "| round | load (1/5/15 min) | run | cpu (user+sys) | peak RSS | sqlite3 window cpu, same round | sqlite3 peak RSS | vouch / sqlite3 window | sqlite3 whole-trace aggregates cpu | vouch / sqlite3 whole-trace |"
echo "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
: > "$W/rows.txt"
for r in $(seq "${ROUNDS:-3}"); do
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  measure sqlite3 -readonly "$W/db.sqlite" ".read $W/window.sql"
  ref=$CPU
  ref_rss=$RSS
  measure sqlite3 -readonly "$W/db.sqlite" ".read $W/whole.sql"
  ref2=$CPU
  for bin in "$VOUCH" ${BASE:+"$BASE"}; do
    label=vouch
    [ "$bin" = "$BASE" ] && label=base
    for mode in window whole; do
      [ "$label" = base ] && [ $mode = whole ] && continue
      args=()
      [ $mode = window ] && args=(--window decode_step)
      measure "$bin" trace summarize "$W/db.sqlite" "${args[@]}" --json
      awk -v r="$r" -v l="$load" -v m="$label $mode" -v c="$CPU" -v rss="$RSS" -v ref="$ref" \
        -v rr="$ref_rss" -v ref2="$ref2" 'BEGIN {
        printf "| %d | %s | %s | %.2f s | %d MB | %.2f s | %d MB | %.2fx | %.2f s | %.2fx |\n",
          r, l, m, c, rss, ref, rr, ref/c, ref2, ref2/c }'
      echo "$label-$mode $CPU $ref $RSS $ref2" >> "$W/rows.txt"
    done
  done
done
for run in $(cut -d' ' -f1 "$W/rows.txt" | sort -u); do
  grep "^$run " "$W/rows.txt" | awk -v run="$run" '
    { x = $3 / $2; if (NR == 1 || x < lo) lo = x; if (NR == 1 || x > hi) hi = x
      y = $5 / $2; if (NR == 1 || y < lo2) lo2 = y; if (NR == 1 || y > hi2) hi2 = y
      if (NR == 1 || $4 > rss) rss = $4 }
    END { printf "# %s: %.2f-%.2fx sqlite3 window speed, %.2f-%.2fx sqlite3 whole-trace, peak RSS at most %d MB\n",
          run, lo, hi, lo2, hi2, rss }'
done
