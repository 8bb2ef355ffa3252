#!/usr/bin/env python3
"""A small transformer-ish decode loop, profiled with torch.profiler (Kineto).

record_function ranges: `prefill` (once) and `decode_step` (once per generated token), so
the Chrome trace holds user_annotation and gpu_user_annotation events of those names.

usage: profile_workload.py --out trace.json [--batch 1] [--prompt 512] [--steps 32]
       profile_workload.py --no-profile --steps 1     (a tiny run for ncu)
"""
import argparse
import gzip
import shutil
import sys
import time

import torch


class Block(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d, bias=False)
        self.proj = torch.nn.Linear(d, d, bias=False)
        self.norm2 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, 4 * d, bias=False)
        self.fc2 = torch.nn.Linear(4 * d, d, bias=False)

    def forward(self, x, cache):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q = q.view(b, t, h, d // h).transpose(1, 2)
        k = k.view(b, t, h, d // h).transpose(1, 2)
        v = v.view(b, t, h, d // h).transpose(1, 2)
        if cache is not None:
            k = torch.cat([cache[0], k], dim=2)
            v = torch.cat([cache[1], v], dim=2)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=cache is None)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        x = x + self.fc2(torch.nn.functional.silu(self.fc1(self.norm2(x))))
        return x, (k, v)


class Model(torch.nn.Module):
    def __init__(self, vocab, d, heads, layers):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, d)
        self.blocks = torch.nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.head = torch.nn.Linear(d, vocab, bias=False)

    def forward(self, tokens, caches):
        x = self.emb(tokens)
        new = []
        for blk, c in zip(self.blocks, caches):
            x, kv = blk(x, c)
            new.append(kv)
        return self.head(x[:, -1]), new


def generate(model, batch, prompt, steps, layers, vocab, device):
    tokens = torch.randint(0, vocab, (batch, prompt), device=device)
    with torch.profiler.record_function("prefill"):
        logits, caches = model(tokens, [None] * layers)
        nxt = logits.argmax(-1, keepdim=True)
    for _ in range(steps):
        with torch.profiler.record_function("decode_step"):
            logits, caches = model(nxt, caches)
            nxt = logits.argmax(-1, keepdim=True)
    torch.cuda.synchronize()
    return nxt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="trace.json", help="Chrome trace to write (.json or .json.gz)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--d", type=int, default=2048)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--no-profile", action="store_true", help="run without torch.profiler (for ncu)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("profile_workload.py: no CUDA device")
    torch.manual_seed(0)
    device = "cuda"
    model = Model(a.vocab, a.d, a.heads, a.layers).to(device=device, dtype=torch.bfloat16).eval()
    with torch.inference_mode():
        generate(model, a.batch, a.prompt, 2, a.layers, a.vocab, device)  # warm-up: cuBLAS/cuDNN plans
        if a.no_profile:
            generate(model, a.batch, a.prompt, a.steps, a.layers, a.vocab, device)
            print("done (no profile)")
            return
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        t0 = time.perf_counter()
        with torch.profiler.profile(activities=acts) as prof:
            generate(model, a.batch, a.prompt, a.steps, a.layers, a.vocab, device)
        wall = time.perf_counter() - t0
    plain = a.out[:-3] if a.out.endswith(".gz") else a.out
    prof.export_chrome_trace(plain)
    if a.out.endswith(".gz"):
        with open(plain, "rb") as src, gzip.open(a.out, "wb") as dst:
            shutil.copyfileobj(src, dst)
    print(f"wrote {a.out}: batch {a.batch}, prompt {a.prompt}, {a.steps} decode steps, {wall:.3f} s profiled")


if __name__ == "__main__":
    main()
