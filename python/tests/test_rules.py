"""The module refuses at the call what vouch refuses after the leg ran (issue 36, item 5), in
vouch's words (python/vouch/_rules.py mirrors src/metrics/reserved.cc, src/util/unicode_name.cc
and src/metrics/channel.cc)."""

import math
import os
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import vouch  # noqa: E402
from vouch import _rules  # noqa: E402


class Rules(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "metrics.jsonl")
        os.environ["VOUCH_METRICS"] = self.path

    def tearDown(self):
        vouch._close()
        os.environ.pop("VOUCH_METRICS", None)
        self.dir.cleanup()

    def refused(self, exc, fragment, *args, **kw):
        fn = kw.pop("fn", vouch.metric)
        with self.assertRaises(exc) as cm:
            fn(*args, **kw)
        self.assertIn(fragment, str(cm.exception))
        self.assertTrue(str(cm.exception).startswith("vouch: "))

    def test_reserved_names_whatever_their_case_or_width(self):
        for name in ("VOUCH.wall_s", "Gpu.active_ns", "gpu.kernels", "ＶＯＵＣＨ.wall_s"):
            self.refused(ValueError, "a prefix vouch reserves for what it measures itself", name,
                         1.0)
        self.assertEqual(_rules.reserved_prefix("VOUCH.wall_s"), "vouch.")
        self.assertEqual(_rules.reserved_prefix("ｇｐｕ.x"), "gpu.")
        self.assertIsNone(_rules.reserved_prefix("vouchers.count"))
        self.assertIsNone(_rules.reserved_prefix("my.gpu.time"))

    def test_names_that_look_like_vouchs(self):
        cases = {
            "vouch\u200b.wall_s": "an invisible character (U+200B)",
            " vouch.wall_s": "it starts or ends with a space",
            "tok_s\u00a0": "it starts or ends with a space",
            "g\u0440u.active_ns": "its label 'gрu' mixes Latin and Cyrillic letters (U+0440)",
            "a\nb": "a control character (U+000A)",
            "x\u202eb": "an invisible character (U+202E)",
            "x\ue000": "an unassigned or private-use character (U+E000)",
        }
        for name, why in cases.items():
            self.refused(ValueError, why, name, 1.0)
            self.refused(ValueError, why, name, "abc", fn=vouch.text)
        # Scripts mix across labels, not within one; CJK scripts are one.
        for ok in ("模型.速度", "décodage.tok_s", "тест.x", "日本語カナ.x"):
            self.assertIsNone(_rules.name_error(ok), ok)

    def test_values_vouch_refuses(self):
        self.refused(ValueError, "value is not finite", "big", 10**400)
        self.refused(ValueError, "value is not finite", "x", math.nan)
        self.refused(ValueError, "value is not finite", "x", -math.inf)
        self.refused(TypeError, "must be a finite number", "x", "12")
        self.refused(TypeError, "must be a finite number", "x", True)
        self.refused(TypeError, "must be a finite number", "x", None)
        self.refused(TypeError, "\"unit\" must be a string", "x", 1.0, unit=3)
        self.refused(ValueError, "'faster' is not a direction", "x", 1.0, better="faster")
        vouch.metric("huge_but_finite", 10**300)  # a double holds it: vouch takes it
        vouch.metric("no_direction", 1.0, better="")  # vouch reads "" as none

    def test_a_line_over_a_mebibyte(self):
        self.refused(ValueError, "over the 1048576 byte limit for a metrics line", "blob",
                     "x" * (2 << 20), fn=vouch.text)
        vouch.text("just_under", "x" * ((1 << 20) - 100))

    def test_each_name_once(self):
        vouch.metric("tok_s", 1.0)
        self.refused(ValueError, "'tok_s' was already reported", "tok_s", 2.0)
        self.refused(ValueError, "'tok_s' was already reported", "tok_s", "v", fn=vouch.text)
        # A line another process of the leg wrote counts too.
        with open(self.path, "a", encoding="utf-8") as f:
            f.write('{"name":"from_elsewhere","value":1}\n')
        self.refused(ValueError, "'from_elsewhere' was already reported", "from_elsewhere", 3.0)

    def test_nothing_refused_is_written(self):
        for bad in (("VOUCH.x", 1.0), ("x", 10**400), ("x", math.nan)):
            with self.assertRaises((ValueError, TypeError)):
                vouch.metric(*bad)
        vouch.flush()
        self.assertFalse(os.path.exists(self.path))


if __name__ == "__main__":
    unittest.main()
