#!/usr/bin/env python3
"""Builds the two-GPU simulated streams from the one-GPU H200 recordings (see README.md).

    python3 tests/data/sim/make_x2.py   # from the repository root; rewrites h200x2_*.jsonl
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "..", "fixtures", "nvml_h200_scenario.jsonl")


def rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if '"t_s"' in line]


def rebase(part):
    t0, u0 = part[0]["t_s"], part[0]["unix_s"]
    out = []
    for r in part:
        r = dict(r)
        r["t_s"] = round(r["t_s"] - t0, 6)
        r["unix_s"] = round(1800000000.0 + r["unix_s"] - u0, 6)
        out.append(r)
    return out


def write(name, per_gpu):
    merged = []
    for gpu, part in enumerate(per_gpu):
        for r in part:
            merged.append(dict({"gpu": gpu}, **r))
    merged.sort(key=lambda r: (r["t_s"], r["gpu"]))
    with open(os.path.join(HERE, name), "w") as f:
        for r in merged:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


busy = rows(os.path.join(HERE, "h200_copy_busy.jsonl"))
# The fixture's idle stretch between the two workloads (idle reason set, utilization 0).
idle = rebase([r for r in rows(FIXTURE) if 16.80 <= r["t_s"] < 16.80 + len(busy) * 0.01])
assert all(r["util_gpu_pct"] == 0 and r["reasons"] & 1 for r in idle), "not idle"
write("h200x2_busy.jsonl", [busy, busy])
write("h200x2_gpu0_idle.jsonl", [idle, busy])
write("h200x2_gpu1_slow2pct.jsonl", [busy, rows(os.path.join(HERE, "h200_copy_busy_slow2pct.jsonl"))])
