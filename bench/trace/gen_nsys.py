#!/usr/bin/env python3
"""Generates an Nsight Systems-style SQLite database with N kernel rows (default 5 million).

The schema is tests/data/trace/nsys_schema.sql (written from NVIDIA's documented export
schema); no real export can be made without a GPU. Each "step" is an NVTX decode_step range
with 64 launches (cudaLaunchKernel) and their kernels.

usage: gen_nsys.py OUT.sqlite [--kernels 5000000]
"""
import argparse
import os
import sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ["gemm_%d_kernel" % i for i in range(16)] + ["norm_kernel", "elementwise_add", "flash_fwd", "reduce_argmax"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--kernels", type=int, default=5_000_000)
    a = ap.parse_args()
    if os.path.exists(a.out):
        os.remove(a.out)
    db = sqlite3.connect(a.out)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.executescript(open(os.path.join(HERE, "../../tests/data/trace/nsys_schema.sql")).read())
    db.execute("INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'decode_step')")
    for i, n in enumerate(NAMES):
        db.execute("INSERT INTO StringIds VALUES (?, ?)", (100 + i, n))
    db.execute("INSERT INTO TARGET_INFO_GPU (vmId, id, name) VALUES (0, 0, 'Synthetic GPU')")
    gtid = (4242 << 24) + 4243
    gpid = 4242 << 24
    per_step = 64

    def kernels():
        t = 1_000_000
        for i in range(a.kernels):
            name = 100 + (i * 7) % len(NAMES)
            dur = 2_000 + (i * 7919) % 50_000
            yield (t + 3_000, t + 3_000 + dur, 0, 1, None, 7, i + 1, gpid, name, name, None, 0, 0, 128, 132, 1, 1,
                   256, 1, 1, 0, 0, 0, 0, i, 0, 0, 0)
            t += dur + 4_000

    def runtime():
        t = 1_000_000
        for i in range(a.kernels):
            dur = 2_000 + (i * 7919) % 50_000
            yield (t, t + 2_500, 0, gtid, i + 1, 1, 0, 0)
            t += dur + 4_000

    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + ",".join("?" * 28) + ")", kernels())
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?,?)", runtime())
    # NVTX ranges over every PER_STEP launches.
    rows = db.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start").fetchall()
    ranges = []
    for s in range(0, len(rows), per_step):
        chunk = rows[s:s + per_step]
        ranges.append((chunk[0][0] - 500, chunk[-1][1] + 500, 59, 2, gtid))
    db.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid) VALUES (?,?,?,?,?)", ranges)
    db.commit()
    db.close()
    print(f"{a.out}: {os.path.getsize(a.out) / 1e6:.1f} MB, {a.kernels} kernels, {len(ranges)} NVTX ranges")


if __name__ == "__main__":
    main()
