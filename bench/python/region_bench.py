#!/usr/bin/env python3
"""What one `with vouch.region(...)` costs inside a leg (issue 35, item 4: at most 3 us).

    python3 bench/python/region_bench.py [--regions N] [--rounds R] [--module DIR] [--torch-shape]

Inside a leg: VOUCH_METRICS names a fresh file in a temporary folder. Each round times N
back-to-back regions (each begins and ends the channel's region, the worst case: markers on
every one) and N bare loop iterations; a region's cost is the difference per iteration, in wall
time and in the thread's CPU time (which a loaded machine inflates less). Prints the median, min
and max over the rounds, the lines written (they must be 2 N per round, whole)
and the machine's load. --module DIR times the vouch module found in DIR instead (e.g. an
older one: `git show 3cc89e2:python/vouch/__init__.py > /tmp/old/vouch/__init__.py`).
--torch-shape puts a stand-in torch.cuda.nvtx (push/pop that do nothing) in front, so the
region's own path around an NVTX call is timed too; a real NVTX call's cost is NVTX's.
"""

import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time
import types


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--regions", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--module", default=str(pathlib.Path(__file__).resolve().parents[2] / "python"))
    ap.add_argument("--torch-shape", action="store_true")
    a = ap.parse_args()
    if a.regions < 1 or a.rounds < 1:
        ap.error("--regions and --rounds must be at least 1")

    tmp = tempfile.TemporaryDirectory()
    path = os.path.join(tmp.name, "metrics.jsonl")
    os.environ["VOUCH_METRICS"] = path
    if a.torch_shape:
        torch = types.ModuleType("torch")
        torch.cuda = types.SimpleNamespace(
            nvtx=types.SimpleNamespace(range_push=lambda n: 0, range_pop=lambda: 0))
        sys.modules["torch"] = torch
    sys.path.insert(0, a.module)
    import vouch

    region = vouch.region
    per_region_ns, per_region_cpu_ns = [], []
    for _ in range(a.rounds):
        if os.path.exists(path):
            if hasattr(vouch, "_close"):
                vouch._close()
            os.remove(path)
        t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        for _ in range(a.regions):
            pass
        bare, bare_cpu = time.perf_counter_ns() - t0, time.thread_time_ns() - c0
        t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        for _ in range(a.regions):
            with region("step"):
                pass
        timed, timed_cpu = time.perf_counter_ns() - t0, time.thread_time_ns() - c0
        if hasattr(vouch, "flush"):
            vouch.flush()
        with open(path, encoding="utf-8") as f:
            lines = [json.loads(x) for x in f]
        if len(lines) != 2 * a.regions:
            sys.exit("region_bench: %d lines written for %d regions" % (len(lines), a.regions))
        per_region_ns.append((timed - bare) / a.regions)
        per_region_cpu_ns.append((timed_cpu - bare_cpu) / a.regions)
    load = os.getloadavg()
    print("vouch module: %s" % os.path.dirname(vouch.__file__))
    print("regions per round: %d, rounds: %d, NVTX: %s" % (
        a.regions, a.rounds, "torch-shaped stand-in" if a.torch_shape else "none (markers only)"))
    for what, v in (("wall", per_region_ns), ("CPU (this thread)", per_region_cpu_ns)):
        print("per region, %s: median %.2f us, min %.2f us, max %.2f us" % (
            what, statistics.median(v) / 1e3, min(v) / 1e3, max(v) / 1e3))
    print("load average: %.2f %.2f %.2f on %d CPUs" % (load + (os.cpu_count(),)))


if __name__ == "__main__":
    main()
