#!/usr/bin/env python3
"""Real CLI gates of known truth: `vouch baseline` then `vouch gate`, through the binary.

Each gate pins a baseline (by default the design that meets issue 34 item 4: --trials 8, no
growth, and a sequential gate of --reps 4 --look-every 3 --max-reps 15; --max-trials 20 with
--trials 5 --reps 3 --look-every 0 --max-reps 12 is Stein's growth rule) and gates a run whose
legs are worse by exactly the fail threshold's factor (1.03: the gate's log-scale threshold), or
unchanged, on the simulated device. Every leg's value is drawn beforehand from a lognormal of the
given noise (seeded), so the truth is known; the leg prints it as vouch's metric channel expects.
Counts pass / FAIL / inconclusive / refused from the exit codes (0 / 1 / 2 / 3: the modes test's
1 % false alarm on lognormal legs) and prints a Markdown row; rates are of all gates.

  python3 bench/gate/cli_gates.py --vouch build/vouch --gates 150 --better higher --change 3
"""
import argparse
import concurrent.futures
import math
import os
import random
import subprocess
import sys
import tempfile

LEG = """#!/bin/sh
n=$(cat "{d}/{phase}.count" 2>/dev/null || echo 0)
echo $((n + 1)) > "{d}/{phase}.count"
v=$(sed -n "$((n + 1))p" "{d}/{phase}.values")
sleep {sleep}
echo "{{\\"name\\":\\"{name}\\",\\"value\\":$v,\\"unit\\":\\"{unit}\\",\\"better\\":\\"{better}\\"}}" >> "$VOUCH_METRICS"
"""


def wilson_upper(k, n, z=1.645):
    p = k / n
    return (p + z * z / (2 * n) + z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)


def one_gate(vouch, sim, i, args, rng, tmp):
    d = os.path.join(tmp, f"g{i}")
    os.makedirs(d)
    name, unit = ("tok_s", "tok/s") if args.better == "higher" else ("step_ms", "ms")
    sd = args.noise / 100
    bad = math.log1p(args.change / 100)
    shift = -bad if args.better == "higher" else bad
    # Every value a leg could need (40 a side: more than any design here runs).
    with open(os.path.join(d, "base.values"), "w") as f:
        for _ in range(40):
            f.write(f"{1000 * math.exp(sd * rng.gauss(0, 1)):.6f}\n")
    with open(os.path.join(d, "gate.values"), "w") as f:
        for _ in range(40):
            f.write(f"{1000 * math.exp(shift + sd * rng.gauss(0, 1)):.6f}\n")
    for phase in ("base", "gate"):
        p = os.path.join(d, f"{phase}.sh")
        with open(p, "w") as f:
            f.write(LEG.format(d=d, phase=phase, sleep=args.sleep, name=name, unit=unit,
                               better=args.better))
        os.chmod(p, 0o755)
    env = dict(os.environ, VOUCH_SIM=sim, VOUCH_LOCK_FILE=os.path.join(d, "lock"))
    common = ["--min-busy-readings", "5", "--warmup", "0"]
    grow = ["--max-trials", str(args.max_trials)] if args.max_trials > args.trials else []
    b = subprocess.run([vouch, "baseline", *common, "--trials", str(args.trials), *grow,
                        "--baseline", os.path.join(d, "base.json"), "--out", os.path.join(d, "b"),
                        "--", os.path.join(d, "base.sh")], env=env, capture_output=True, text=True)
    if b.returncode != 0:
        sys.exit(f"gate {i}: baseline failed ({b.returncode}): {b.stdout}{b.stderr}")
    every = ["--look-every", str(args.look_every)] if args.look_every else []
    g = subprocess.run([vouch, "gate", *common, "--reps", str(args.reps), *every,
                        "--max-reps", str(args.max_reps),
                        "--baseline", os.path.join(d, "base.json"), "--out", os.path.join(d, "g"),
                        "--", os.path.join(d, "gate.sh")], env=env, capture_output=True, text=True)
    if g.returncode not in (0, 1, 2, 3):
        sys.exit(f"gate {i}: exit {g.returncode}: {g.stdout}{g.stderr}")
    trials = int(open(os.path.join(d, "base.count")).read())
    legs = int(open(os.path.join(d, "gate.count")).read())
    return g.returncode, trials, legs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vouch", required=True)
    ap.add_argument("--sim", default=os.path.join(os.path.dirname(__file__), "..", "..", "tests",
                                                  "data", "sim", "h200_copy_busy.jsonl"))
    ap.add_argument("--gates", type=int, default=100)
    ap.add_argument("--better", choices=["higher", "lower"], default="higher")
    ap.add_argument("--change", type=float, default=3.0, help="bad-direction factor, percent")
    ap.add_argument("--noise", type=float, default=2.0, help="log sd, percent")
    ap.add_argument("--sleep", default="0.6",
                    help="each leg's busy time, seconds (the simulated device's 100 ms readings: "
                         "5 busy ones need about 0.5 s)")
    ap.add_argument("--jobs", type=int, default=3, help="gates at once (each has its own lock)")
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--trials", type=int, default=8, help="baseline --trials")
    ap.add_argument("--max-trials", type=int, default=0, help="baseline --max-trials (0: none)")
    ap.add_argument("--reps", type=int, default=4, help="gate --reps")
    ap.add_argument("--look-every", type=int, default=3, help="gate --look-every (0: --reps)")
    ap.add_argument("--max-reps", type=int, default=15, help="gate --max-reps")
    args = ap.parse_args()
    counts = {0: 0, 1: 0, 2: 0, 3: 0}  # pass, FAIL, inconclusive, refused (two modes)
    trials = legs = 0
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        # One seeded generator per gate: the same draws whatever --jobs is.
        futures = [pool.submit(one_gate, os.path.abspath(args.vouch), os.path.abspath(args.sim), i,
                               args, random.Random(args.seed * 1000003 + i), tmp)
                   for i in range(args.gates)]
        for f in futures:
            rc, t, l = f.result()
            counts[rc] += 1
            trials += t
            legs += l
    n = args.gates
    print(f"| {args.noise:g} % | {args.change:+g} % | {args.better} | {n} | "
          f"{100 * counts[0] / n:.1f} % | {100 * counts[1] / n:.1f} % "
          f"({100 * wilson_upper(counts[1], n):.1f} %) | {100 * counts[2] / n:.1f} % | "
          f"{100 * counts[3] / n:.1f} % | "
          f"{trials / n:.2f} | {legs / n:.2f} |")


if __name__ == "__main__":
    main()
