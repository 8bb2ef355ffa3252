"""A traced leg whose program runs its own profiler (issue 35, item 2; tests/gpu/check_profiler.sh).

    python3 profiler_leg.py MODE [--iters N]

A loop of N in-place adds (one kernel each) inside `with vouch.region("step")`, under:
  none            no profiler of its own (the control: the trace must count N kernels)
  torch_profiler  torch.profiler.profile(activities=[CPU, CUDA]) around the whole region
  torch_late      torch.profiler started half way through the region and stopped before its end
  graph           no profiler; the adds captured in a CUDA graph of 10 (outside the region) and
                  replayed N/10 times inside it: captured launches run nothing and must not be
                  counted as launches (the tracer's count skips them), replayed kernels are
  kineto_env      no profiler call; run with KINETO_USE_DAEMON=1 (PyTorch's on-demand Kineto,
                  which a dynolog `dyno gputrace` request switches on while the loop runs)
Prints one JSON line: the kernels it launched inside the region and, with a profiler, the CUDA
kernels that profiler itself saw.
"""

import argparse
import json
import os
import time

import torch
import vouch


def cuda_events(prof):
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["none", "torch_profiler", "torch_late", "graph", "kineto_env"])
    ap.add_argument("--iters", type=int, default=100000)
    ap.add_argument("--sleep-s", type=float, default=0.0, help="host time between kernels")
    ap.add_argument("--numel-log2", type=int,
                    default=int(os.environ.get("PROFILER_LEG_NUMEL_LOG2", "22")),
                    help="elements of the tensor each add touches, as a power of 2 (22: ~10 us "
                         "a kernel; 25: ~90 us, so the GPU stays busy between launches)")
    a = ap.parse_args()
    x = torch.zeros(1 << a.numel_log2, device="cuda")  # 1 << 22: about 10 us a kernel on an H100
    for _ in range(50):  # warm-up, outside the region
        x.add_(1.0)
    torch.cuda.synchronize()
    if a.mode == "graph":
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            x.add_(1.0)  # warm-up on the side stream, as PyTorch's docs do
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            for _ in range(10):
                x.add_(1.0)
        torch.cuda.synchronize()
        with vouch.region("step"):
            for _ in range(a.iters // 10):
                g.replay()
            torch.cuda.synchronize()
        print(json.dumps({"mode": a.mode, "launched": (a.iters // 10) * 10,
                          "profiler_cuda_events": None, "torch": torch.__version__,
                          "cuda": torch.version.cuda}))
        return
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    prof = None
    seen = None
    with vouch.region("step"):
        if a.mode == "torch_profiler":
            prof = torch.profiler.profile(activities=acts)
            prof.__enter__()
        for i in range(a.iters):
            if a.mode == "torch_late" and i == a.iters // 2:
                prof = torch.profiler.profile(activities=acts)
                prof.__enter__()
            if a.mode == "torch_late" and prof is not None and i == (3 * a.iters) // 4:
                torch.cuda.synchronize()
                prof.__exit__(None, None, None)
                seen = cuda_events(prof)
                prof = None
            x.add_(1.0)
            if a.sleep_s:
                time.sleep(a.sleep_s)
        torch.cuda.synchronize()
        if prof is not None:
            prof.__exit__(None, None, None)
            seen = cuda_events(prof)
    print(json.dumps({"mode": a.mode, "launched": a.iters, "profiler_cuda_events": seen,
                      "torch": torch.__version__, "cuda": torch.version.cuda}))


if __name__ == "__main__":
    main()
