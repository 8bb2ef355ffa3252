"""Tests of the vouch Python module (python3 -m unittest discover -s python/tests)."""

import json
import math
import os
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import vouch  # noqa: E402


class Channel(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "metrics.jsonl")
        os.environ["VOUCH_METRICS"] = self.path

    def tearDown(self):
        vouch._close()
        os.environ.pop("VOUCH_METRICS", None)
        self.dir.cleanup()

    def lines(self):
        vouch.flush()
        with open(self.path, encoding="utf-8") as f:
            return [json.loads(line) for line in f]

    def test_region_writes_one_begin_end_pair_around_the_outermost(self):
        with vouch.region("decode_step"):
            with vouch.region("inner"):
                pass
        with vouch.region("decode_step"):
            pass
        events = [e["event"] for e in self.lines()]
        self.assertEqual(events, ["begin", "end", "begin", "end"])
        for e in self.lines():
            self.assertIsInstance(e["unix_s"], float)
        first = self.lines()
        self.assertLessEqual(first[0]["unix_s"], first[1]["unix_s"])

    def test_region_ends_when_its_body_raises(self):
        with self.assertRaises(RuntimeError):
            with vouch.region("step"):
                raise RuntimeError("boom")
        self.assertEqual([e["event"] for e in self.lines()], ["begin", "end"])
        with vouch.region("step"):  # the nesting count came back to zero
            pass
        self.assertEqual(len(self.lines()), 4)

    def test_metric_line(self):
        vouch.metric("decode.tokens_per_s", 131.5, "tok/s", "higher")
        vouch.text("video_sha256", "c62d")
        m, t = self.lines()
        self.assertEqual(
            (m["name"], m["value"], m["unit"], m["better"]),
            ("decode.tokens_per_s", 131.5, "tok/s", "higher"),
        )
        self.assertEqual((t["name"], t["text"]), ("video_sha256", "c62d"))

    def test_refuses_what_vouch_would_refuse(self):
        for bad in ("vouch.wall_s", "gpu.active_ns", ""):
            with self.assertRaises(ValueError):
                vouch.metric(bad, 1.0)
        with self.assertRaises(ValueError):
            vouch.metric("x", math.nan)
        with self.assertRaises(ValueError):
            vouch.metric("x", math.inf)
        with self.assertRaises(TypeError):
            vouch.metric("x", "12")
        with self.assertRaises(TypeError):
            vouch.metric("x", True)
        with self.assertRaises(ValueError):
            vouch.metric("x", 1.0, better="faster")
        vouch.flush()
        self.assertFalse(os.path.exists(self.path))


class OutsideALeg(unittest.TestCase):
    def test_everything_is_a_no_op(self):
        os.environ.pop("VOUCH_METRICS", None)
        self.assertFalse(vouch.active())
        with vouch.region("decode_step"):
            pass
        vouch.text("x", "y")

    def test_a_metric_outside_a_leg_is_checked_and_warned_about(self):
        # Issue 37: a number reported outside a leg is said to be lost, not dropped silently.
        os.environ.pop("VOUCH_METRICS", None)
        with self.assertWarnsRegex(RuntimeWarning, "not inside a vouch leg"):
            vouch.metric("tok_s", 1.0, "tok/s", "higher")
        with self.assertRaises(ValueError):
            vouch.metric("vouch.wall_s", math.nan)  # checked everywhere


if __name__ == "__main__":
    unittest.main()
