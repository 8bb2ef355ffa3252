#!/usr/bin/env python3
"""An Nsight Compute CSV export of about --mb megabytes, built from a real export (issue 39).

The fixture's lines before the header (program output, ==PROF== lines), its header (and, on
the raw page, its units row) are kept; its kernels are repeated with launch IDs 0, 1, 2, ...
so the file has the real shape (raw page: one wide row per kernel; details page: one row per
kernel x metric) at any size.

usage: gen_ncu.py FIXTURE OUT --mb N
"""
import argparse
import csv
import io
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fixture")
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=300)
    a = ap.parse_args()
    with open(a.fixture, newline="") as f:
        lines = f.read().split("\n")
    head_at = next(i for i, l in enumerate(lines) if l.startswith('"ID",') and '"Kernel Name"' in l)
    prefix = "\n".join(lines[: head_at + 1]) + "\n"
    body = [l for l in lines[head_at + 1 :] if l]
    raw = '"Metric Name"' not in lines[head_at]
    if raw and body and body[0].startswith('"",'):
        prefix += body.pop(0) + "\n"
    # Each kernel's rows without their leading launch ID field, in file order.
    kernels, order = {}, []
    for l in body:
        if l.startswith("=="):
            continue
        kid = next(csv.reader(io.StringIO(l)))[0]
        if kid not in kernels:
            kernels[kid] = []
            order.append(kid)
        kernels[kid].append(l[len(kid) + 2 :])  # after '"ID"'
    tails = [kernels[k] for k in order]
    target = int(a.mb * 1e6)
    written, n = 0, 0
    with open(a.out, "w", newline="") as out:
        out.write(prefix)
        written += len(prefix)
        batch = []
        while written < target:
            head = f'"{n}"'
            block = "".join(head + t + "\n" for t in tails[n % len(tails)])
            batch.append(block)
            written += len(block)
            n += 1
            if len(batch) >= 256:
                out.write("".join(batch))
                batch = []
        out.write("".join(batch))
    print(f"{a.out}: {'raw' if raw else 'details'} page, {n} kernels, {written / 1e6:.1f} MB")


if __name__ == "__main__":
    sys.exit(main())
