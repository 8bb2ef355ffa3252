"""A PyTorch NCCL all-reduce over every visible GPU, one process per GPU, for a given time.

    python3 tests/gpu/allreduce.py --seconds 5 [--mib 256]

Rank 0 marks the timed region for vouch (begin/end lines on VOUCH_METRICS, after start-up and
a barrier) and prints busbw_gb_s (the NCCL-tests bus bandwidth: 2 (n-1)/n x bytes / time).
NVLink multicast stays off: NCCL_NVLS_ENABLE=0 is forced for the ranks.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def emit(obj):
    path = os.environ.get("VOUCH_METRICS")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(obj) + "\n")


def rank_main(rank, world, seconds, mib, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), NCCL_NVLS_ENABLE="0",
                      TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world,
                            device_id=torch.device("cuda", rank))
    x = torch.ones(mib * (1 << 20) // 4, device="cuda", dtype=torch.float32)
    for _ in range(3):  # warm: communicators, first launches
        dist.all_reduce(x)
    torch.cuda.synchronize()
    x.fill_(1.0)
    dist.barrier()
    if rank == 0:
        emit({"event": "begin", "unix_s": time.time()})
    t0 = time.perf_counter()
    n = 0
    while True:
        for _ in range(8):
            dist.all_reduce(x)
        n += 8
        torch.cuda.synchronize()
        flag = torch.tensor([time.perf_counter() - t0 >= seconds], device="cuda", dtype=torch.int32)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)  # every rank stops after the same step
        if flag.item():
            break
    el = time.perf_counter() - t0
    if rank == 0:
        emit({"event": "end", "unix_s": time.time()})
        algbw = x.numel() * 4 * n / el / 1e9
        busbw = 2 * (world - 1) / world * algbw
        print(f"allreduce: world={world} mib={mib} iters={n} seconds={el:.3f} "
              f"algbw_gb_s={algbw:.2f} busbw_gb_s={busbw:.2f}", flush=True)
        emit({"name": "allreduce_algbw", "value": algbw, "unit": "GB/s", "better": "higher"})
        emit({"name": "allreduce_busbw", "value": busbw, "unit": "GB/s", "better": "higher"})
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--port", type=int, default=29517)
    ap.add_argument("--min-world", type=int, default=2, help="GPUs needed (1 to try it on one)")
    a = ap.parse_args()
    world = torch.cuda.device_count()
    if world < a.min_world:
        raise SystemExit(f"allreduce: needs {a.min_world} or more GPUs, sees {world}")
    mp.spawn(rank_main, args=(world, a.seconds, a.mib, a.port), nprocs=world, join=True)


if __name__ == "__main__":
    main()
