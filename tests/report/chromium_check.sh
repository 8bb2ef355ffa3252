#!/usr/bin/env bash
# The report in a real browser: makes a run, an A/B, a gate and a trend report with VOUCH
# from the stored fixtures (tests/data/store), opens each in headless Chromium and checks
# what is drawn (web/test/report_check.mjs). Screenshots go to OUT; with --docs they are
# also copied to docs/report/ (the committed ones).
# usage: chromium_check.sh VOUCH OUT [--docs]
set -euo pipefail
vouch=$1 out=$2 docs=${3:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
data=$root/tests/data/store
rm -rf "$out" && mkdir -p "$out"
if ! command -v node >/dev/null; then
  [ -n "${VOUCH_REQUIRE_BROWSER:-}" ] && { echo "chromium_check: FAIL: no node" >&2; exit 1; }
  echo "chromium_check: skipped: no node"; exit 77
fi
if ! "$vouch" report "$data/run" -o "$out/run.html" >"$out/log" 2>&1; then
  if grep -q "built without the report's chart library" "$out/log" && [ -z "${VOUCH_REQUIRE_BROWSER:-}" ]; then
    echo "chromium_check: skipped: vouch built without uPlot (scripts/setup.sh, then cmake)"; exit 77
  fi
  cat "$out/log" >&2; exit 1
fi
"$vouch" report "$data/ab" -o "$out/ab.html"
"$vouch" report "$data/gate" -o "$out/gate.html"
# A trend: 24 copies of the run fixture on 24 commits, a 3 % drop planted at the 15th.
for i in $(seq 0 23); do
  d=$out/trend/r$i
  mkdir -p "$d" && cp -r "$data/run/." "$d/"
  python3 - "$d/record.json" "$i" <<'PY'
import json, sys
p, i = sys.argv[1], int(sys.argv[2])
r = json.load(open(p))
r["started_unix_s"] = 1796000000.0 + 600 * i
r["revisions"] = [{"path": "/src", "git": True, "commit": "%07x%s" % (0xabc000 + 17 * i, "0" * 33), "dirty": False, "branch": "main"}]
for s in r["summary"]["run"]:
    if s["name"] == "tok_s":
        s["median"] = 1234.5 * (0.97 if i >= 15 else 1.0) * (1 + 0.0004 * ((i * 7) % 5 - 2))
json.dump(r, open(p, "w"))
PY
done
"$vouch" history add --store "$out/trend.sqlite" "$out"/trend/r* >/dev/null
"$vouch" report --store "$out/trend.sqlite" --trend tok_s -o "$out/trend.html"
# A series too short for the step test to be sure of one (5 commits): it says so.
"$vouch" history add --store "$out/short.sqlite" "$out"/trend/r[0-4] >/dev/null
"$vouch" report --store "$out/short.sqlite" --trend tok_s -o "$out/trend_short.html"
# A trace's components (the Kineto fixture with the decode rules).
"$vouch" trace summarize "$root/tests/fixtures/kineto_lm_small.json.gz" \
  --rules "$root/tests/data/trace/decode_rules.json" --json >"$out/trace.json"
"$vouch" report "$out/trace.json" -o "$out/trace.html"
node "$root/web/test/report_check.mjs" --out "$out/shots" \
  "run=$out/run.html:2 of 2 measured legs valid" "ab=$out/ab.html:B faster" \
  "gate=$out/gate.html:fail" "trend=$out/trend.html:1 found" \
  "trend_short=$out/trend_short.html:series too short" \
  "trace=$out/trace.html:$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["components"]))' "$out/trace.json") components"
if [ "$docs" = --docs ]; then
  mkdir -p "$root/docs/report" && cp "$out"/shots/*.png "$root/docs/report/"
fi
