#!/usr/bin/env bash
# The trend report of a long history in headless Chromium (issue 37: 100,000 runs opened in
# 48 s, 600,000 DOM nodes): a store of POINTS runs (the fixture run stored, then POINTS - 1
# bulk rows on the same GPU, one commit each, a 9 % drop planted at 60 %, 0.5 % noise), the
# page `vouch report --trend tok_s` writes, its size and DOM node count, and the time from page
# load to charts drawn (web/test/report_check.mjs), ROUNDS rounds.
#   bench/store/report_trend_bench.sh [VOUCH] [POINTS] [ROUNDS]   (build/vouch 100000 3)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
vouch=$(realpath "${1:-$root/build/vouch}")
points=${2:-100000}
rounds=${3:-3}
work=$(mktemp -d /tmp/vouch-bench-report-trend.XXXXXX)
[ -n "${KEEP:-}" ] && echo "# work kept: $work" || trap 'rm -rf "$work"' EXIT
echo "# $(date -u +%FT%TZ) $(uname -n) nproc=$(nproc) load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$vouch" history add --store "$work/t.sqlite" "$root/tests/data/store/run" >/dev/null
python3 "$root/bench/store/make_trend_store.py" "$work/t.sqlite" "$points"
t0=$(date +%s.%N)
"$vouch" report --store "$work/t.sqlite" --trend tok_s -o "$work/trend.html" >/dev/null
t1=$(date +%s.%N)
size=$(stat -c %s "$work/trend.html")
verdict=$(python3 - "$work/trend.html" <<'PY'
import re, sys
html = open(sys.argv[1]).read()
print(re.search(r'<span id="verdict">([^<]*)</span>', html).group(1))
PY
)
echo "report --trend over $points runs: written in $(python3 -c "print(f'{$t1 - $t0:.2f}')") s, $size bytes, verdict \"$verdict\""
for i in $(seq 1 "$rounds"); do
  node "$root/web/test/report_check.mjs" --out "$work/shots" "trend=$work/trend.html:$verdict" | grep report_check
done
