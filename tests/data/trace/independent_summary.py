#!/usr/bin/env python3
"""An independent computation of `vouch trace summarize` numbers from a Kineto trace.

Python standard library only (gzip + json). Timestamps are read as Decimal so that the
16-digit microsecond values convert to integer nanoseconds exactly; vouch's C++ reader
does the same by parsing the digits, so the two must agree to the nanosecond.

It deliberately uses other algorithms than vouch: unions and overlaps by an event sweep
(+1/-1 counters) instead of merging sorted intervals, and a plain scan for windows.

usage: independent_summary.py TRACE [--window NAME] [--top N]   -> JSON on stdout
"""
import argparse
import decimal
import gzip
import json
import statistics
import sys

LAUNCH_MARKERS = ("LaunchKernel", "LaunchCooperativeKernel", "GraphLaunch")


FLOAT = False  # --float: plain floats (faster, for the benchmark baseline; may be off by 1 ns)


def ns(x):
    if FLOAT:
        return int(round(x * 1000))
    return int((decimal.Decimal(x) * 1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=float if FLOAT else decimal.Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def sweep_union(intervals):
    """Length of the union of [s, e) intervals, by a sweep over +1/-1 events."""
    events = []
    for s, e in intervals:
        if e > s:
            events.append((s, 1))
            events.append((e, -1))
    events.sort(key=lambda x: (x[0], -x[1]))
    depth, total, since = 0, 0, None
    for t, d in events:
        if depth == 0 and d == 1:
            since = t
        depth += d
        if depth == 0 and d == -1:
            total += t - since
    return total


def sweep_intersection(a, b):
    """Time covered by both unions: a sweep with two counters."""
    events = []
    for s, e in a:
        if e > s:
            events += [(s, 0, 1), (e, 0, -1)]
    for s, e in b:
        if e > s:
            events += [(s, 1, 1), (e, 1, -1)]
    events.sort(key=lambda x: (x[0], -x[2]))
    depth = [0, 0]
    total, last = 0, None
    for t, which, d in events:
        if depth[0] > 0 and depth[1] > 0 and last is not None:
            total += t - last
        depth[which] += d
        last = t
    return total


def figures(ops, launches, elapsed):
    kernels = [o for o in ops if o["kind"] == "kernel"]
    f = {
        "elapsed_ns": elapsed,
        "gpu_operation_count": len(ops),
        "kernel_count": len(kernels),
        "kernel_sum_ns": sum(o["e"] - o["s"] for o in kernels),
        "kernel_union_ns": sweep_union([(o["s"], o["e"]) for o in kernels]),
        "gpu_span_ns": (max(o["e"] for o in ops) - min(o["s"] for o in ops)) if ops else 0,
    }
    gaps = []
    reach = None
    for o in sorted(kernels, key=lambda o: (o["s"], o["e"])):
        if reach is not None and o["s"] > reach:
            gaps.append(o["s"] - reach)
        reach = o["e"] if reach is None else max(reach, o["e"])
    f["gap_count"] = len(gaps)
    f["gap_total_ns"] = sum(gaps)
    f["gap_max_ns"] = max(gaps) if gaps else 0
    lu = [(a["s"], a["e"]) for a in launches]
    f["launch_api_count"] = len(lu)
    f["launch_api_union_ns"] = sweep_union(lu)
    f["launch_api_overlap_ns"] = sweep_intersection(lu, [(o["s"], o["e"]) for o in kernels])
    return f


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--window")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--float", action="store_true", help="parse numbers as floats (benchmark baseline)")
    args = ap.parse_args()
    global FLOAT
    FLOAT = args.float
    events = load(args.trace)
    ops, api, cpu_ranges, gpu_ranges = [], [], [], []
    kinds = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
    for ev in events:
        if ev.get("ph") != "X" or "dur" not in ev or "ts" not in ev:
            continue
        cat = ev.get("cat")
        a = ev.get("args") or {}
        s = ns(ev["ts"])
        e = s + ns(ev["dur"])
        if cat in kinds:
            ops.append({"kind": kinds[cat], "name": ev.get("name", ""), "s": s, "e": e,
                        "device": a.get("device", ev.get("pid"))})
        elif cat in ("cuda_runtime", "cuda_driver"):
            name = ev.get("name", "")
            if any(m in name for m in LAUNCH_MARKERS):
                api.append({"s": s, "e": e, "pid": ev.get("pid"), "tid": ev.get("tid")})
        elif cat == "user_annotation":
            cpu_ranges.append({"name": ev.get("name"), "s": s, "e": e, "pid": ev.get("pid"),
                               "tid": ev.get("tid"), "ext": a.get("External id")})
        elif cat == "gpu_user_annotation":
            gpu_ranges.append({"name": ev.get("name"), "s": s, "e": e, "device": ev.get("pid"),
                               "ext": a.get("External id")})

    chosen = []
    if args.window is None:
        every = [ev for ev in events if isinstance(ev.get("ts"), (int, float, decimal.Decimal))]
        first = min(ns(ev["ts"]) for ev in every if ev.get("ph") == "X" and ev.get("cat") in
                    ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver",
                     "user_annotation", "gpu_user_annotation"))
        last = max(ns(ev["ts"]) + ns(ev["dur"]) for ev in every if ev.get("ph") == "X" and ev.get("cat") in
                   ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver",
                    "user_annotation", "gpu_user_annotation"))
        total = figures(ops, api, last - first)
        chosen = ops
        out = {"window": None, "totals": total}
    else:
        instances = []
        for g in sorted((r for r in gpu_ranges if r["name"] == args.window), key=lambda r: r["s"]):
            inst_ops = [o for o in ops if g["s"] <= o["s"] < g["e"] and o["device"] == g["device"]]
            cpu = [c for c in cpu_ranges if c["ext"] == g["ext"] and c["name"] == args.window]
            c = cpu[0]
            launches = [x for x in api if c["s"] <= x["s"] < c["e"] and x["pid"] == c["pid"] and x["tid"] == c["tid"]]
            instances.append(figures(inst_ops, launches, c["e"] - c["s"]))
            chosen += inst_ops
        keys = instances[0].keys() if instances else []
        total = {k: (max(i[k] for i in instances) if k == "gap_max_ns" else sum(i[k] for i in instances))
                 for k in keys}
        out = {"window": args.window, "instance_count": len(instances), "totals": total, "instances": instances}

    by_name = {}
    for o in chosen:
        if o["kind"] == "kernel":
            by_name.setdefault(o["name"], []).append(o["e"] - o["s"])
    rows = [{"name": n, "count": len(d), "total_ns": sum(d), "median_ns": float(statistics.median(d)),
             "min_ns": min(d), "max_ns": max(d)} for n, d in by_name.items()]
    rows.sort(key=lambda r: (-r["total_ns"], r["name"]))
    out["kernel_names"] = len(rows)
    out["top_kernels"] = rows[:args.top]
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
