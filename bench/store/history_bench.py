#!/usr/bin/env python3
"""`vouch history add` and `vouch history trend` against the sqlite3 shell, in one run (issue 39).

  add:   RECORDS copies of the stored fixture run (tests/data/store/run, each with its own start
         time, commit and writer) added by one `vouch history add` process to a fresh SQLite
         store, against the sqlite3 shell replaying the same rows into a fresh store: the rows
         dumped from a store vouch filled, one transaction per record as vouch commits them,
         the same schema, indexes and pragmas.
  trend: `vouch history trend tok_s --json` with the step search (a planted 3 % step at 60 %,
         0.1 % noise), and with --no-steps, against the sqlite3 shell reading the same points
         (SELECT of commit, start and median, joined and ordered as vouch's query), at each
         size of POINTS.

Every command is timed as a child of this process (os.wait4: its user + system CPU; its peak
RSS from GNU time's %M, see timed()); the rounds alternate which side goes first, and the load average (/proc/loadavg) is
printed beside each round. Ratios are within a round.

The trend stores are made once per size (kept under --work between invocations): the RECORDS
runs vouch added, then POINTS - RECORDS runs added in bulk by one sqlite3 transaction (Python's
sqlite3 module), each a `runs` row with every column `history add` writes (the first stored
run's row with its own 32-hex run key and content hash, 40-hex commit, start time, day and
ingest time) and its five `summaries` rows as `history add` writes them (tok_s and the four
vouch.* metrics); not written: the legs, windows and metrics rows (trend reads none) and the
record document (a stub '{}': a real one is ~12 KB, 12 GB at a million runs).

Bytes a point: (peak RSS of the trend at POINTS - peak RSS of the same command on the store of
the RECORDS runs alone) / (POINTS - RECORDS).

usage: bench/store/history_bench.py [--vouch build/vouch] [--records 200]
         [--points 10000,100000,1000000] [--rounds 3] [--work DIR] [--skip-add] [--skip-trend]
"""
import argparse
import hashlib
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUERY = ("SELECT r.commit_sha, r.started_unix_s, s.median FROM summaries s JOIN runs r "
         "ON r.run_key = s.run_key WHERE s.name = 'tok_s' AND s.arm = 'run' "
         "ORDER BY r.started_unix_s, r.run_key")


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def timed(cmd, stdin=None):
    """Runs CMD; returns (cpu seconds user+sys, peak RSS MB, wall seconds) of that child."""
    # Through GNU time (a small process): a child forked from this Python starts with Python's
    # peak RSS as its own (the kernel keeps the parent's high-water mark across the exec), so
    # the peak is time's report of its child (%M); the CPU is wait4's (time's own ~1 ms, on
    # both sides alike).
    rss_file = None
    if os.path.exists("/usr/bin/time"):
        rss_file = tempfile.NamedTemporaryFile(prefix="history_bench_rss.", delete=False).name
        cmd = ["/usr/bin/time", "-o", rss_file, "-f", "%M"] + cmd
    t0 = time.monotonic()
    fin = open(stdin) if stdin else subprocess.DEVNULL
    p = subprocess.Popen(cmd, stdin=fin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if stdin:
        fin.close()
    if p.returncode != 0:
        sys.exit(f"history_bench: failed ({p.returncode}): {' '.join(cmd)}\n{err.decode()}")
    peak_kb = ru.ru_maxrss
    if rss_file:
        with open(rss_file) as f:
            peak_kb = int(f.read().split()[-1])
        os.remove(rss_file)
    return ru.ru_utime + ru.ru_stime, peak_kb / 1024.0, wall


def make_records(dst, n):
    src = os.path.join(ROOT, "tests/data/store/run")
    rec = json.load(open(os.path.join(src, "record.json")))
    dirs = []
    for i in range(n):
        d = os.path.join(dst, f"r{i:05d}")
        shutil.copytree(src, d)
        r = json.loads(json.dumps(rec))
        r["started_unix_s"] = 1796000000.0 + 60 * i
        r["writer"] = {"pid": 1000 + i, "host": "vm", "boot_id": "b", "start_ticks": i}
        r["revisions"] = [{"path": "/src", "git": True, "commit": f"{0xc0ffee00 + i:040x}",
                           "dirty": False, "branch": "main"}]
        json.dump(r, open(os.path.join(d, "record.json"), "w"), indent=2)
        dirs.append(d)
    return dirs


def dump_replay(store, out_path):
    """The rows vouch stored, as SQL: one transaction per record, as vouch commits them."""
    db = sqlite3.connect(store)
    out = open(out_path, "w")

    def lit(v):
        if v is None:
            return "NULL"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            return repr(v)
        if isinstance(v, bytes):
            return "X'" + v.hex() + "'"
        return "'" + v.replace("'", "''") + "'"
    out.write("PRAGMA journal_mode=WAL;\nPRAGMA synchronous=NORMAL;\nPRAGMA foreign_keys=ON;\n")
    for (sql,) in db.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT "
                             "LIKE 'sqlite_%'"):
        out.write(sql + ";\n")
    tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table' AND "
                                       "name NOT LIKE 'sqlite_%'")]
    keyed = [t for t in tables
             if "run_key" in [c[1] for c in db.execute(f"PRAGMA table_info({t})")]]
    order = ["runs"] + [t for t in keyed if t != "runs"]
    for (key,) in db.execute("SELECT run_key FROM runs ORDER BY rowid").fetchall():
        out.write("BEGIN IMMEDIATE;\n")
        for t in order:
            for row in db.execute(f"SELECT * FROM {t} WHERE run_key = ?", (key,)):
                out.write(f"INSERT INTO {t} VALUES({','.join(lit(v) for v in row)});\n")
        out.write("COMMIT;\n")


def trend_store(ref, path, points, records):
    """REF's runs, then POINTS - RECORDS runs in bulk, one transaction (see the top)."""
    if os.path.exists(path + ".done"):
        return 0.0
    t0 = time.monotonic()
    for s in ("", "-wal", "-shm"):
        if os.path.exists(path + s):
            os.remove(path + s)
    shutil.copy(ref, path)
    db = sqlite3.connect(path, isolation_level=None)
    # The bulk without a journal (one transaction of a throwaway file); WAL again afterwards,
    # as vouch leaves a store.
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    cols = [c[1] for c in db.execute("PRAGMA table_info(runs)")]
    first = dict(zip(cols, db.execute("SELECT * FROM runs ORDER BY started_unix_s LIMIT 1")
                     .fetchone()))
    first["record_json"] = "{}"
    scols = [c[1] for c in db.execute("PRAGMA table_info(summaries)")]
    sums = [dict(zip(scols, r)) for r in
            db.execute("SELECT * FROM summaries WHERE run_key = ? ORDER BY name",
                       (first["run_key"],))]
    run_sql = f"INSERT INTO runs ({','.join(cols)}) VALUES ({','.join('?' * len(cols))})"
    sum_sql = f"INSERT INTO summaries ({','.join(scols)}) VALUES ({','.join('?' * len(scols))})"
    db.execute("BEGIN")

    def rows():
        for i in range(records, points):
            key = hashlib.sha256(f"bulk{i}".encode()).hexdigest()[:32]
            started = 1796000000.0 + 60.0 * i
            r = dict(first)
            r.update(run_key=key, content_sha256=hashlib.sha256(key.encode()).hexdigest(),
                     started_unix_s=started, ended_unix_s=started + 30,
                     started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
                     day=time.strftime("%Y-%m-%d", time.gmtime(started)),
                     commit_sha=hashlib.sha1(key.encode()).hexdigest(),
                     ingested_unix_s=started + 60)
            yield i, key, r
    batch_runs, batch_sums = [], []
    for i, key, r in rows():
        batch_runs.append([r[c] for c in cols])
        v = 1234.5 * (1 + 0.001 * math.sin(i)) * (1.03 if i >= points * 6 // 10 else 1)
        for s in sums:
            s = dict(s, run_key=key)
            if s["name"] == "tok_s":
                s.update(median=v, min=v, max=v)
            batch_sums.append([s[c] for c in scols])
        if len(batch_runs) >= 20000:
            db.executemany(run_sql, batch_runs)
            db.executemany(sum_sql, batch_sums)
            batch_runs, batch_sums = [], []
    db.executemany(run_sql, batch_runs)
    db.executemany(sum_sql, batch_sums)
    db.execute("COMMIT")
    db.execute("PRAGMA journal_mode=WAL")
    db.close()
    open(path + ".done", "w").close()
    return time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vouch", default=os.path.join(ROOT, "build/vouch"))
    ap.add_argument("--records", type=int, default=200)
    ap.add_argument("--points", default="10000,100000,1000000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", default="")
    ap.add_argument("--skip-add", action="store_true")
    ap.add_argument("--skip-trend", action="store_true")
    a = ap.parse_args()
    vouch = os.path.abspath(a.vouch)
    work = a.work or tempfile.mkdtemp(prefix="vouch-history-bench.")
    os.makedirs(work, exist_ok=True)
    print(f"# {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {os.uname().nodename} "
          f"nproc={os.cpu_count()} load: {load()}; vouch {vouch}; work {work}")
    runs = os.path.join(work, "runs")
    if not os.path.isdir(runs):
        os.makedirs(runs)
        make_records(runs, a.records)
    dirs = sorted(os.path.join(runs, d) for d in os.listdir(runs))[:a.records]
    ref = os.path.join(work, "ref.sqlite")
    replay = os.path.join(work, "replay.sql")
    if not os.path.exists(replay):
        subprocess.run([vouch, "history", "add", "--store", ref] + dirs, check=True,
                       stdout=subprocess.DEVNULL)
        dump_replay(ref, replay)
    t = os.path.join(work, "t.sqlite")

    def fresh():
        for s in ("", "-wal", "-shm"):
            if os.path.exists(t + s):
                os.remove(t + s)

    if not a.skip_add:
        print(f"\n## history add: {a.records} records, one process, CPU (user+sys) of the child")
        print("| round | load (1/5/15 min) | vouch | per record | sqlite3 replaying the rows | "
              "vouch / sqlite3 | peak RSS vouch, sqlite3 |")
        print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
        for r in range(1, a.rounds + 1):
            ld = load()
            res = {}
            for who in (("vouch", "sqlite3") if r % 2 else ("sqlite3", "vouch")):
                fresh()
                if who == "vouch":
                    res[who] = timed([vouch, "history", "add", "--store", t] + dirs)
                else:
                    res[who] = timed(["sqlite3", t], stdin=replay)
            v, s = res["vouch"], res["sqlite3"]
            print(f"| {r} | {ld} | {v[0]:.3f} s | {v[0] / a.records * 1e3:.2f} ms | "
                  f"{s[0]:.3f} s | **{v[0] / s[0]:.2f}x** | {v[1]:.0f} MB, {s[1]:.0f} MB |",
                  flush=True)
        fresh()
    if a.skip_trend:
        return
    base = timed([vouch, "history", "trend", "--store", ref, "tok_s", "--json"])
    print(f"\n## history trend tok_s: CPU (user+sys) of the child; baseline peak RSS (the "
          f"{a.records} runs alone): {base[1]:.1f} MB")
    print("| points | round | load (1/5/15 min) | vouch --json (steps) | --no-steps | sqlite3 "
          "reading the points | vouch / sqlite3 | peak RSS vouch | bytes a point |")
    print("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for p in [int(x) for x in a.points.split(",")]:
        path = os.path.join(work, f"trend{p}.sqlite")
        made = trend_store(ref, path, p, a.records)
        if made:
            print(f"(store of {p} points made in {made:.0f} s)", flush=True)
        trend = [vouch, "history", "trend", "--store", path, "tok_s", "--json"]
        for r in range(1, a.rounds + 1):
            ld = load()
            res = {}
            order = ("vouch", "plain", "sqlite3") if r % 2 else ("sqlite3", "plain", "vouch")
            for who in order:
                if who == "vouch":
                    res[who] = timed(trend)
                elif who == "plain":
                    res[who] = timed(trend + ["--no-steps"])
                else:
                    res[who] = timed(["sqlite3", "-readonly", path, QUERY])
            v, n, s = res["vouch"], res["plain"], res["sqlite3"]
            per = (v[1] - base[1]) * 1024 * 1024 / (p - a.records)
            print(f"| {p:,} | {r} | {ld} | {v[0]:.3f} s | {n[0]:.3f} s | {s[0]:.3f} s | "
                  f"**{v[0] / s[0]:.2f}x** | {v[1]:.0f} MB | **{per:.0f}** |", flush=True)
    print(f"\n# load after: {load()}")


if __name__ == "__main__":
    main()
