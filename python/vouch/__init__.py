"""Mark a vouch leg's measured region and report metrics from Python.

    import vouch
    with vouch.region("decode_step"):      # channel begin/end markers + an NVTX range
        step()
    vouch.metric("decode.tokens_per_s", 131.4, "tok/s", "higher")

Inside a leg vouch sets VOUCH_METRICS to the leg's channel file; this module appends one JSON
line per marker or metric to it (docs/metrics.md, "The channel and the measured region").
Outside a leg (VOUCH_METRICS unset) every call does nothing.

region() never raises for a reason of vouch's own and costs about a microsecond inside a leg
(docs/metrics.md, bench/python/region_bench.py): its markers are buffered, with their own
times, and written whole at exit, before a fork, before a metric, and within
FLUSH_INTERVAL_S; the NVTX range goes through torch.cuda.nvtx when PyTorch is imported, else
libnvToolsExt by ctypes, and is dropped (markers only) where NVTX does not work (a CPU-only
PyTorch). Regions are safe across threads: the channel's region is open while any thread is
inside its outermost region. Markers come from one process of the leg: the first that imported
this module (VOUCH_REGION_PID) and, under torchrun, rank 0; forked or spawned workers and other
ranks only push their NVTX ranges, and other ranks' metrics are not written (one line on stderr
says so). metric() and text() refuse at the call what vouch would refuse after the leg ran
(_rules.py), in vouch's words.
"""

import atexit
import ctypes
import json
import os
import sys
import threading
import time

from . import _rules
from ._rules import RESERVED_PREFIXES

__all__ = ["region", "metric", "text", "active", "flush", "RESERVED_PREFIXES"]
__version__ = "0.2.0"

FLUSH_INTERVAL_S = 0.5  # buffered markers reach the file within this (plus one write)
_MAX_BUFFERED = 4096  # markers (about 100 bytes each buffered)

_lock = threading.Lock()
_fd = None  # (path, fd) of the open channel (O_APPEND: whole lines, never interleaved)
_buf = []  # markers not yet written: (event, unix ns), formatted when written
_owner = None  # this process writes the region's markers (_marks), decided once
_inside = 0  # threads inside an outermost region: the channel's region is open while > 0
_tls = threading.local()  # .depth: this thread's nesting
_seen = {}  # name -> True: names in the channel (this process's and, scanned, others')
_scan = [None, 0]  # (path, offset) of the channel scan for names other processes wrote
_nvtx = None  # (push, pop), resolved on first use; (None, None): markers only
_flusher = None
_wake = threading.Event()
_said = set()  # one-time notes on stderr

if not os.environ.get("VOUCH_REGION_PID"):
    os.environ["VOUCH_REGION_PID"] = str(os.getpid())


# os.environ's own dict (bytes keys on POSIX): a region looks VOUCH_METRICS up there, about ten
# times cheaper than os.environ.get, and still sees every change made through os.environ.
_ENV = getattr(os.environ, "_data", None)
_KEY = b"VOUCH_METRICS"
if not isinstance(_ENV, dict) or any(not isinstance(k, bytes) for k in list(_ENV)[:1]):
    _ENV, _KEY = None, None


def _in_leg():
    return bool(_ENV.get(_KEY) if _ENV is not None else os.environ.get("VOUCH_METRICS"))


def _note(key, msg):
    if key not in _said:
        _said.add(key)
        try:
            sys.stderr.write("vouch: %s\n" % msg)
        except Exception:  # noqa: BLE001 - a closed stderr is no reason to fail a leg
            pass


def _rank():
    r = os.environ.get("RANK", "")
    return r if r not in ("", "0") else None


def _marks():
    """This process writes the region's markers: the leg's first Python process, rank 0."""
    global _owner
    if _owner is None:
        _owner = _rank() is None and os.environ.get("VOUCH_REGION_PID") == str(os.getpid())
    return _owner


def active():
    """True inside a vouch leg (VOUCH_METRICS is set)."""
    return _in_leg()


def _write_locked(data):
    """Writes DATA (whole lines) to the channel in one append; the caller holds _lock."""
    global _fd
    path = os.environ.get("VOUCH_METRICS")
    if not path:
        return
    if _fd is None or _fd[0] != path:
        if _fd is not None:
            os.close(_fd[1])
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        _fd = (path, fd)
    b = data.encode("utf-8")
    while b:
        n = os.write(_fd[1], b)
        b = b[n:]


def _flush_locked():
    if _buf:
        data = "".join(['{"event":"%s","unix_s":%d.%09d}\n' % ((e,) + divmod(ns, 1000000000))
                        for e, ns in _buf])
        del _buf[:]
        _write_locked(data)


def flush():
    """Writes the buffered markers now (done at exit, before a fork and every
    FLUSH_INTERVAL_S)."""
    with _lock:
        try:
            _flush_locked()
        except OSError as e:
            _note("write", "cannot write the channel (%s); markers lost" % e)


def _flusher_loop():
    while True:
        _wake.wait(FLUSH_INTERVAL_S)
        _wake.clear()
        flush()


def _ensure_flusher():
    global _flusher
    if _flusher is None:
        _flusher = threading.Thread(target=_flusher_loop, name="vouch-flush", daemon=True)
        _flusher.start()


def _close():
    """Writes what is buffered and closes the channel (at exit, and between tests)."""
    global _fd
    flush()
    with _lock:
        if _fd is not None:
            os.close(_fd[1])
            _fd = None
        _seen.clear()
        _scan[0], _scan[1] = None, 0


def _after_fork_in_child():
    # The parent's buffered lines are the parent's to write; its lock may be held by a thread
    # that does not exist here; this process is not the one that marks the region.
    global _lock, _inside, _tls, _flusher, _owner
    _lock = threading.Lock()
    _owner = False
    del _buf[:]
    _inside = 0
    _tls = threading.local()
    _flusher = None


atexit.register(_close)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=flush, after_in_child=_after_fork_in_child)


_time_ns = time.time_ns


def _buffered_slow_locked():
    # After a marker was appended: write a full buffer now, or start the flusher thread that
    # writes within FLUSH_INTERVAL_S.
    if len(_buf) >= _MAX_BUFFERED:
        _flush_locked()
    elif _flusher is None:
        _ensure_flusher()


def _resolve_nvtx():
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            nvtx = torch.cuda.nvtx
            return nvtx.range_push, nvtx.range_pop
        except Exception:  # noqa: BLE001 - a torch without CUDA
            pass
    for lib in ("libnvToolsExt.so.1", "libnvToolsExt.so"):
        try:
            h = ctypes.CDLL(lib)
            push, pop = h.nvtxRangePushA, h.nvtxRangePop
        except (OSError, AttributeError):
            continue
        push.argtypes, push.restype = [ctypes.c_char_p], ctypes.c_int
        pop.argtypes, pop.restype = [], ctypes.c_int
        return (lambda n: push(n.encode("utf-8"))), pop
    return None, None


def _nvtx_pair():
    global _nvtx
    if _nvtx is not None and (_nvtx[0] is not None or _nvtx[1] == "torch"):
        return _nvtx
    if _nvtx is None or (_nvtx[0] is None and "torch" in sys.modules and _nvtx[1] != "torch"):
        pair = _resolve_nvtx()
        # Remember that torch was looked at, so a torch without NVTX is not asked again.
        _nvtx = pair if pair[0] else (None, "torch" if "torch" in sys.modules else None)
    return _nvtx


def _nvtx_failed(e):
    global _nvtx
    _nvtx = (None, "torch")
    _note("nvtx", "NVTX ranges are not available here (%s: %s); region markers only"
          % (type(e).__name__, e))


class region:  # noqa: N801 - used as vouch.region(...)
    """The measured region, named NAME: the channel's begin/end markers while any thread is
    inside its outermost region, and an NVTX range NAME around every one (vouch's tracer gives
    gpu.active_ns_per.NAME, the GPU-active time per instance). Usable as a context manager or
    a decorator."""

    __slots__ = ("name", "_entered", "_outer", "_pushed")

    def __init__(self, name):
        if not isinstance(name, str) or not name:
            raise ValueError("vouch: a region name is a non-empty string, got %r" % (name,))
        self.name = name
        self._entered = self._outer = self._pushed = False

    def __enter__(self):
        # The hot path (once per decode step): no call that can be avoided, the lock taken
        # directly, the time read once. bench/python/region_bench.py measures it.
        global _inside
        if not (_ENV.get(_KEY) if _ENV is not None else os.environ.get("VOUCH_METRICS")):
            return self
        self._entered = True
        tls = _tls
        depth = getattr(tls, "depth", 0)
        tls.depth = depth + 1
        if depth == 0 and (_owner if _owner is not None else _marks()):
            self._outer = True
            try:
                _lock.acquire()
                try:
                    _inside += 1
                    if _inside == 1:
                        _buf.append(("begin", _time_ns()))
                        if _flusher is None or len(_buf) >= _MAX_BUFFERED:
                            _buffered_slow_locked()
                finally:
                    _lock.release()
            except Exception as e:  # noqa: BLE001 - never the leg's failure
                _note("write", "cannot write the channel (%s); markers lost" % e)
        nv = _nvtx
        if nv is None or (nv[0] is None and nv[1] is None and "torch" in sys.modules):
            nv = _nvtx_pair()
        push = nv[0]
        if push is not None:
            try:
                push(self.name)
                self._pushed = True
            except Exception as e:  # noqa: BLE001 - a CPU-only torch raises here
                _nvtx_failed(e)
        return self

    def __exit__(self, *exc):
        global _inside
        if self._pushed:
            self._pushed = False
            pop = _nvtx[1] if _nvtx is not None else None
            try:
                if pop is not None and pop.__class__ is not str:
                    pop()
            except Exception as e:  # noqa: BLE001
                _nvtx_failed(e)
        if not self._entered:
            return False
        self._entered = False
        tls = _tls
        depth = getattr(tls, "depth", 1) - 1
        tls.depth = depth if depth > 0 else 0
        if self._outer:
            self._outer = False
            try:
                _lock.acquire()
                try:
                    _inside = _inside - 1 if _inside > 0 else 0
                    if _inside == 0:
                        _buf.append(("end", _time_ns()))
                        if _flusher is None or len(_buf) >= _MAX_BUFFERED:
                            _buffered_slow_locked()
                finally:
                    _lock.release()
            except Exception as e:  # noqa: BLE001
                _note("write", "cannot write the channel (%s); markers lost" % e)
        return False

    def __call__(self, fn):
        name = self.name

        def wrapped(*a, **kw):
            with region(name):
                return fn(*a, **kw)

        wrapped.__name__ = getattr(fn, "__name__", "wrapped")
        wrapped.__doc__ = getattr(fn, "__doc__", None)
        return wrapped


def _scan_channel_locked(path):
    """Adds the names other processes of the leg wrote since the last scan to _seen."""
    if _scan[0] != path:
        _scan[0], _scan[1] = path, 0
    try:
        with open(path, "rb") as f:
            f.seek(_scan[1])
            data = f.read()
    except OSError:
        return
    end = data.rfind(b"\n") + 1  # whole lines only
    for raw in data[:end].splitlines():
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("name"), str):
            _seen[obj["name"]] = True
    _scan[1] += end


def _report(name, obj):
    """Writes OBJ, NAME's metric line, the way vouch will read it, or raises in vouch's words.
    NAME itself was checked (_check)."""
    line = json.dumps(obj, allow_nan=False, separators=(",", ":"))
    why = _rules.line_error(name, len(line.encode("utf-8")))
    if why:
        raise ValueError("vouch: " + why)
    path = os.environ["VOUCH_METRICS"]
    with _lock:
        _scan_channel_locked(path)
        if name in _seen:
            raise ValueError("vouch: metric %r was already reported; report each metric once "
                             "per leg" % (name,))
        if len(_seen) >= _rules.MAX_METRICS_PER_LEG:
            raise ValueError("vouch: more than %d metrics from one leg; a leg may report at "
                             "most %d" % (_rules.MAX_METRICS_PER_LEG, _rules.MAX_METRICS_PER_LEG))
        _flush_locked()  # the markers before it stay before it
        _write_locked(line + "\n")
        _seen[name] = True


def _check(name):
    """False on a rank other than 0 (its metrics are not written); raises for a NAME vouch
    refuses (the name is checked first, as vouch does)."""
    if _rank() is not None:
        _note("rank", "rank %s: metrics are rank 0's; %r and later ones are not written "
              "(docs/metrics.md, ranks)" % (_rank(), name))
        return False
    why = _rules.name_error(name)
    if why:
        raise ValueError("vouch: " + why)
    return True


def metric(name, value, unit="", better="none"):
    """Report NAME = VALUE (a finite number) for this leg, with its unit and direction. Raises
    ValueError/TypeError, in vouch's words, for what vouch would refuse. The arguments are
    checked everywhere; outside a vouch leg nothing is written and a RuntimeWarning says so,
    instead of the number vanishing silently."""
    inside = active()
    if inside and not _check(name):
        return
    if not inside:
        why = _rules.name_error(name)
        if why:
            raise ValueError("vouch: " + why)
    if not isinstance(unit, str):
        raise TypeError("vouch: metric %r: \"unit\" must be a string, got %r" % (name, unit))
    if not isinstance(better, str) or better not in _rules.DIRECTIONS:
        raise ValueError("vouch: metric %r: '%s' is not a direction: use higher, lower or none"
                         % (name, better))
    why = _rules.value_error(name, value)
    if why:
        raise (TypeError if isinstance(value, bool) or not isinstance(value, (int, float))
               else ValueError)("vouch: " + why)
    if not inside:
        import warnings

        warnings.warn(
            "vouch.metric(%r): not recorded: this process is not inside a vouch leg "
            "(VOUCH_METRICS is unset); run it under vouch, e.g. vouch run -- python script.py"
            % (name,),
            RuntimeWarning,
            stacklevel=2,
        )
        return
    _report(name, {"name": name, "value": value, "unit": unit, "better": better,
                   "unix_s": time.time()})


def text(name, value):
    """Report a text metric (a checksum): usable only in equality checks (--expect-equal)."""
    if not active() or not _check(name):
        return
    _report(name, {"name": name, "text": str(value), "unix_s": time.time()})
