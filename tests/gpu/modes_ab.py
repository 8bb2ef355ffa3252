#!/usr/bin/env python3
"""A host-bound PyTorch loop whose processes run one of two kernel mixes (issue 34's GPU check).

Each process picks its mode at start and keeps it for its life, as a serving engine that picks a
kernel path per spawn does: mode 0 runs 120 small kernels per step and 1 ms of host work, mode 1
runs 122 and 2 ms (a slower mode of the same code). --extra adds that many memory-bound kernels
per step (arm B's planted regression: +10). Modes alternate per arm through a counter file
(MODE_COUNTER), so every arm shows both. Every step is `with vouch.region("step")`; the headline
is steps_per_s (wall clock). Memory-bound adds, not GEMMs: a flat clock (no power cap).
"""
import argparse
import os
import time

import torch

import vouch

p = argparse.ArgumentParser()
p.add_argument("--extra", type=int, default=int(os.environ.get("EXTRA", "0")))
p.add_argument("--seconds", type=float, default=6.0)
a = p.parse_args()

counter = os.environ.get("MODE_COUNTER", "")
n = 0
if counter:
    try:
        with open(counter) as f:
            n = len(f.read().split())
    except FileNotFoundError:
        n = 0
    with open(counter, "a") as f:
        f.write("x\n")
mode = n % 2
small_kernels = 120 + 2 * mode
host_s = 0.001 * (1 + mode)

big_x = torch.ones(48 * 1024 * 1024, device="cuda")
big_y = torch.empty_like(big_x)
small = torch.ones(1024, device="cuda")
out = torch.empty_like(small)


def step():
    for _ in range(12):
        torch.add(big_x, 1.0, out=big_y)
    for _ in range(a.extra):
        torch.add(big_x, 2.0, out=big_y)
    for _ in range(small_kernels):
        torch.add(small, 1.0, out=out)
    time.sleep(host_s)
    torch.cuda.synchronize()


for _ in range(10):
    step()
steps, t0 = 0, time.perf_counter()
while time.perf_counter() - t0 < a.seconds:
    with vouch.region("step"):
        step()
    steps += 1
dt = time.perf_counter() - t0
vouch.metric("steps_per_s", steps / dt, unit="step/s", better="higher")
vouch.metric("mode", mode, unit="", better="none")
print("mode %d: %d kernels/step, %.1f steps/s" % (mode, 12 + a.extra + small_kernels, steps / dt))
