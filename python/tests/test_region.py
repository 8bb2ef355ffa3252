"""vouch.region cannot break a leg: CPU-only PyTorch, no PyTorch, threads, forked and spawned
workers, torchrun ranks, buffered markers (python3 -m unittest discover -s python/tests).
PyTorch is not installed here: a CPU-only torch is a fake with the shape of its NVTX API
(torch.cuda.nvtx.range_push raising RuntimeError, as a CPU-only build does)."""

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time
import types
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import vouch  # noqa: E402


def fake_torch(push_error=None, pop_error=None, calls=None):
    """A module with torch's NVTX surface: torch.cuda.nvtx.range_push / range_pop."""
    def push(name):
        if calls is not None:
            calls.append(("push", name))
        if push_error:
            raise push_error

    def pop():
        if calls is not None:
            calls.append(("pop",))
        if pop_error:
            raise pop_error

    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(nvtx=types.SimpleNamespace(range_push=push, range_pop=pop))
    return torch


class ChannelTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "metrics.jsonl")
        os.environ["VOUCH_METRICS"] = self.path
        vouch._nvtx = None
        self.saved_torch = sys.modules.pop("torch", None)

    def tearDown(self):
        vouch._close()
        vouch._nvtx = None
        sys.modules.pop("torch", None)
        if self.saved_torch is not None:
            sys.modules["torch"] = self.saved_torch
        os.environ.pop("VOUCH_METRICS", None)
        os.environ.pop("RANK", None)
        self.dir.cleanup()

    def lines(self):
        vouch.flush()
        if not os.path.exists(self.path):
            return []
        with open(self.path, encoding="utf-8") as f:
            text = f.read()
        self.assertTrue(text == "" or text.endswith("\n"), "a line was cut")
        return [json.loads(line) for line in text.splitlines()]

    def events(self):
        return [e["event"] for e in self.lines() if "event" in e]

    def assertBalanced(self, events):
        self.assertEqual(events, ["begin", "end"] * (len(events) // 2), events[:10])


class CpuOnlyAndAbsentTorch(ChannelTest):
    def test_cpu_only_torch_gives_markers_only_and_never_raises(self):
        calls = []
        sys.modules["torch"] = fake_torch(
            RuntimeError("NVTX functions not installed. Are you sure you have a CUDA build?"),
            calls=calls)
        for _ in range(3):
            with vouch.region("step"):
                pass
        self.assertBalanced(self.events())
        self.assertEqual(len(self.events()), 6)  # never stuck "nested" after the first failure
        self.assertEqual(calls, [("push", "step")])  # asked once, then markers only

    def test_a_failing_pop_does_not_unbalance_the_markers(self):
        sys.modules["torch"] = fake_torch(pop_error=RuntimeError("pop"))
        with vouch.region("a"):
            with vouch.region("b"):
                pass
        with vouch.region("a"):
            pass
        self.assertEqual(self.events(), ["begin", "end", "begin", "end"])

    def test_a_working_nvtx_gets_one_push_and_pop_per_region(self):
        calls = []
        sys.modules["torch"] = fake_torch(calls=calls)
        with vouch.region("outer"):
            with vouch.region("inner"):
                pass
        self.assertEqual(calls, [("push", "outer"), ("push", "inner"), ("pop",), ("pop",)])
        self.assertEqual(self.events(), ["begin", "end"])

    def test_no_torch_and_no_nvtx_library(self):
        with vouch.region("step"):
            with vouch.region("inner"):
                pass
        self.assertEqual(self.events(), ["begin", "end"])

    def test_the_body_raising_still_ends_the_region(self):
        with self.assertRaises(KeyError):
            with vouch.region("step"):
                raise KeyError("boom")
        with vouch.region("step"):
            pass
        self.assertEqual(self.events(), ["begin", "end", "begin", "end"])

    def test_an_unwritable_channel_never_raises_in_a_region(self):
        os.environ["VOUCH_METRICS"] = os.path.join(self.dir.name, "no", "such", "dir", "m.jsonl")
        for _ in range(600):  # past the buffer's bound: a write is tried and fails
            with vouch.region("step"):
                pass
        vouch.flush()
        self.assertFalse(os.path.exists(os.environ["VOUCH_METRICS"]))

    def test_a_decorated_function_is_a_region(self):
        @vouch.region("step")
        def step(x):
            return x * 2

        self.assertEqual(step(21), 42)
        self.assertEqual(self.events(), ["begin", "end"])


class Threads(ChannelTest):
    def test_four_threads_keep_the_markers_alternating(self):
        errors = []

        def work(seed):
            try:
                for i in range(300):
                    with vouch.region("step"):
                        with vouch.region("inner"):
                            if (i + seed) % 7 == 0:
                                time.sleep(0.0005)
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        ev = self.events()
        self.assertGreaterEqual(len(ev), 2)
        self.assertBalanced(ev)
        self.assertEqual(vouch._inside, 0)
        times = [e["unix_s"] for e in self.lines()]
        self.assertEqual(times, sorted(times))  # each marker keeps its own time, in order


class Buffering(ChannelTest):
    def test_markers_reach_the_file_within_the_flush_interval(self):
        with vouch.region("warm"):
            pass
        with vouch.region("step"):
            pass
        deadline = time.monotonic() + 3 * vouch.FLUSH_INTERVAL_S + 1
        while time.monotonic() < deadline:  # no flush(): the flusher thread writes them
            if os.path.exists(self.path):
                with open(self.path, encoding="utf-8") as f:
                    if f.read().count("\n") == 4:
                        break
            time.sleep(0.05)
        with open(self.path, encoding="utf-8") as f:
            self.assertEqual(f.read().count("\n"), 4)

    def test_a_metric_keeps_the_markers_before_it(self):
        with vouch.region("step"):
            pass
        vouch.metric("tok_s", 5.0)
        with open(self.path, encoding="utf-8") as f:  # no flush(): the metric wrote them
            kinds = [json.loads(x).get("event", "metric") for x in f.read().splitlines()]
        self.assertEqual(kinds, ["begin", "end", "metric"])


class Processes(ChannelTest):
    @unittest.skipUnless(hasattr(os, "fork"), "needs fork")
    def test_a_forked_worker_writes_no_markers_and_never_the_parents_buffer(self):
        with vouch.region("warm"):
            pass
        with vouch.region("step"):  # the parent is inside its region, with markers buffered
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    with vouch.region("worker_step"):
                        pass
                    vouch.metric("worker.items", 3)
                    vouch.flush()
                except BaseException:  # noqa: BLE001
                    code = 1
                os._exit(code)
            _, status = os.waitpid(pid, 0)
            self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        lines = self.lines()
        self.assertEqual([e.get("event") for e in lines if "event" in e],
                         ["begin", "end", "begin", "end"])
        self.assertEqual([e["name"] for e in lines if "name" in e], ["worker.items"])

    def run_child(self, code, env):
        return subprocess.run(
            [sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT), **env},
            capture_output=True, text=True, timeout=60)

    def test_a_spawned_worker_writes_no_markers_but_its_metrics(self):
        r = self.run_child(
            "import vouch\nwith vouch.region('s'): pass\nvouch.metric('spawned.x', 1)\n", {})
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = self.lines()
        self.assertEqual([e for e in lines if "event" in e], [])
        self.assertEqual([e["name"] for e in lines], ["spawned.x"])
        # ...and a name another process of the leg wrote is a duplicate here too.
        with self.assertRaises(ValueError) as cm:
            vouch.metric("spawned.x", 2)
        self.assertIn("was already reported", str(cm.exception))

    def test_ranks_other_than_0_write_nothing_and_say_so(self):
        r = self.run_child(
            "import vouch\nwith vouch.region('s'): pass\nvouch.metric('tok_s', 1)\n",
            {"RANK": "1", "VOUCH_REGION_PID": ""})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.lines(), [])
        self.assertIn("rank 1: metrics are rank 0's", r.stderr)
        r = self.run_child(
            "import vouch\nwith vouch.region('s'): pass\nvouch.metric('tok_s', 1)\n",
            {"RANK": "0", "VOUCH_REGION_PID": ""})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([e.get("event", e.get("name")) for e in self.lines()],
                         ["begin", "end", "tok_s"])


if __name__ == "__main__":
    unittest.main()
