#!/usr/bin/env bash
# `vouch history add` and `vouch history trend` against their anchors, in one run.
#  add:   RECORDS copies of the stored fixture run (tests/data/store/run, each with its own start
#         time, commit and writer) added by one `vouch history add` process to a fresh SQLite
#         store, against the sqlite3 shell replaying the same rows (dumped from a store vouch
#         filled, one transaction per record as vouch commits them, the same schema, indexes
#         and pragmas) into a fresh store. Alternating order, ROUNDS rounds; ratio per round.
#  trend: `vouch history trend tok_s` with the step search over POINTS points (a planted 3 %
#         step at 60 %, 0.1 % noise), against the sqlite3 shell reading the same points; and
#         with --no-steps (the query alone).
#   bench/store/add_trend.sh [VOUCH] [RECORDS] [POINTS] [ROUNDS]  (./build-rel/vouch 200 100000 3)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
vouch=$(realpath "${1:-$root/build-rel/vouch}")
records=${2:-200}
points=${3:-100000}
rounds=${4:-3}
work=$(mktemp -d /tmp/vouch-bench-history.XXXXXX)
[ -n "${KEEP:-}" ] && echo "# work kept: $work" || trap 'rm -rf "$work"' EXIT
echo "# $(date -u +%FT%TZ) $(uname -n) nproc=$(nproc) load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$root/tests/data/store/run" "$work/runs" "$records" <<'PY'
import json, shutil, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
rec = json.load(open(f"{src}/record.json"))
for i in range(n):
    d = f"{dst}/r{i:05d}"
    shutil.copytree(src, d)
    r = json.loads(json.dumps(rec))
    r["started_unix_s"] = 1796000000.0 + 60 * i
    r["writer"] = {"pid": 1000 + i, "host": "vm", "boot_id": "b", "start_ticks": i}
    r["revisions"] = [{"path": "/src", "git": True, "commit": f"{0xc0ffee00 + i:040x}",
                       "dirty": False, "branch": "main"}]
    json.dump(r, open(f"{d}/record.json", "w"), indent=2)
PY
dirs=("$work"/runs/r*)
# The rows vouch stores, as SQL: one transaction per record, as vouch commits them.
"$vouch" history add --store "$work/ref.sqlite" "${dirs[@]}" > /dev/null
python3 - "$work/ref.sqlite" "$work/replay.sql" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
out = open(sys.argv[2], "w")
def lit(v):
    if v is None: return "NULL"
    if isinstance(v, (int,)): return str(v)
    if isinstance(v, float): return repr(v)
    if isinstance(v, bytes): return "X'" + v.hex() + "'"
    return "'" + v.replace("'", "''") + "'"
out.write("PRAGMA journal_mode=WAL;\nPRAGMA synchronous=NORMAL;\nPRAGMA foreign_keys=ON;\n")
for (sql,) in db.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'"):
    out.write(sql + ";\n")
tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
keyed = [t for t in tables if "run_key" in [c[1] for c in db.execute(f"PRAGMA table_info({t})")]]
order = ["runs"] + [t for t in keyed if t != "runs"]
for (key,) in db.execute("SELECT run_key FROM runs ORDER BY rowid").fetchall():
    out.write("BEGIN;\n")
    for t in order:
        for row in db.execute(f"SELECT * FROM {t} WHERE run_key = ?", (key,)):
            out.write(f"INSERT INTO {t} VALUES({','.join(lit(v) for v in row)});\n")
    out.write("COMMIT;\n")
PY
# Wall time and CPU time (user + sys) of each process: the issue's anchor is
# sqlite3's CPU, and on a shared VM the wall clock of one round moves by more than the target's
# margin (sqlite3's own 0.146-0.177 s in one idle run).
# Wall and CPU seconds of a command's process tree (getrusage of the children, microseconds:
# /usr/bin/time rounds to 10 ms, 5 % of a 0.2 s add), into $work/cpu.txt; its stdout into OUT.
#   cpu_run OUT COMMAND...
# Check the machine's accounting first: on a VM whose getrusage gave `sleep 0.05` 0.062 s of CPU
# (docs/BENCHMARKS.md, stop 44) only the wall columns count.
# The CPU is the difference over the run: a `python3` that is a wrapper script (pyenv's shim)
# has already waited for children of its own before it became Python, and getrusage counts them
# too (45 ms here, added to both sides: it pulled every ratio toward 1; stop 46).
cpu_run() {
  python3 -c 'import resource, subprocess, sys, time
u0 = resource.getrusage(resource.RUSAGE_CHILDREN)
t0 = time.perf_counter()
with open(sys.argv[2], "wb") as out:
    r = subprocess.run(sys.argv[3:], stdout=out).returncode
wall = time.perf_counter() - t0
u = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (u.ru_utime + u.ru_stime) - (u0.ru_utime + u0.ru_stime)
open(sys.argv[1], "w").write(f"{wall} {cpu}\n")
sys.exit(r)' "$work/cpu.txt" "$@"
}
wall() { cut -d' ' -f1 "$work/cpu.txt"; }
cpu() { cut -d' ' -f2 "$work/cpu.txt"; }
echo "## history add: $records records, one process (wall; CPU user+sys in parentheses)"
echo "| round | vouch history add | per record | sqlite3 replaying the same rows | vouch / sqlite3, wall (CPU) |"
echo "| ---: | ---: | ---: | ---: | ---: |"
for r in $(seq 1 "$rounds"); do
  order=$([ $((r % 2)) -eq 1 ] && echo "vouch sqlite3" || echo "sqlite3 vouch")
  for who in $order; do
    rm -f "$work"/t.sqlite*
    if [ "$who" = vouch ]; then
      cpu_run /dev/null "$vouch" history add --store "$work/t.sqlite" "${dirs[@]}"
      v=$(wall)
      vc=$(cpu)
    else
      cpu_run /dev/null sqlite3 "$work/t.sqlite" < "$work/replay.sql"
      s=$(wall)
      sc=$(cpu)
    fi
  done
  python3 -c "print(f'| $r | {$v:.3f} s ({$vc:.3f} s) | {$v/$records*1e3:.2f} ms | {$s:.3f} s ({$sc:.3f} s) | {$v/$s:.2f}x ({$vc/max($sc, 0.01):.2f}x) |')"
done
# The trend store: the records above, then POINTS runs with their summaries in bulk.
cp "$work/ref.sqlite" "$work/trend.sqlite"
python3 - "$work/trend.sqlite" "$points" "$records" <<'PY'
import math, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n, base = int(sys.argv[2]), int(sys.argv[3])
# The bulk points on the fixture records' GPU: a series over two GPUs is not searched for steps
# (the trend says so and skips the search), and the search is what this bench must time.
gpu_name, gpu_uuid, simulated = db.execute(
    "SELECT gpu_name, gpu_uuid, simulated FROM runs ORDER BY started_unix_s LIMIT 1").fetchone()
runs, sums = [], []
for i in range(base, n):
    key = f"bulk{i:028d}"
    v = 1234.5 * (1 + 0.001 * math.sin(i)) * (1.03 if i >= n * 6 // 10 else 1)
    runs.append((key, key, 1796000000.0 + i * 60.0, f"{i:040x}", gpu_name, gpu_uuid, simulated))
    sums.append((key, v, v, v))
db.executemany("INSERT INTO runs (run_key, content_sha256, kind, status, record_schema_version, "
               "started, started_unix_s, day, commit_sha, branch, host, gpu_name, gpu_uuid, simulated, "
               "clock_sm_median_mhz, measured_legs, valid_legs, reproduce, ingested_unix_s, record_json) "
               "VALUES (?,?,'run','complete',1,'',?,'2026-12-01',?,'main','vm',?,?,?,1980,2,2,'',0,'{}')", runs)
db.executemany("INSERT INTO summaries (run_key, arm, name, unit, better, n, median, min, max, "
               "clock_sm_median_mhz) VALUES (?,'run','tok_s','tok/s','higher',2,?,?,?,1980)", sums)
db.commit()
PY
echo "## history trend tok_s over $points points (wall; CPU user+sys in parentheses)"
echo "| round | vouch history trend --json (steps) | steps found | trend --no-steps | sqlite3 reading the points | trend / sqlite3, wall (CPU) |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
q="SELECT r.commit_sha, r.started_unix_s, s.median FROM summaries s JOIN runs r USING (run_key) WHERE s.name='tok_s' AND s.arm='run' ORDER BY r.started_unix_s"
for r in $(seq 1 "$rounds"); do
  order=$([ $((r % 2)) -eq 1 ] && echo "vouch plain sqlite3" || echo "sqlite3 plain vouch")
  for who in $order; do
    case $who in
      vouch) cpu_run "$work/trend.json" "$vouch" history trend --store "$work/trend.sqlite" tok_s --json
             v=$(wall); vc=$(cpu) ;;
      plain) cpu_run /dev/null "$vouch" history trend --store "$work/trend.sqlite" tok_s --no-steps --json
             p=$(wall); pc=$(cpu) ;;
      sqlite3) cpu_run /dev/null sqlite3 "$work/trend.sqlite" "$q"
             s=$(wall); sc=$(cpu) ;;
    esac
  done
  steps=$(python3 -c "import json; j=json.load(open('$work/trend.json')); print(','.join(str(x.get('index', x.get('at', '?'))) for x in j.get('steps', [])))")
  python3 -c "print(f'| $r | {$v:.3f} s ({$vc:.2f}) | $steps | {$p:.3f} s ({$pc:.2f}) | {$s:.3f} s ({$sc:.2f}) | {$v/$s:.1f}x ({$vc/max($sc, 0.01):.1f}x) |')"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
