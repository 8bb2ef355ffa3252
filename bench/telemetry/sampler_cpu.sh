#!/usr/bin/env bash
# The sampler's CPU cost at 10 ms (issue 24), as a share of one core:
#   bash bench/telemetry/sampler_cpu.sh OUTDIR
# Runs `vouch [--sim SIM] clock sample --interval-ms 10 -- sleep SECS` for each binary in VOUCHES,
# ROUNDS rounds, the binaries' order alternated per round, and reads vouch's CPU time
# (utime + stime) from /proc/PID/stat and each thread's from /proc/PID/task/TID/stat, from
# 1 s after the start to 1 s before the end (the steady state: start-up and the fold after the
# leg excluded; the whole run's CPU from /usr/bin/time is printed beside it). Then the same for
# the sampler thread alone (bench/telemetry/sampler_bench: the Sampler on the same device, its
# thread's CPU clock), and with CALLGRIND=1 its instructions per poll round (valgrind
# --tool=callgrind, collection toggled on Sampler::Loop; repeatable, unlike CPU time).
# Environment:
#   VOUCHES   "label=path ..." (default: "now=build-rel/vouch"; empty: none)
#   BENCHES   "label=path ..." of sampler_bench (default: "now=build-rel/sampler_bench"; empty: none)
#   SIM       a --sim stream (default tests/data/sim/h200_copy_busy.jsonl); SIM=none: real NVML
#   SECS 10, ROUNDS 3, CALLGRIND 0 (1: also instructions per poll), CG_SECS 4
# Prints one line per run and a median per binary; everything stays in OUTDIR.
set -u
OUT=${1:?usage: sampler_cpu.sh OUTDIR}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VOUCHES=${VOUCHES:-now=$ROOT/build-rel/vouch}
BENCHES=${BENCHES-now=$ROOT/build-rel/sampler_bench}
SIM=${SIM:-$ROOT/tests/data/sim/h200_copy_busy.jsonl}
SECS=${SECS:-10}
ROUNDS=${ROUNDS:-3}
TCK=$(getconf CLK_TCK)
SIMARG=()
[ "$SIM" != none ] && SIMARG=(--sim "$SIM")
[ "$SIM" = none ] && CALLGRIND=0

ticks() {  # /proc/.../stat -> utime + stime (fields 14, 15; the name in parentheses may hold spaces)
  local s
  s=$(cat "$1" 2>/dev/null) || { echo -1; return; }
  s=${s##*) }
  set -- $s
  echo $((${12} + ${13}))
}

thread_ticks() {  # PID -> "tid ticks name" per thread
  local t
  for t in /proc/"$1"/task/*; do echo "${t##*/} $(ticks "$t/stat") $(tr -d ' ' < "$t/comm" 2>/dev/null)"; done
}

one() {  # LABEL BIN ROUND
  local label=$1 bin=$2 round=$3 dir="$OUT/run-$1-$3" pid vpid c0 c1 t0 t1 w
  rm -rf "$dir"
  local timer=()  # the whole run's CPU, where /usr/bin/time exists
  [ -x /usr/bin/time ] && timer=(/usr/bin/time -f "%e %U %S" -o "$OUT/time-$label-$round.txt")
  "${timer[@]}" "$bin" "${SIMARG[@]}" clock sample --interval-ms 10 --quiet --out "$dir" -- sleep "$SECS" \
    > "$OUT/log-$label-$round.txt" 2>&1 &
  pid=$!
  vpid=""
  [ ${#timer[@]} = 0 ] && vpid=$pid
  for _ in $(seq 1 50); do
    [ -n "$vpid" ] && break
    vpid=$(pgrep -P "$pid" | head -1)
    sleep 0.02
  done
  [ -z "$vpid" ] && { echo "$label round $round: vouch did not start" >&2; wait "$pid"; return; }
  sleep 1
  c0=$(ticks /proc/"$vpid"/stat)
  thread_ticks "$vpid" > "$OUT/threads0-$label-$round.txt"
  t0=$(date +%s.%N)
  sleep $((SECS - 2))
  c1=$(ticks /proc/"$vpid"/stat)
  thread_ticks "$vpid" > "$OUT/threads1-$label-$round.txt"
  t1=$(date +%s.%N)
  wait "$pid"
  w=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
  # The sampler thread over the window (named vouch-sampler since issue 24; before that, the
  # busiest thread other than the main one) and the main thread (tid = pid: the leg's poller,
  # which scans the process tree every 20 ms).
  local top main
  top=$(join "$OUT/threads0-$label-$round.txt" "$OUT/threads1-$label-$round.txt" |
    awk -v pid="$vpid" '$4 < 0 { next } { d = $4 - $2; if ($3 == "vouch-sampler") { n = d; named = 1 }
      if ($1 != pid && d > m) m = d } END { print (named ? n : m) + 0 }')
  main=$(join "$OUT/threads0-$label-$round.txt" "$OUT/threads1-$label-$round.txt" |
    awk -v pid="$vpid" '$1 == pid { print $4 - $2 }')
  # The last line: /usr/bin/time puts "Command exited with non-zero status 2" (an idle window's
  # exit) on a line of its own before the figures.
  read -r e u s < <(tail -n 1 "$OUT/time-$label-$round.txt" 2>/dev/null) || { e=0 u=0 s=0; }
  awk -v l="$label" -v r="$round" -v c="$((c1 - c0))" -v top="$top" -v tck="$TCK" -v w="$w" \
    -v e="$e" -v u="$u" -v s="$s" -v main="${main:-0}" 'BEGIN {
      printf "%-8s round %d  steady %.3f %% of a core (sampler thread %.3f %%, main thread %.3f %%, %.1f s)  whole run %.3f %% (%.2f s CPU / %.2f s)\n",
        l, r, 100 * c / tck / w, 100 * top / tck / w, 100 * main / tck / w, w, (e > 0 ? 100 * (u + s) / e : 0), u + s, e }' |
    tee -a "$OUT/cpu.txt"
}

: > "$OUT/cpu.txt"
{ date -u; uptime; nproc; echo "SIM=$SIM SECS=$SECS ROUNDS=$ROUNDS VOUCHES=$VOUCHES"; } > "$OUT/machine.txt"
LIST=()
[ -n "$VOUCHES" ] && read -r -a LIST <<< "$VOUCHES"
for round in $(seq 1 "$ROUNDS"); do
  order=("${LIST[@]}")
  if [ $((round % 2)) = 0 ]; then  # alternate the order per round
    order=()
    for ((i = ${#LIST[@]} - 1; i >= 0; i--)); do order+=("${LIST[$i]}"); done
  fi
  for lb in "${order[@]}"; do one "${lb%%=*}" "${lb#*=}" "$round"; done
done
for lb in "${LIST[@]}"; do
  med() { sort -g | awk '{ v[NR] = $1 } END { printf "%.3f", (NR ? v[int((NR + 1) / 2)] : 0) }'; }
  steady=$(grep "^${lb%%=*} " "$OUT/cpu.txt" | awk '{ print $5 }' | med)
  thread=$(grep "^${lb%%=*} " "$OUT/cpu.txt" | awk '{ print $12 }' | med)
  n=$(grep -c "^${lb%%=*} " "$OUT/cpu.txt")
  mainth=$(grep "^${lb%%=*} " "$OUT/cpu.txt" | awk '{ print $16 }' | med)
  printf '%-8s median steady %s %% of a core, sampler thread %s %%, main thread %s %% (%d runs of vouch clock sample)\n' \
    "${lb%%=*}" "$steady" "$thread" "$mainth" "$n" | tee -a "$OUT/summary.txt"
done

# The sampler thread alone (sampler_bench: its thread's CPU clock), and, with CALLGRIND=1, its
# instructions per poll round under callgrind. vouch itself cannot run under valgrind (boost's
# long-double erf_inv initializer aborts there), so this is the bench program, same Sampler.
if [ -n "$BENCHES" ]; then
  read -r -a BL <<< "$BENCHES"
  for round in $(seq 1 "$ROUNDS"); do
    for lb in "${BL[@]}"; do
      r=$("${lb#*=}" "${SIMARG[@]}" --seconds "$SECS" --out "$OUT/bench-${lb%%=*}.jsonl")
      echo "${lb%%=*} round $round sampler_bench $r" | tee -a "$OUT/bench.txt"
    done
  done
  for lb in "${BL[@]}"; do
    grep "^${lb%%=*} round" "$OUT/bench.txt" | sed 's/.*"cpu_pct_of_core":\([0-9.]*\).*/\1/' | sort -g |
      awk -v l="${lb%%=*}" '{ v[NR] = $1 } END { printf "%-8s sampler thread alone (sampler_bench): median %.3f %% of a core (%d runs)\n", l, v[int((NR + 1) / 2)], NR }' |
      tee -a "$OUT/summary.txt"
  done
  if [ "${CALLGRIND:-0}" = 1 ]; then
    for lb in "${BL[@]}"; do
      label=${lb%%=*}
      r=$(valgrind --tool=callgrind --toggle-collect='vouch::Sampler::Loop()' \
        --callgrind-out-file="$OUT/callgrind-$label.out" "${lb#*=}" "${SIMARG[@]}" \
        --seconds "${CG_SECS:-4}" --out "$OUT/cg-$label.jsonl" 2> "$OUT/cg-$label.log")
      polls=$(echo "$r" | sed 's/.*"polls":\([0-9]*\).*/\1/')
      ir=$(callgrind_annotate "$OUT/callgrind-$label.out" 2>/dev/null |
        awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }')
      awk -v l="$label" -v ir="${ir:-0}" -v p="${polls:-0}" 'BEGIN {
        printf "%-8s callgrind: %d instructions in Sampler::Loop over %d polls: %.0f per poll\n", l, ir, p, (p > 0 ? ir / p : 0) }' |
        tee -a "$OUT/summary.txt"
    done
  fi
fi
