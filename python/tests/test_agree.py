"""The module and the vouch binary agree (issue 36, item 5): one `vouch run` on the simulated
device whose legs each report one hostile metric through the module; where the module refuses,
the leg writes the same line itself, as a hand-written helper would. Each leg is refused by
vouch exactly when the module refused it. Needs the built binary: VOUCH_BINARY (ctest sets it);
skipped without it."""

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("VOUCH_BINARY", "")
SIM = ROOT / "tests" / "data" / "sim" / "h200_copy_busy.jsonl"

# (label, Python expression of the call's arguments); each leg makes one call.
CASES = [
    ("plain", "('tok_s', 131.5, 'tok/s', 'higher')"),
    ("upper-case reserved", "('VOUCH.wall_s', 1.0)"),
    ("mixed-case reserved", "('Gpu.active_ns', 1.0)"),
    ("10**400", "('big', 10**400)"),
    ("NaN", "('x', float('nan'))"),
    ("finite 10**300", "('huge', 10**300)"),
    ("empty direction", "('x', 1.0, '', '')"),
    ("unknown direction", "('x', 1.0, '', 'faster')"),
    ("2 MB text", "('blob', 'x' * (2 << 20), 'text')"),
    ("duplicate", "('dup', 1.0, 'twice')"),
]
# Names vouch refuses once its name normalisation is in (src/util/unicode_name.cc); judged only
# where the binary has it (probed with the first).
UNICODE_CASES = [
    ("zero-width space", "('vouch\\u200b.wall_s', 1.0)"),
    ("Cyrillic r", "('g\\u0440u.active_ns', 1.0)"),
    ("fullwidth", "('\\uff56\\uff4f\\uff55\\uff43\\uff48.wall_s', 1.0)"),
    ("leading space", "(' vouch.wall_s', 1.0)"),
]

LEG = textwrap.dedent("""\
    import json, os, sys, time
    sys.path.insert(0, sys.argv[1])
    import vouch
    cases = json.loads(sys.argv[2])
    with open("legcount", "a+") as f:
        f.seek(0)
        n = len(f.read())
        f.write("x")
    label, args = cases[n]
    args = eval(args)
    refused = False
    def raw(obj):  # what a hand-written helper writes: vouch judges the same line
        with open(os.environ["VOUCH_METRICS"], "a") as f:
            f.write(json.dumps(obj) + "\\n")
    with vouch.region("step"):
        time.sleep(0.8)
    if len(args) == 3 and args[2] == "text":
        try:
            vouch.text(args[0], args[1])
        except (ValueError, TypeError):
            refused = True
            raw({"name": args[0], "text": args[1]})
    else:
        name, value = args[0], args[1]
        unit = args[2] if len(args) > 2 and args[2] != "twice" else ""
        better = args[3] if len(args) > 3 else "none"
        calls = 2 if len(args) > 2 and args[2] == "twice" else 1
        for _ in range(calls):
            try:
                vouch.metric(name, value, unit, better)
            except (ValueError, TypeError):
                refused = True
                raw({"name": name, "value": value, "unit": unit, "better": better})
    with open("refused", "a") as f:
        f.write(json.dumps([label, refused]) + "\\n")
""")


@unittest.skipUnless(BINARY and os.access(BINARY, os.X_OK), "VOUCH_BINARY not set")
class ModuleAgreesWithVouch(unittest.TestCase):
    def run_legs(self, cases):
        with tempfile.TemporaryDirectory() as d:
            pathlib.Path(d, "leg.py").write_text(LEG)
            env = {k: v for k, v in os.environ.items()
                   if k not in ("VOUCH_METRICS", "VOUCH_REGION_PID", "RANK")}
            env.update(VOUCH_SIM=str(SIM), VOUCH_LOCK_FILE=os.path.join(d, "lock"))
            r = subprocess.run(
                # --keep-going: each leg is its own case (a run otherwise stops at the first leg
                # whose metrics cannot be read).
                [BINARY, "run", "--min-busy-readings", "5", "--warmup", "0", "--keep-going",
                 "--reps", str(len(cases)), "--out", "r", "--", sys.executable, "leg.py",
                 str(ROOT / "python"), json.dumps(cases)],
                cwd=d, env=env, capture_output=True, text=True, timeout=600)
            rec_path = pathlib.Path(d, "r", "record.json")
            self.assertTrue(rec_path.exists(), r.stdout + r.stderr)
            legs = json.loads(rec_path.read_text())["legs"]
            refused = [json.loads(x) for x in pathlib.Path(d, "refused").read_text().splitlines()]
            return legs, refused, r

    def check(self, cases):
        legs, refused, r = self.run_legs(cases)
        self.assertEqual(len(legs), len(cases), r.stdout + r.stderr)
        self.assertEqual([x[0] for x in refused], [c[0] for c in cases])
        for (label, module_refused), leg in zip(refused, legs):
            vouch_refused = not leg["valid"]
            self.assertEqual(module_refused, vouch_refused,
                             "%s: module refused %s, vouch refused %s (%s)"
                             % (label, module_refused, vouch_refused, leg["reasons"]))
            if vouch_refused:
                self.assertTrue(any("metric" in x for x in leg["reasons"]), leg["reasons"])
        return refused

    def test_every_hostile_value_is_refused_by_both_or_neither(self):
        refused = dict(self.check(CASES))
        # The cases are hostile where they should be: the test can fail.
        self.assertFalse(refused["plain"])
        self.assertTrue(refused["upper-case reserved"])
        self.assertTrue(refused["10**400"])
        self.assertTrue(refused["2 MB text"])
        self.assertTrue(refused["duplicate"])
        self.assertFalse(refused["empty direction"])

    def test_names_that_look_like_vouchs(self):
        legs, _, _ = self.run_legs(UNICODE_CASES[:1])
        if legs[0]["valid"]:
            self.skipTest("this vouch binary predates the name normalisation "
                          "(src/util/unicode_name.cc): the module is ahead of it")
        refused = dict(self.check(UNICODE_CASES))
        self.assertTrue(all(refused.values()), refused)


if __name__ == "__main__":
    unittest.main()
