#!/usr/bin/env bash
# The report of a 1,000-leg run: its size and the time headless Chromium takes to draw it,
# against the 3-leg fixture run drawn in the same run. The 1,000 legs are the fixture's
# measured legs repeated (each leg directory a link to a fixture leg: real samples).
# usage: bench/store/report_bench.sh [VOUCH] [LEGS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
vouch=${1:-$root/build/vouch} legs=${2:-1000}
out=$(mktemp -d /tmp/vouch-report-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
fx=$root/tests/data/store/run
mkdir -p "$out/big/legs"
python3 - "$fx" "$out/big" "$legs" <<'PY'
import json, os, sys
fx, big, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = json.load(open(os.path.join(fx, "record.json")))
measured = [l for l in r["legs"] if l["role"] == "measured"]
legs = []
for i in range(n):
    l = json.loads(json.dumps(measured[i % len(measured)]))
    l["index"] = i
    l["dir"] = "legs/%04d" % i
    os.symlink(os.path.join(fx, measured[i % len(measured)]["dir"]), os.path.join(big, l["dir"]))
    legs.append(l)
r["legs"] = legs
r["measured_legs"] = r["valid_legs"] = r["planned_legs"] = n
json.dump(r, open(os.path.join(big, "record.json"), "w"))
PY
"$vouch" report "$fx" -o "$out/small.html" >/dev/null
"$vouch" report "$out/big" -o "$out/big.html" >/dev/null
small=$(stat -c %s "$out/small.html") bigsz=$(stat -c %s "$out/big.html")
echo "report sizes: 3-leg run $small bytes, $legs-leg run $bigsz bytes ($(( bigsz / legs )) bytes per leg)"
for i in 1 2 3; do
  node "$root/web/test/report_check.mjs" --out "$out/shots" \
    "small=$out/small.html:2 of 2 measured legs valid" "big=$out/big.html:$legs of $legs measured legs valid" | grep report_check
done
