#!/usr/bin/env bash
# Cost curves (issue 39): how each reader's CPU and memory grow with its input. One command:
#   bash bench/curves.sh [VOUCH] [WORKDIR]        (from the repository root)
# - Kineto: `trace summarize` of generated traces of 64, 256 and 1,024 MB (1x, 4x, 16x);
# - nsys: `trace summarize` (whole trace, and --window decode_step) of exports of 312,500,
#   1,250,000 and 5,000,000 kernels with as many launches (1x, 4x, 16x);
# - history: `history trend --json` and `report --trend` over stores of 10,000, 100,000 and
#   1,000,000 runs (bench/store/make_trend_store.py).
# Each row: CPU (user + sys) and peak RSS of the one process, from GNU time, and the CPU ratio
# to the row one size down (4x more input: linear is ~4x, 10x more points: ~10x). Needs ~2 GB
# of disk in WORKDIR (default: a fresh folder under /tmp, deleted after; KEEP=1 keeps it and
# reuses the inputs found there).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
vouch=$(realpath "${1:-$root/build/vouch}")
W=${2:-$(mktemp -d /tmp/vouch-curves.XXXXXX)}
mkdir -p "$W"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$W"' EXIT
echo "# $(date -u +%FT%TZ) $(uname -n) nproc=$(nproc) load: $(cut -d' ' -f1-3 /proc/loadavg); $vouch"
prev=""
row() {  # row LABEL COMMAND...: one line, CPU and peak RSS
  local label=$1
  shift
  /usr/bin/time -f "%U %S %M" -o "$W/time.txt" "$@" >"$W/out.txt" 2>"$W/err.txt" ||
    { echo "curves: $label failed:"; tail -5 "$W/err.txt"; exit 1; }
  read -r user sys rss <"$W/time.txt"
  local cpu ratio=""
  cpu=$(python3 -c "print(f'{$user + $sys:.3f}')")
  [ -n "$prev" ] && ratio=$(python3 -c "print(f'{$cpu / max($prev, 1e-3):.2f}x the row above')")
  printf '%-44s CPU %8.3f s  peak RSS %7.1f MB  %s\n' "$label" "$cpu" "$(python3 -c "print($rss / 1024)")" "$ratio"
  prev=$cpu
}
fix=$root/tests/fixtures/kineto_lm_small.json.gz
for mb in 64 256 1024; do
  [ -s "$W/k$mb.json" ] || python3 "$root/bench/trace/gen_kineto.py" "$fix" "$W/k$mb.json" --mb "$mb" >/dev/null
done
prev=""
for mb in 64 256 1024; do row "kineto $mb MB" "$vouch" trace summarize "$W/k$mb.json"; done
for k in 312500 1250000 5000000; do
  [ -s "$W/n$k.sqlite" ] || python3 "$root/bench/trace/gen_nsys.py" "$W/n$k.sqlite" --kernels "$k" >/dev/null
done
prev=""
for k in 312500 1250000 5000000; do row "nsys $k kernels, whole trace" "$vouch" trace summarize "$W/n$k.sqlite"; done
prev=""
for k in 312500 1250000 5000000; do
  row "nsys $k kernels, --window decode_step" "$vouch" trace summarize "$W/n$k.sqlite" --window decode_step
done
for n in 10000 100000 1000000; do
  [ -s "$W/s$n.sqlite" ] && continue
  "$vouch" history add --store "$W/s$n.sqlite" "$root/tests/data/store/run" >/dev/null
  python3 "$root/bench/store/make_trend_store.py" "$W/s$n.sqlite" "$n" --keys hex
done
prev=""
for n in 10000 100000 1000000; do row "history trend --json, $n runs" "$vouch" history trend --store "$W/s$n.sqlite" tok_s --json; done
prev=""
for n in 10000 100000 1000000; do
  row "report --trend, $n runs" "$vouch" report --store "$W/s$n.sqlite" --trend tok_s -o "$W/r$n.html"
done
