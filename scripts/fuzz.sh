#!/usr/bin/env bash
# Fuzzes every reader of untrusted input with libFuzzer (clang, ASan+UBSan) for SECONDS each:
#   bash scripts/fuzz.sh 60            # all targets, 60 s each
#   bash scripts/fuzz.sh 10 ncu record # only these
# The seed corpus is built from tests/data and tests/fixtures (nothing large is committed);
# what a run adds stays in build-fuzz/corpus/<target> between runs. A crash leaves its input in
# build-fuzz/crashes/ and fails the script. Prints one line per target: runs, seconds, corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
root=$PWD
out=$root/build-fuzz
command -v clang++ >/dev/null || { echo "fuzz: clang++ is missing (bash scripts/setup.sh)"; exit 1; }
cmake -S fuzz -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_COMPILER_LAUNCHER="$(command -v ccache || true)" >/dev/null
ninja -C "$out" >/dev/null

all=(kineto nsys ncu llama_bench vllm gbench nvbench channel regex json_pointer record window
  baseline samples)
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")

seeds=$out/seeds
rm -rf "$seeds"
mkdir -p "$seeds" "$out/crashes"
seed() {  # seed TARGET FILE...: copies small files (at most 256 KiB) as seeds
  local t=$1
  shift
  mkdir -p "$seeds/$t"
  for f in "$@"; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 262144 ] && cp "$f" "$seeds/$t/" || true
  done
}
d=tests/data
seed kineto $d/trace/small.json $d/trace/no_kernels.json
zcat tests/fixtures/kineto_lm_small.json.gz | head -c 200000 >"$seeds/kineto/lm_head.json"
mkdir -p "$seeds/nsys"
if command -v sqlite3 >/dev/null; then
  cat $d/trace/nsys_schema.sql fuzz/seeds/nsys_rows.sql | sqlite3 "$seeds/nsys/seed.sqlite"
fi
seed ncu $d/ncu/raw_with_stalls.csv tests/fixtures/ncu_raw.csv tests/fixtures/ncu_details.csv
seed llama_bench $d/metrics/llama_bench.json $d/metrics/llama_bench.jsonl
seed vllm $d/metrics/vllm_bench_serve.json $d/metrics/vllm_bench_serve_llmd.json
seed gbench $d/metrics/gbench.json $d/metrics/gbench_compare_input.json
seed nvbench $d/metrics/nvbench.json
mkdir -p "$seeds/channel" "$seeds/regex" "$seeds/json_pointer"
printf '{"event":"begin","unix_s":1}\n{"name":"tok_s","value":101.5,"unit":"tok/s","better":"higher"}\n{"name":"sha","text":"ab12"}\n{"event":"end","unix_s":2}\n' >"$seeds/channel/seed.jsonl"
printf 'warmup done\ntok_s=123.4 tok/s\n' >"$seeds/regex/seed.txt"
printf '{"results":[{"tok_s":99.5}]}' >"$seeds/json_pointer/seed.json"
seed record $(find $d -name 'record*.json' 2>/dev/null)
seed window $(find $d -name 'window*.json' 2>/dev/null)
seed baseline $d/gate/*.json
head -200 tests/fixtures/nvml_h200_scenario.jsonl >"$seeds/samples.jsonl.tmp"
seed samples $d/sim/h200x2_gpu0_idle.jsonl
mv "$seeds/samples.jsonl.tmp" "$seeds/samples/scenario_head.jsonl"
# Records and windows: made by the built vouch on the simulated device when it is there.
if [ -x build/vouch ]; then
  tmp=$(mktemp -d)
  printf '#!/bin/sh\nsleep 0.6\necho "{\\"name\\":\\"tok_s\\",\\"value\\":100}" >> "$VOUCH_METRICS"\n' >"$tmp/leg.sh"
  chmod +x "$tmp/leg.sh"
  if (cd "$tmp" && VOUCH_LOCK_FILE=$tmp/lock VOUCH_SIM=$root/$d/sim/h200_copy_busy.jsonl \
    "$root/build/vouch" run --min-busy-readings 5 --warmup 0 --reps 2 --out r -- ./leg.sh) >/dev/null 2>&1; then
    cp "$tmp/r/record.json" "$seeds/record/"
    cp "$tmp/r/legs/000-run-measured/window.json" "$seeds/window/"
  fi
  rm -rf "$tmp"
fi

status=0
printf '%-13s %10s %8s %8s\n' target runs seconds corpus
for t in "${targets[@]}"; do
  mkdir -p "$out/corpus/$t" "$seeds/$t"
  log=$out/$t.log
  start=$(date +%s.%N)
  if ! "$out/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
    -artifact_prefix="$out/crashes/$t-" -print_final_stats=1 "$out/corpus/$t" "$seeds/$t" \
    >"$log" 2>&1; then
    echo "fuzz: $t FAILED; see $log and $out/crashes/"
    grep -m5 -E 'ERROR|runtime error|SUMMARY' "$log" || true
    status=1
  fi
  end=$(date +%s.%N)
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  printf '%-13s %10s %8.1f %8s\n' "$t" "${runs:-?}" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" \
    "$(ls "$out/corpus/$t" | wc -l)"
done
exit $status
