#!/usr/bin/env bash
# Start-up cost (issue 39): `vouch --version` against `hyperfine --version` (a small Rust
# binary: the anchor the issue names), in the same run, ROUNDS alternated rounds of RUNS runs
# each under `hyperfine -N`. Prints each round's median wall time, CPU (user + sys) per run, the
# ratio to the anchor and the load average. Ratios only: the machine is shared.
#
# usage: bench/run/startup.sh [VOUCH] [ROUNDS] [RUNS]      (from the repository root)
set -euo pipefail
VOUCH=${1:-./build/vouch}
ROUNDS=${2:-3}
RUNS=${3:-300}
command -v hyperfine >/dev/null || { echo "startup.sh: needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
W=$(mktemp -d /tmp/vouch-startup.XXXXXX)
trap 'rm -rf "$W"' EXIT
echo "binary: $VOUCH ($(ldd "$VOUCH" | grep -c '=>') shared libraries: $(ldd "$VOUCH" | awk '/=>/ {print $1}' | tr '\n' ' '))"
for r in $(seq "$ROUNDS"); do
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  # Alternate the order each round so neither side always runs second.
  if [ $((r % 2)) = 1 ]; then a="$VOUCH --version"; b="hyperfine --version"; else a="hyperfine --version"; b="$VOUCH --version"; fi
  hyperfine -N --warmup 20 -r "$RUNS" "$a" "$b" --export-json "$W/r$r.json" >/dev/null 2>&1
  python3 - "$W/r$r.json" "$r" "$load" <<'PY'
import json, sys
res = {("hyperfine" if x["command"].startswith("hyperfine") else "vouch"): x
       for x in json.load(open(sys.argv[1]))["results"]}
v, h = res["vouch"], res["hyperfine"]
cpu = lambda x: (x["user"] + x["system"]) * 1e3
print(f"round {sys.argv[2]} (load {sys.argv[3]}): vouch median {v['median'] * 1e3:.2f} ms, "
      f"CPU {cpu(v):.2f} ms; hyperfine median {h['median'] * 1e3:.2f} ms, CPU {cpu(h):.2f} ms; "
      f"ratio wall {v['median'] / h['median']:.2f}x, CPU {cpu(v) / cpu(h):.2f}x")
PY
done
