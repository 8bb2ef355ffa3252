#!/usr/bin/env python3
"""A host-bound PyTorch decode loop marked only with `import vouch` (issue 25's GPU check).

Every step is `with vouch.region("decode_step")`: the channel's begin/end markers and an NVTX
range, so `vouch ab --gpu-trace --headline gpu.active_ns_per.decode_step` compares GPU time per
step. --layers sets the GPU work per step (B's planted +10 %: 22 layers against 20); host work
of random length per step makes the wall clock noisy while the GPU time per step is not.
"""
import argparse
import random
import time

import torch

import vouch

p = argparse.ArgumentParser()
p.add_argument("--layers", type=int, default=20)
p.add_argument("--dim", type=int, default=4096)
p.add_argument("--seconds", type=float, default=4.0)
p.add_argument("--host-noise-ms", type=float, default=1.0)
a = p.parse_args()

torch.manual_seed(0)
w = [torch.randn(a.dim, a.dim, device="cuda", dtype=torch.float16) / a.dim**0.5 for _ in range(a.layers)]
x = torch.randn(8, a.dim, device="cuda", dtype=torch.float16)


def step(x):
    for m in w:
        x = torch.nn.functional.silu(x @ m)
    return x


for _ in range(5):  # warm-up: cuBLAS handles, allocator
    x = step(x)
torch.cuda.synchronize()
rng = random.Random()
steps, t0 = 0, time.perf_counter()
while time.perf_counter() - t0 < a.seconds:
    with vouch.region("decode_step"):
        x = step(x)
        int(torch.argmax(x))  # the host waits for the step, as a sampler would
        spin = time.perf_counter() + rng.uniform(0, a.host_noise_ms) / 1000.0
        while time.perf_counter() < spin:
            pass
    steps += 1
dt = time.perf_counter() - t0
vouch.metric("decode.tokens_per_s", steps / dt, "tok/s", "higher")
print(f"tokens_per_s={steps / dt:.1f} steps={steps}")
