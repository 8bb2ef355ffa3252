#!/usr/bin/env python3
"""Runs a command once and prints its CPU seconds (user + system) and peak RSS in MiB, from
wait4's rusage of that child alone. usage: measure.py CMD ARGS..."""
import os
import subprocess
import sys

p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = p.stderr.read()
_, status, ru = os.wait4(p.pid, 0)
p.returncode = os.waitstatus_to_exitcode(status)
if p.returncode != 0:
    sys.stderr.write(err.decode(errors="replace"))
    sys.exit(f"measure: failed ({p.returncode}): {' '.join(sys.argv[1:])}")
print(f"{ru.ru_utime + ru.ru_stime:.3f} {ru.ru_maxrss / 1024:.1f}")
