#!/usr/bin/env bash
# Start-up cost (issue 39): `vouch --version` against `hyperfine --version` (a small Rust
# binary: the anchor the issue names), in the same run, ROUNDS alternated rounds of RUNS runs
# each under `hyperfine -N`. Prints each round's median wall time, CPU (user + sys) per run, the
# ratio to the anchor and the load average. Ratios only: the machine is shared.
#
# Two floors are timed beside them, built here from a five-line C++ program with vouch's own link
# flags (libstdc++ and libgcc static, no PIE): `floor`, the program alone, and `floor+simdjson`,
# the same program with Debian's libsimdjson.so as a needed library, which brings in
# libstdc++.so. Debian ships simdjson as a shared library only, so `floor+simdjson` is the least
# any C++ binary that reads JSON with Debian's simdjson can cost.
#
# usage: bench/run/startup.sh [VOUCH] [ROUNDS] [RUNS]      (from the repository root)
set -euo pipefail
VOUCH=${1:-./build/vouch}
ROUNDS=${2:-3}
RUNS=${3:-300}
command -v hyperfine >/dev/null || { echo "startup.sh: needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
W=$(mktemp -d /tmp/vouch-startup.XXXXXX)
trap 'rm -rf "$W"' EXIT
printf '#include <cstdio>\nint main() { std::puts("vouch 0.1.0"); }\n' >"$W/floor.cc"
c++ -O2 -static-libstdc++ -static-libgcc -no-pie "$W/floor.cc" -o "$W/floor"
c++ -O2 -static-libstdc++ -static-libgcc -no-pie "$W/floor.cc" -o "$W/floor+simdjson" \
  -Wl,--no-as-needed -lsimdjson
echo "binary: $VOUCH ($(ldd "$VOUCH" | grep -c '=>') shared libraries: $(ldd "$VOUCH" | awk '/=>/ {print $1}' | tr '\n' ' '))"
echo "floor+simdjson: $(ldd "$W/floor+simdjson" | awk '/=>/ {print $1}' | tr '\n' ' ')"
for r in $(seq "$ROUNDS"); do
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  # Alternate the order each round so neither side always runs first.
  cmds=("$VOUCH --version" "hyperfine --version" "$W/floor" "$W/floor+simdjson")
  if [ $((r % 2)) = 0 ]; then cmds=("${cmds[3]}" "${cmds[2]}" "${cmds[1]}" "${cmds[0]}"); fi
  hyperfine -N --warmup 20 -r "$RUNS" "${cmds[@]}" --export-json "$W/r$r.json" >/dev/null 2>&1
  python3 - "$W/r$r.json" "$r" "$load" <<'PY'
import json, sys
def name(c):
    if c.startswith("hyperfine"): return "hyperfine"
    if c.endswith("floor+simdjson"): return "floor+simdjson"
    if c.endswith("floor"): return "floor"
    return "vouch"
res = {name(x["command"]): x for x in json.load(open(sys.argv[1]))["results"]}
cpu = lambda x: (x["user"] + x["system"]) * 1e3
h = res["hyperfine"]
row = [f"round {sys.argv[2]} (load {sys.argv[3]}): hyperfine median {h['median'] * 1e3:.2f} ms, CPU {cpu(h):.2f} ms"]
for k in ("vouch", "floor", "floor+simdjson"):
    x = res[k]
    row.append(f"{k} {x['median'] * 1e3:.2f} ms, CPU {cpu(x):.2f} ms: "
               f"{x['median'] / h['median']:.2f}x wall, {cpu(x) / cpu(h):.2f}x CPU")
print("\n  ".join(row))
PY
done
