#!/usr/bin/env bash
# `vouch fleet merge` against Python loading the same files, in one run: a fleet directory of
# NODES nodes (one task each, a copy of the real A/B record tests/data/store/ab/record.json
# per node with its own writer and times, so no two nodes hold the same evidence) is built
# once; then, alternating for ROUNDS rounds, `vouch fleet merge --json` and a Python loop
# that json.load()s every node.json and record.json of it. Both are CPU times; the ratio is
# within the round (CPU time of each process tree). Also NODES/4 nodes, for the slope (linear in nodes: the per-node cost is
# the same at both sizes).
#   bench/fleet/merge.sh [VOUCH] [NODES] [ROUNDS]   (default ./build-rel/vouch 512 3)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
vouch=$(realpath "${1:-$root/build-rel/vouch}")
nodes=${2:-512}
rounds=${3:-3}
work=$(mktemp -d /tmp/vouch-bench-merge.XXXXXX)
# The interpreter itself, not a wrapper (a pyenv shim costs ~660 ms a call: issue 39).
py=$(python3 -c 'import sys; print(sys.executable)')
trap 'rm -rf "$work"' EXIT
echo "# $(date -u +%FT%TZ) $(uname -n) nproc=$(nproc) load: $(cut -d' ' -f1-3 /proc/loadavg)"
make_fleet() {  # DIR N
  python3 - "$1" "$2" "$root/tests/data/store/ab/record.json" <<'PY'
import hashlib, hmac, json, os, sys
d, n, src = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rec = json.load(open(src))
os.makedirs(f"{d}/nodes", exist_ok=True)
# The fleet's key and each attempt's seal, as the submitter and the worker write them
# (src/fleet/trust.h): HMAC-SHA256 of the node, task, attempt, file and the file's SHA-256.
key = os.urandom(32).hex()
fd = os.open(f"{d}/fleet.key", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
os.write(fd, (key + "\n").encode())
os.close(fd)
def seal(a, node, task):
    files = {}
    for f in ("node.json", "run/record.json"):
        sha = hashlib.sha256(open(f"{a}/{f}", "rb").read()).hexdigest()
        msg = f"vouch.fleet.seal/1\n{node}\n{task}\n0\n{f}\n{sha}".encode()
        files[f] = [{"sha256": sha, "mac": hmac.new(key.encode(), msg, "sha256").hexdigest()}]
    json.dump({"schema": "vouch.fleet.seal", "version": 1, "node": node, "task": task,
               "attempt": 0, "files": files}, open(f"{a}/seal.json", "w"))
tasks = [{"id": f"r0-t{i}", "blocks": 2, "seed": 0, "covers": ""} for i in range(n)]
plan = {"schema": "vouch.fleet.plan", "version": 1, "kind": "ab", "node_args": [],
        "command": ["./leg.sh"], "nodes": n, "pairs": 4 * n, "seed": 1, "baseline": "",
        "vouch_binary": "vouch", "global_args": [], "slurm": {},
        "rounds": [{"job_id": "", "submitted_unix_s": 0, "tasks": tasks}]}
json.dump(plan, open(f"{d}/fleet.json", "w"))
for i in range(n):
    node, task = f"node{i:04d}", f"r0-t{i}"
    a = f"{d}/nodes/{node}/{task}-a0"
    os.makedirs(f"{a}/run")
    json.dump({"schema": "vouch.fleet.node", "node": node, "task": task, "attempt": 0,
               "status": "complete", "exit_code": 0}, open(f"{a}/node.json", "w"), indent=2)
    r = json.loads(json.dumps(rec))
    shift = 1000.0 * i
    r["started_unix_s"] += shift
    r["writer"] = {"pid": 5000 + i, "host": node, "boot_id": f"boot-{i}", "start_ticks": 77}
    for l in r["legs"]:
        for k in ("started_unix_s", "ended_unix_s"):
            l["window"][k] += shift
    json.dump(r, open(f"{a}/run/record.json", "w"), indent=2)
    seal(a, node, task)
PY
}
py_load() {  # DIR
  "$py" - "$1" <<'PY'
import json, os, sys
d = sys.argv[1]
json.load(open(f"{d}/fleet.json"))
for node in sorted(os.listdir(f"{d}/nodes")):
    for att in sorted(os.listdir(f"{d}/nodes/{node}")):
        json.load(open(f"{d}/nodes/{node}/{att}/node.json"))
        json.load(open(f"{d}/nodes/{node}/{att}/run/record.json"))
PY
}
now() { date +%s.%N; }
small=$((nodes / 4))
make_fleet "$work/big" "$nodes"
make_fleet "$work/small" "$small"
# CPU time (user + sys of the process tree) is the figure: wall time on a shared VM is mostly queueing.
# cpu OUT ERR COMMAND...: the child's user + sys seconds (getrusage: microseconds), OUT/ERR its streams.
cpu() { "$py" -c 'import resource, subprocess, sys
with open(sys.argv[1], "wb") as o, open(sys.argv[2], "wb") as e:
    rc = subprocess.run(sys.argv[3:], stdout=o, stderr=e).returncode
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.4f} {rc}")' "$@"; }
echo "| round | load | nodes | vouch fleet merge CPU | per node | Python json.load CPU | vouch / Python |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"
for r in $(seq 1 "$rounds"); do
  for size in big small; do
    n=$([ $size = big ] && echo "$nodes" || echo "$small")
    dir=$work/$size
    load=$(cut -d' ' -f1 /proc/loadavg)
    order=$([ $((r % 2)) -eq 1 ] && echo "vouch py" || echo "py vouch")
    for who in $order; do
      if [ "$who" = vouch ]; then
        read -r v rc < <(cd "$work" && cpu "$work/merged.json" "$work/merge.err" "$vouch" fleet merge "$dir" --json)
        [ "$rc" -le 3 ] || { echo "fleet merge failed ($rc):"; tail -5 "$work/merge.err"; exit 1; }
      else
        read -r p _ < <(cpu /dev/null /dev/null bash -c "$(declare -f py_load); py=$py; py_load $dir")
      fi
    done
    python3 -c "print(f'| $r | $load | $n | {$v:.3f} s | {$v/$n*1e3:.2f} ms | {$p:.3f} s | {$v/$p:.2f}x |')"
  done
done
python3 -c "import json; j=json.load(open('$work/merged.json')); print('# last merge: verdict', j.get('verdict'), 'nodes', len(j.get('nodes', [])), 'pairs_used', j.get('pairs_used'))"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
