#!/usr/bin/env python3
"""Generates a large Kineto trace by repeating a real one with shifted times.

usage: gen_kineto.py SOURCE.json[.gz] OUT.json --mb 1100

Each repetition shifts every timestamp by a whole number of the source's extent (exact
integer nanoseconds, written back with three decimals as Kineto does) and shifts the
annotations' "External id" so that CPU and GPU ranges still pair up one to one.
"""
import argparse
import decimal
import gzip
import json
import os


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=1100)
    a = ap.parse_args()
    opener = gzip.open if open(a.source, "rb").read(2) == b"\x1f\x8b" else open
    with opener(a.source, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc.pop("traceEvents")
    templates = []
    lo, hi = None, None
    for ev in events:
        ts = ev.get("ts")
        if not isinstance(ts, (int, decimal.Decimal)):
            continue  # metadata without time: written once below
        ts_ns = int(decimal.Decimal(ts) * 1000)
        end_ns = ts_ns + int(decimal.Decimal(ev.get("dur", 0)) * 1000)
        lo = ts_ns if lo is None else min(lo, ts_ns)
        hi = end_ns if hi is None else max(hi, end_ns)
        e = dict(ev)
        e["ts"] = "@@TS@@"
        for k in ("dur",):
            if k in e:
                e[k] = float(e[k])
        ext = None
        if isinstance(e.get("args"), dict) and "External id" in e["args"]:
            e["args"] = dict(e["args"])
            ext = int(e["args"]["External id"])
            e["args"]["External id"] = "@@EXT@@"
        text = json.dumps(e, default=float)
        templates.append((text, ts_ns, ext))
    period_ns = (hi - lo) + 1_000_000
    target = int(a.mb * 1e6)
    with open(a.out, "w") as out:
        head = json.dumps(doc, default=float)[:-1]  # without the closing brace
        out.write(head + ', "traceEvents": [\n')
        first = True
        for ev in events:
            if not isinstance(ev.get("ts"), (int, decimal.Decimal)):
                out.write(("" if first else ",\n") + json.dumps(ev, default=float))
                first = False
        rep = 0
        while out.tell() < target:
            shift = rep * period_ns
            ext_shift = rep * 10_000_000
            chunk = []
            for text, ts_ns, ext in templates:
                t = ts_ns + shift
                s = text.replace('"@@TS@@"', f"{t // 1000}.{t % 1000:03d}", 1)
                if ext is not None:
                    s = s.replace('"@@EXT@@"', str(ext + ext_shift), 1)
                chunk.append(s)
            out.write(("" if first else ",\n") + ",\n".join(chunk))
            first = False
            rep += 1
        out.write("\n]}\n")
    print(f"{a.out}: {os.path.getsize(a.out) / 1e6:.1f} MB, {rep} repetitions of {len(templates)} events")


if __name__ == "__main__":
    main()
