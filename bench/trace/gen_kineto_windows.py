#!/usr/bin/env python3
"""Generates a Kineto trace with many short annotation instances (default 100,000).

Each instance is a `decode_step` user_annotation on the host, its gpu_user_annotation (same
External id), two cudaLaunchKernel runtime calls and their two kernels (by correlation id),
one event per line as Kineto writes them: ~1.26 kB per instance, ~126 MB for 100,000.

usage: gen_kineto_windows.py OUT.json [--instances 100000]
"""
import argparse
import os

NAMES = ["gemm_kernel_128x128", "rms_norm_kernel", "flash_fwd_kernel", "elementwise_add_kernel"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--instances", type=int, default=100_000)
    a = ap.parse_args()
    with open(a.out, "w") as out:
        out.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}],'
                  ' "traceEvents": [\n')
        t = 1_795_946_969_000_000  # microseconds, as Kineto writes them
        corr = 1
        lines = []
        for i in range(a.instances):
            ext = 1000 + i
            k1, k2 = NAMES[i % 4], NAMES[(i + 1) % 4]
            d1, d2 = 11 + i % 7, 5 + i % 3
            ev = [
                f'{{"ph": "X", "cat": "user_annotation", "name": "decode_step", "pid": 4242, "tid": 4243, '
                f'"ts": {t}.000, "dur": 40.000, "args": {{"External id": {ext}, "Record function id": 0}}}}',
                f'{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4243, '
                f'"ts": {t + 2}.125, "dur": 3.250, "args": {{"External id": {ext + 1}, "cbid": 211, "correlation": {corr}}}}}',
                f'{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4243, '
                f'"ts": {t + 6}.500, "dur": 3.125, "args": {{"External id": {ext + 2}, "cbid": 211, "correlation": {corr + 1}}}}}',
                f'{{"ph": "X", "cat": "gpu_user_annotation", "name": "decode_step", "pid": 0, "tid": 7, '
                f'"ts": {t + 4}.000, "dur": {d1 + d2 + 8}.000, "args": {{"External id": {ext}, "device": 0, "stream": 7}}}}',
                f'{{"ph": "X", "cat": "kernel", "name": "{k1}", "pid": 0, "tid": 7, "ts": {t + 5}.250, "dur": {d1}.500, '
                f'"args": {{"External id": {ext + 1}, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": {corr}}}}}',
                f'{{"ph": "X", "cat": "kernel", "name": "{k2}", "pid": 0, "tid": 7, "ts": {t + 18}.750, "dur": {d2}.250, '
                f'"args": {{"External id": {ext + 2}, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": {corr + 1}}}}}',
            ]
            lines.append(",\n".join(ev))
            corr += 2
            t += 50
            if len(lines) >= 10_000:
                out.write(",\n".join(lines) + (",\n" if i + 1 < a.instances else ""))
                lines = []
        if lines:
            out.write(",\n".join(lines))
        out.write("\n]}\n")
    print(f"{a.out}: {os.path.getsize(a.out) / 1e6:.1f} MB, {a.instances} instances")


if __name__ == "__main__":
    main()
