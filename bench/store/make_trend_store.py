#!/usr/bin/env python3
"""Grows a history store to POINTS runs for the trend benches (bench/store/report_trend_bench.sh,
bench/curves.sh): the store must already hold one real run (`vouch history add`), whose GPU and
clock the POINTS - 1 bulk rows copy; one commit each, a 9 % drop of tok_s planted at 60 %,
0.5 % noise, seeded. --keys hex writes 32-hex run keys (the store packs those two digits a
byte); bulk (the default) the "bulk000..." keys the report figures were measured with.

usage: make_trend_store.py STORE POINTS [--keys bulk|hex]
"""
import argparse
import random
import sqlite3

ap = argparse.ArgumentParser()
ap.add_argument("store")
ap.add_argument("points", type=int)
ap.add_argument("--keys", choices=["bulk", "hex"], default="bulk")
a = ap.parse_args()
db = sqlite3.connect(a.store)
n = a.points
gpu_name, gpu_uuid, simulated, clock = db.execute(
    "SELECT gpu_name, gpu_uuid, simulated, clock_sm_median_mhz FROM runs LIMIT 1").fetchone()
rng = random.Random(20261206)
runs, sums = [], []
for i in range(1, n):
    key = f"{i:032x}" if a.keys == "hex" else f"bulk{i:028d}"
    v = 1234.5 * (0.91 if i >= n * 6 // 10 else 1) * (1 + 0.005 * rng.gauss(0, 1))
    runs.append((key, key, 1796000000.0 + i * 60.0, f"{i:040x}", gpu_name, gpu_uuid, simulated, clock))
    sums.append((key, v, v, v, clock))
db.executemany("INSERT INTO runs (run_key, content_sha256, kind, status, record_schema_version, "
               "started, started_unix_s, day, commit_sha, branch, host, gpu_name, gpu_uuid, simulated, "
               "clock_sm_median_mhz, measured_legs, valid_legs, reproduce, ingested_unix_s, record_json) "
               "VALUES (?,?,'run','complete',1,'',?,'2026-12-01',?,'main','vm',?,?,?,?,2,2,'',0,'{}')", runs)
db.executemany("INSERT INTO summaries (run_key, arm, name, unit, better, n, median, min, max, "
               "clock_sm_median_mhz) VALUES (?,'run','tok_s','tok/s','higher',2,?,?,?,?)", sums)
db.commit()
