#!/usr/bin/env bash
# Fuzzes every reader of untrusted input with libFuzzer (clang, ASan+UBSan) for SECONDS each,
# one target after the other:
#   bash scripts/fuzz.sh 60            # all targets, 60 s each
#   bash scripts/fuzz.sh 10 ncu record # only these
# The seed corpus is made from files in the repository only (tests/data, tests/fixtures,
# fuzz/seeds; nothing large is committed); what a run adds stays in build-fuzz/corpus/<target>
# between runs (FUZZ_FRESH=1 starts from the seeds alone). A crash, a hang (10 s), a leak or a
# UB report leaves its input in build-fuzz/crashes/ and fails the script. Prints one line per
# target: executions, seconds, corpus size, and the result. FUZZ_OPT=-O0 builds faster (CI);
# FUZZ_SEED (default 1) is libFuzzer's -seed, so that a run can be repeated.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
out=$PWD/build-fuzz
command -v clang++ >/dev/null || { echo "fuzz: clang++ is missing (bash scripts/setup.sh)"; exit 1; }
mkdir -p "$out"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# No build type: the flags are fuzz/CMakeLists.txt's alone (-O1, or FUZZ_OPT; asserts kept).
cmake -S fuzz -B "$out" -G Ninja -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" \
  -DVOUCH_FUZZ_OPT="${FUZZ_OPT:--O1}" \
  >"$out/cmake.log" 2>&1 || { cat "$out/cmake.log"; exit 1; }
if ! ninja -C "$out" >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  echo "fuzz: the build failed (whole log: $out/build.log)"
  exit 1
fi

all=(kineto nsys ncu llama_bench vllm gbench nvbench hyperfine pytest channel regex json_pointer
  record window baseline samples cupti journal fleet store_doc store_add)
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")

seeds=$out/seeds
rm -rf "$seeds"
mkdir -p "$out/crashes"
for t in "${all[@]}"; do mkdir -p "$seeds/$t"; done
seed() {  # seed TARGET FILE...: copies small files (at most 256 KiB) as seeds
  local t=$1 i=0
  shift
  for f in "$@"; do
    i=$((i + 1))
    if [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 262144 ]; then
      cp "$f" "$seeds/$t/$i-$(basename "$f")"
    fi
  done
}
d=tests/data
# Every checked-in input of a reader is a seed, the invalid ones too (they reach the errors).
seed kineto $d/trace/small.json $d/trace/no_kernels.json
# A valid head of the real H200 trace (the whole one is 5 MB): its first 300 events.
python3 - "$seeds/kineto/h200_head.json" <<'EOF'
import gzip, json, sys
d = json.load(gzip.open("tests/fixtures/kineto_lm_small.json.gz"))
d["traceEvents"] = d["traceEvents"][:300]
json.dump(d, open(sys.argv[1], "w"))
EOF
sqlite3 "$seeds/nsys/seed.sqlite" <$d/trace/nsys_schema.sql
sqlite3 "$seeds/nsys/seed.sqlite" <fuzz/seeds/nsys_rows.sql
sqlite3 "$seeds/nsys/view.sqlite" <fuzz/seeds/nsys_view.sql
# ncu also gets two shapes that broke it (issue 21): a 60 KB stall metric name, and two
# exports appended into one file; nsys an export whose kernel table is a recursive view.
seed ncu $d/ncu/*.csv tests/fixtures/ncu_raw.csv tests/fixtures/ncu_details.csv \
  fuzz/seeds/ncu_long_stall.csv fuzz/seeds/ncu_appended_twice.csv
seed llama_bench $d/metrics/llama_bench*.json*
seed vllm $d/metrics/vllm_bench_serve*.json
seed gbench $d/metrics/gbench*.json
seed nvbench $d/metrics/nvbench.json
seed hyperfine $d/metrics/hyperfine*.json
seed pytest $d/metrics/pytest_benchmark.json
seed channel $(find $d/store -name metrics.jsonl | sort | head -3) fuzz/seeds/channel.jsonl
seed regex fuzz/seeds/regex.txt
seed json_pointer fuzz/seeds/json_pointer.json $d/metrics/vllm_bench_serve.json
seed record $(find $d/store -name record.json | sort)
seed store_add $(find $d/store -name record.json | sort)
seed window $(find $d/store -name window.json | sort | head -6)
seed baseline $d/gate/*.json
head -200 tests/fixtures/nvml_h200_scenario.jsonl >"$seeds/samples/scenario_head.jsonl"
seed samples $(find $d/store -name samples.jsonl | sort | head -3)
# The tracer's lines with a key twice (in a record, in the header): refused by name.
seed cupti $d/trace/cupti_small.jsonl $d/trace/h200/*.jsonl fuzz/seeds/cupti_dup_key.jsonl \
  fuzz/seeds/cupti_dup_header.jsonl
# The journal: a stored record made "running" again (as at a run's start), the marker line, then
# its legs one per line, as the leg journal holds them; and the same with its last line torn.
python3 - "$seeds/journal" $d/store/ab/record.json $d/store/gate/record.json <<'EOF'
import json, sys
out = sys.argv[1]
for i, path in enumerate(sys.argv[2:]):
    rec = json.load(open(path))
    legs = rec.get("legs", [])
    rec.update(status="running", legs=[])
    body = json.dumps(rec) + "\n--legs.jsonl--\n" + "".join(json.dumps(l) + "\n" for l in legs)
    open(f"{out}/{i}-journal.txt", "w").write(body)
    open(f"{out}/{i}-torn.txt", "w").write(body[: len(body) - 40])
EOF
# A fleet directory: fleet.json, the marker, a node's node.json, the marker, its record.json
# (fuzz/fuzz_fleet.cc): the stored A/B record as it is, with its listed pairs edited, under a
# node.json naming another node, and under a run plan.
python3 - "$seeds/fleet" fuzz/seeds/fleet_plan.json $d/store/ab/record.json <<'EOF'
import json, sys
out, plan_path, rec_path = sys.argv[1:]
plan = json.load(open(plan_path))
rec = json.load(open(rec_path))
node = {"schema": "vouch.fleet.node", "node": "n1", "task": "r0-t0", "attempt": 0,
        "status": "complete", "exit_code": 0}
def put(name, p, n, r):
    body = (json.dumps(p) + "\n--node.json--\n" + json.dumps(n) + "\n--record.json--\n" +
            json.dumps(r))
    open(f"{out}/{name}.txt", "w").write(body)
put("ab", plan, node, rec)
edited = json.loads(json.dumps(rec))
for p in edited["extra"]["verdict"]["pairs"]:
    p["b"] = 2 * p["a"]
put("edited", plan, node, edited)
put("claims", plan, dict(node, node="n9"), rec)
put("run", dict(plan, kind="run"), node, rec)
EOF
# The store's documents (runs.record_json, windows.series_json, gates.gate_json): the stored
# records, a series and a gate (right, of wrong types, nested 4000 deep), small hand shapes (fuzz/seeds/
# store_doc: a string for the legs, an array, version 2^32 + 2, text where numbers go), and a
# stored record bent into the shapes that crashed `history show`: legs not objects, a leg
# index twice, a text median, no window.
seed store_doc $(find $d/store -name record.json | sort) fuzz/seeds/store_doc/*
python3 - "$seeds/store_doc" $d/store/run/record.json <<'EOF'
import copy, json, sys
out, rec = sys.argv[1], json.load(open(sys.argv[2]))
def bent(name, f):
    r = copy.deepcopy(rec)
    f(r)
    open(f"{out}/bent-{name}.json", "w").write(json.dumps(r))
bent("legs-strings", lambda r: r.update(legs=["x"]))
bent("leg-twice", lambda r: r["legs"].append(r["legs"][-1]))
bent("text-median", lambda r: r["summary"]["run"][0].update(median="fast"))
bent("no-window", lambda r: r["legs"][0].pop("window"))
bent("version-2p32", lambda r: r.update(schema_version=2**32 + 1))
EOF
# Inputs that once crashed, hung or leaked a reader (fuzz/regressions/<target>/): kept as seeds.
for t in "${all[@]}"; do
  [ -d fuzz/regressions/$t ] && seed "$t" fuzz/regressions/$t/*
done

status=0
printf '%-13s %10s %8s %8s  %s\n' target executions seconds corpus result
for t in "${targets[@]}"; do
  [ -x "$out/fuzz_$t" ] || { echo "fuzz: no target '$t' (targets: ${all[*]})"; exit 2; }
  [ "${FUZZ_FRESH:-0}" = 1 ] && rm -rf "$out/corpus/$t"
  mkdir -p "$out/corpus/$t"
  log=$out/$t.log
  start=$(date +%s.%N)
  result=ok
  if ! ASAN_OPTIONS=detect_leaks=1 "$out/fuzz_$t" -max_total_time="$secs" -timeout=10 -seed="${FUZZ_SEED:-1}" \
    -rss_limit_mb=2048 -max_len=262144 -artifact_prefix="$out/crashes/$t-" -print_final_stats=1 \
    "$out/corpus/$t" "$seeds/$t" >"$log" 2>&1; then
    result="FAILED: see $log and $out/crashes/"
    status=1
  fi
  end=$(date +%s.%N)
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  printf '%-13s %10s %8.1f %8s  %s\n' "$t" "${runs:-?}" \
    "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$(ls "$out/corpus/$t" | wc -l)" \
    "$result"
  [ "$result" = ok ] || grep -m5 -E 'ERROR|runtime error|SUMMARY|Test unit written' "$log" || true
done
exit $status
