#!/usr/bin/env python3
"""PyTorch programs for the tracer's GPU check (tests/gpu/check_tracer.sh).

  count   a small model step inside one region named `region` (NVTX and record_function),
          bounded by synchronisations, so the region's kernels are exactly the kernels that
          start inside it. --torch-profiler: run under torch.profiler and print its count
          over the region as JSON ({"torch_profiler_kernels": N, ...}); without it the
          program just runs (the tracer, loaded by CUDA_INJECTION64_PATH, records it).
  decode  a host-bound decode-like loop: every step is an NVTX range `decode_step` with a few
          small matrix products (--extra adds more GPU work per step) and host work of random
          length (--host-noise-ms), so the wall clock is noisy and the GPU is mostly idle.
          Reports decode.tokens_per_s through VOUCH_METRICS, inside begin/end events.
  load    the cost bench's loops: --kind short (many tiny kernels, thousands of launches
          per second) or --kind long (spin kernels of --kernel-us each, torch.cuda._sleep:
          long kernels that keep the clock steady, where large matrix products hit the
          power cap and make the clock wander). Reports iters_per_s between begin/end
          events. --torch-profiler wraps the loop in torch.profiler (the peer's cost); the
          profiler's set-up and its export after the loop stay outside the marked region.
"""
import argparse
import json
import os
import random
import sys
import time

import torch


def vouch(**kv):
    p = os.environ.get("VOUCH_METRICS")
    if p:
        with open(p, "a") as f:
            print(json.dumps({**kv, "unix_s": time.time()}, allow_nan=False), file=f, flush=True)


def profiler():
    from torch.profiler import ProfilerActivity, profile
    return profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])


def model_step(x, w, layers):
    for i in range(layers):
        h = torch.nn.functional.layer_norm(x, x.shape[-1:])
        h = h @ w[i]
        h = torch.nn.functional.gelu(h)
        x = x + torch.softmax(h, dim=-1)
    return x


def cmd_count(a):
    torch.manual_seed(0)
    d = 1024
    x = torch.randn(8, d, device="cuda")
    w = [torch.randn(d, d, device="cuda") / d**0.5 for _ in range(a.layers)]
    for _ in range(3):  # warm-up: cuBLAS handles, allocator, lazy modules
        model_step(x, w, a.layers)
    torch.cuda.synchronize()

    def region():
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("region")
        with torch.profiler.record_function("region"):
            y = x
            for _ in range(a.steps):
                y = model_step(y, w, a.layers)
            torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        return y

    if not a.torch_profiler:
        y = region()
        print(json.dumps({"checksum": float(y.sum())}))
        return 0
    with profiler() as prof:
        y = region()
    path = a.trace or "torch_trace.json"
    prof.export_chrome_trace(path)
    ev = json.load(open(path))["traceEvents"]
    anns = [e for e in ev if e.get("cat") == "user_annotation" and e.get("name") == "region"]
    if len(anns) != 1:
        print(f"expected one user_annotation 'region', found {len(anns)}", file=sys.stderr)
        return 1
    s, e = anns[0]["ts"], anns[0]["ts"] + anns[0]["dur"]
    ks = [k for k in ev if k.get("cat") == "kernel" and s <= k["ts"] <= e]
    names = {}
    for k in ks:
        names[k["name"]] = names.get(k["name"], 0) + 1
    print(json.dumps({"torch_profiler_kernels": len(ks),
                      "all_kernels": sum(1 for k in ev if k.get("cat") == "kernel"),
                      "distinct_names": len(names), "checksum": float(y.sum()), "trace": path}))
    return 0


def cmd_decode(a):
    torch.manual_seed(0)
    rng = random.Random(a.seed if a.seed is not None else time.time_ns())
    d = a.dim
    w = [torch.randn(d, d, device="cuda", dtype=torch.float16) / d**0.5 for _ in range(a.layers)]
    extra = [torch.randn(d, d, device="cuda", dtype=torch.float16) / d**0.5
             for _ in range(max(a.extra, 0))]
    x = torch.randn(1, d, device="cuda", dtype=torch.float16)

    def step(x):
        for i in range(a.layers):
            x = torch.nn.functional.silu(x @ w[i])
        for e in extra:
            x = x + (x @ e) * 0.0
        return x

    for _ in range(5):
        x = step(x)
    torch.cuda.synchronize()
    vouch(event="begin")
    t0 = time.perf_counter()
    steps = 0
    # Time-based: a leg's clock window needs a few seconds of (partly) busy GPU to be valid.
    while steps < a.steps and time.perf_counter() - t0 < a.seconds:
        steps += 1
        torch.cuda.nvtx.range_push("decode_step")
        x = step(x)
        tok = int(torch.argmax(x))  # the host waits for the step, as a sampler would
        # Host work of random length: the wall clock carries noise the GPU never sees.
        spin_until = time.perf_counter() + rng.uniform(0, a.host_noise_ms) / 1000.0
        while time.perf_counter() < spin_until:
            pass
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    vouch(event="end")
    vouch(name="decode.tokens_per_s", value=steps / dt, unit="tok/s", better="higher")
    vouch(name="decode.steps", value=steps, unit="", better="none")
    print(f"tokens_per_s={steps / dt:.2f} steps={steps} last_token={tok}")
    return 0


def cmd_load(a):
    if a.kind == "short":
        x = torch.zeros(256, device="cuda")
        gap = a.host_us / 1e6
        if gap > 0:
            def body():
                x.add_(1.0)
                until = time.perf_counter() + gap
                while time.perf_counter() < until:
                    pass
        else:
            def body():
                x.add_(1.0)
        iters = a.iters
    else:
        # Cycles of the SM clock: 1980 MHz * kernel_us.
        cycles = int(a.kernel_us * 1980)
        def body():
            torch.cuda._sleep(cycles)
        iters = a.iters
    for _ in range(100):
        body()
    torch.cuda.synchronize()

    def loop():
        # --iters N: exactly N iterations; else as many as fit in --seconds (checked every 100).
        nonlocal iters
        t0 = time.perf_counter()
        if iters:
            for _ in range(iters):
                body()
        else:
            while time.perf_counter() - t0 < a.seconds:
                for _ in range(100):
                    body()
                iters += 100
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    if a.torch_profiler:
        with profiler():
            vouch(event="begin")
            dt = loop()
            vouch(event="end")
    else:
        vouch(event="begin")
        dt = loop()
        vouch(event="end")
    vouch(name="iters_per_s", value=iters / dt, unit="1/s", better="higher")
    print(f"iters_per_s={iters / dt:.1f} kind={a.kind} iters={iters} host_us={a.host_us}")
    return 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("count")
    c.add_argument("--layers", type=int, default=4)
    c.add_argument("--steps", type=int, default=5)
    c.add_argument("--torch-profiler", action="store_true")
    c.add_argument("--trace")
    d = sub.add_parser("decode")
    d.add_argument("--steps", type=int, default=1000000)
    d.add_argument("--seconds", type=float, default=4.0)
    d.add_argument("--layers", type=int, default=8)
    d.add_argument("--dim", type=int, default=4096)
    d.add_argument("--extra", type=int, default=0)
    d.add_argument("--host-noise-ms", type=float, default=3.0)
    d.add_argument("--seed", type=int)
    l = sub.add_parser("load")
    l.add_argument("--kind", choices=["short", "long"], required=True)
    l.add_argument("--iters", type=int, default=0)
    l.add_argument("--seconds", type=float, default=4.0)
    l.add_argument("--host-us", type=float, default=0.0,
                   help="short: host work between launches (200: about 5000 launches/s)")
    l.add_argument("--kernel-us", type=float, default=1000.0,
                   help="long: each spin kernel's length in microseconds at 1980 MHz")
    l.add_argument("--torch-profiler", action="store_true")
    a = p.parse_args()
    if a.cmd == "load" and os.environ.get("TRACER_TORCH_PROFILER") == "1":
        a.torch_profiler = True
    return {"count": cmd_count, "decode": cmd_decode, "load": cmd_load}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
