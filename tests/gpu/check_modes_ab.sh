#!/usr/bin/env bash
# Issue 34's GPU check: a host-bound A/B whose arms run two kernel mixes (modes per process),
# B with +16 memory-bound kernels per step. Expected: B slower, decided by rank (the arms'
# legs do not overlap) with the kernel mixes named, not refused; `ab --from` gives the same
# verdict and exit code. And an A/A with the same modes: refused, no direction word, from both.
# Usage (repository root): OUT=DIR VOUCH=vouch VOUCH_CUPTI_LIB=libvouch_cupti.so bash $0
set -u
: "${OUT:?}" "${VOUCH:?}"
source tests/gpu/common.sh
W=$(mktemp -d)
AB=(ab --gpu-trace --pairs 4 --seed 34 --band 1)
step modes_ab 0 "$VOUCH" "${AB[@]}" --out "$OUT/modes_ab" --a-env MODE_COUNTER="$W/ca" \
  --b-env MODE_COUNTER="$W/cb" --b-env EXTRA=16 -- python3 tests/gpu/modes_ab.py
step modes_ab_from 0 "$VOUCH" ab --from "$OUT/modes_ab/record.json"
step modes_ab_from_json 0 "$VOUCH" ab --from "$OUT/modes_ab/record.json" --json
step modes_aa 3 "$VOUCH" "${AB[@]}" --out "$OUT/modes_aa" --a-env MODE_COUNTER="$W/aa" \
  --b-env MODE_COUNTER="$W/ab" -- python3 tests/gpu/modes_ab.py
step modes_aa_from 3 "$VOUCH" ab --from "$OUT/modes_aa/record.json"
for f in modes_ab modes_ab_from modes_aa modes_aa_from; do
  grep -E "A/B verdict|decided by rank|kernel mix|refused: steps_per_s|ratio" "$OUT/$f.out" |
    sed "s/^/$f: /" >> "$OUT/summary.txt"
done
python3 - "$OUT" <<'PY' >> "$OUT/summary.txt"
import json, sys
o = sys.argv[1]
for name in ("modes_ab", "modes_aa"):
    v = json.load(open(f"{o}/{name}/record.json"))["extra"]["verdict"]
    print(name, "record:", v["verdict"], "| decided by", v.get("decided_by"),
          "| clock_normalised", v["clock_normalised"]["verdict"])
    for l in json.load(open(f"{o}/{name}/record.json"))["legs"]:
        if l.get("role") == "measured":
            m = {x["name"]: x.get("value") for x in l.get("metrics", [])}
            print("  leg", l["index"] + 1, l["arm"], "valid" if l.get("valid") else "INVALID",
                  "steps/s %.1f" % m.get("steps_per_s", 0), "mode", m.get("mode"))
PY
rm -rf "$W"
exit $fail
