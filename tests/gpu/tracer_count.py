#!/usr/bin/env python3
"""Independent reading of a libvouch_cupti trace (JSON lines), for the GPU check.

usage: tracer_count.py TRACE.jsonl [--region NAME]
Prints one JSON object: totals (kernels, graph kernels, graph ids, launches, memcpy, memset,
dropped, partial) and, with --region, the kernels that start inside each instance of the
NVTX range NAME (and those whose launch call lies inside it).
"""
import argparse
import json
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("trace")
    p.add_argument("--region", action="append", default=[])
    a = p.parse_args()
    names, kernels, api, starts, ranges = {}, [], {}, {}, []
    header = footer = None
    dropped = 0
    copies = sets = 0
    for line in open(a.trace):
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        t = r.get("t") or r.get("type")
        if t == "header":
            header = r
        elif t == "footer":
            footer = r
        elif t == "n":
            names[r["id"]] = r["v"]
        elif t == "k":
            kernels.append(r)
        elif t == "c":
            copies += 1
        elif t == "m":
            sets += 1
        elif t == "a":
            api[r["corr"]] = r
        elif t == "ms":
            starts[r["id"]] = r
        elif t == "me" and r["id"] in starts:
            s = starts.pop(r["id"])
            ranges.append((names[s["n"]], s["ts"], r["ts"]))
        elif t == "drop":
            dropped += r["n"]
    launches = [x for x in api.values() if "Launch" in names.get(x["n"], "")]
    out = {
        "header_ok": bool(header and header.get("ok")),
        "partial": footer is None,
        "kernels": len(kernels),
        "graph_kernels": sum(1 for k in kernels if "gid" in k),
        "graph_ids": sorted({k["gid"] for k in kernels if "gid" in k}),
        "graph_nodes": len({(k["gid"], k["gnode"]) for k in kernels if "gid" in k}),
        "launch_calls": len(launches),
        "graph_launch_calls": sum(1 for x in launches
                                  if "GraphLaunch" in names[x["n"]] and not x.get("drv")),
        "memcpy": copies,
        "memset": sets,
        "dropped": dropped,
        "ranges": sorted({n for n, _, _ in ranges}),
        "regions": {},
    }
    for want in a.region:
        inst = [(s, e) for n, s, e in ranges if n == want]
        by_time = [sum(1 for k in kernels if s <= k["s"] <= e) for s, e in inst]
        by_launch = [sum(1 for k in kernels if k["corr"] in api and s <= api[k["corr"]]["s"] <= e)
                     for s, e in inst]
        gpu_ns = []
        for s, e in inst:
            iv = sorted((max(k["s"], s), min(k["e"], e)) for k in kernels if k["e"] > s and k["s"] < e)
            tot, cur_s, cur_e = 0, None, None
            for x, y in iv:
                if cur_e is None or x > cur_e:
                    if cur_e is not None:
                        tot += cur_e - cur_s
                    cur_s, cur_e = x, y
                else:
                    cur_e = max(cur_e, y)
            if cur_e is not None:
                tot += cur_e - cur_s
            gpu_ns.append(tot)
        out["regions"][want] = {"instances": len(inst), "kernels_by_time": sum(by_time),
                                "kernels_by_launch": sum(by_launch), "gpu_active_ns": gpu_ns[:50]}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
