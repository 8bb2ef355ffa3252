"""Mark a vouch leg's measured region and report metrics from Python.

    import vouch
    with vouch.region("decode_step"):      # channel begin/end markers + an NVTX range
        step()
    vouch.metric("decode.tokens_per_s", 131.4, "tok/s", "higher")

Inside a leg vouch sets VOUCH_METRICS to the leg's channel file; this module appends one JSON
line per marker or metric to it (docs/metrics.md, "The channel and the measured region").
Outside a leg (VOUCH_METRICS unset) every call does nothing. No dependencies: the NVTX range
goes through torch.cuda.nvtx when PyTorch is already imported, else through libnvToolsExt by
ctypes when it can be loaded, else only the channel markers are written.
"""

import atexit
import contextlib
import ctypes
import json
import math
import os
import sys
import threading
import time

__all__ = ["region", "metric", "text", "active", "RESERVED_PREFIXES"]
__version__ = "0.1.0"

# Names vouch writes itself: a leg that reports one is refused by vouch, so refuse it here,
# where the cause is.
RESERVED_PREFIXES = ("vouch.", "gpu.")
_BETTER = ("higher", "lower", "none")

_lock = threading.Lock()
_file = None  # (path, file object) of the open channel
_depth = 0  # nesting of region(): markers only for the outermost
_nvtx = None  # the push/pop pair, resolved on first use


def _close():
    """Closes the channel file (at exit, and between tests)."""
    global _file
    with _lock:
        if _file is not None:
            _file[1].close()
            _file = None


atexit.register(_close)


def active():
    """True inside a vouch leg (VOUCH_METRICS is set)."""
    return bool(os.environ.get("VOUCH_METRICS"))


def _write(obj):
    global _file
    path = os.environ.get("VOUCH_METRICS")
    if not path:
        return
    line = json.dumps(obj, allow_nan=False, separators=(",", ":")) + "\n"
    with _lock:
        if _file is None or _file[0] != path:
            if _file is not None:
                _file[1].close()
            # Line-buffered append: each line reaches the file in one write, whole.
            _file = (path, open(path, "a", buffering=1, encoding="utf-8"))
        _file[1].write(line)


def _check_name(name):
    if not isinstance(name, str) or not name:
        raise ValueError("vouch: a metric name is a non-empty string, got %r" % (name,))
    if name.startswith(RESERVED_PREFIXES):
        raise ValueError(
            "vouch: %r is a reserved name (%s are vouch's own figures)"
            % (name, ", ".join(p + "*" for p in RESERVED_PREFIXES))
        )


def metric(name, value, unit="", better="none"):
    """Report NAME = VALUE (a finite number) for this leg, with its unit and direction.

    The arguments are checked everywhere; outside a vouch leg nothing is written and a
    RuntimeWarning says so (once per call site), instead of the number vanishing silently."""
    _check_name(name)
    if better not in _BETTER:
        raise ValueError("vouch: better is one of %s, got %r" % (", ".join(_BETTER), better))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("vouch: %s's value must be a number, got %r" % (name, value))
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("vouch: %s's value is not finite (%r)" % (name, value))
    if not active():
        import warnings

        warnings.warn(
            "vouch.metric(%r): not recorded: this process is not inside a vouch leg "
            "(VOUCH_METRICS is unset); run it under vouch, e.g. vouch run -- python script.py"
            % (name,),
            RuntimeWarning,
            stacklevel=2,
        )
        return
    _write({"name": name, "value": value, "unit": unit, "better": better, "unix_s": time.time()})


def text(name, value):
    """Report a text metric (a checksum): usable only in equality checks (--expect-equal)."""
    if not active():
        return
    _check_name(name)
    _write({"name": name, "text": str(value), "unix_s": time.time()})


def _resolve_nvtx():
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            nvtx = torch.cuda.nvtx
            return nvtx.range_push, nvtx.range_pop
        except AttributeError:
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
    if _nvtx is None:
        _nvtx = _resolve_nvtx()
    return _nvtx


@contextlib.contextmanager
def region(name):
    """The measured region, named NAME: the channel's begin/end markers around the outermost
    region, and an NVTX range NAME around every one (vouch's tracer gives
    gpu.active_ns_per.NAME, the GPU-active time per instance)."""
    global _depth
    if not active():
        yield
        return
    if not isinstance(name, str) or not name:
        raise ValueError("vouch: a region name is a non-empty string, got %r" % (name,))
    push, pop = _nvtx_pair()
    with _lock:
        _depth += 1
        outer = _depth == 1
    if outer:
        _write({"event": "begin", "unix_s": time.time()})
    if push:
        push(name)
    try:
        yield
    finally:
        if pop:
            pop()
        with _lock:
            _depth -= 1
        if outer:
            _write({"event": "end", "unix_s": time.time()})
