#!/usr/bin/env python3
"""Writes the vllm bench serve result fixtures of this folder (README.md says what each is).

The shape is vllm/benchmarks/serve.py's (vllm-project/vllm at 009e6d4a): main_async's
result_json (date ... max_concurrency) merged with benchmark()'s `result` dict, the latency
statistics named as process_one_metric names them (mean_/median_/std_/p{p_word}_{metric}_ms,
p_word "99" or "99.9"), and the per-request arrays ("ttfts", "itls", "errors", ...) dropped
unless --save-detailed, "latencies" and "queue_times" kept. The statistics are computed from the
per-request values the way calculate_metrics does (numpy's linear percentile, population std),
so a test can check a summary figure against the requests behind it. Deterministic: seeded.
"""
import json
import math
import random
import sys


def percentile(xs, p):  # numpy.percentile, method "linear"
    xs = sorted(xs)
    if not xs:
        return 0.0
    pos = (len(xs) - 1) * p / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (pos - lo) * (xs[hi] - xs[lo])


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def std(xs):
    if not xs:
        return 0.0
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def run(seed, n, rate, max_conc, detailed, percentiles=(99,), metrics=("ttft", "tpot", "itl"),
        fail_every=0, goodput=None, server_slots=None, out_len=128, in_len=512, ttft_ms=80.0,
        tpot_ms=30.0):
    """N requests offered at RATE req/s (inf: all at once) with at most MAX_CONC in flight on
    the client. SERVER_SLOTS: the requests the server runs at once (None: as many as come); a
    request beyond them waits in the server's queue, and the wait is in its TTFT."""
    rng = random.Random(seed)
    ttfts, itls, lats, starts, errors, outs, ins, queue = [], [], [], [], [], [], [], []
    t = 0.0
    in_flight_end = []
    slots = [0.0] * (server_slots or 0)  # when each server slot is free again
    for i in range(n):
        if rate != "inf":
            t += rng.expovariate(rate)
        arrive = t if rate != "inf" else 0.0
        wait = 0.0
        if max_conc is not None:
            in_flight_end = sorted(e for e in in_flight_end if e > arrive)
            if len(in_flight_end) >= max_conc:
                wait = in_flight_end[len(in_flight_end) - max_conc] - arrive
        start = arrive + wait
        failed = fail_every and i % fail_every == fail_every - 1
        ttft = rng.lognormvariate(math.log(ttft_ms / 1000), 0.25)
        gaps = [rng.lognormvariate(math.log(tpot_ms / 1000), 0.08) for _ in range(out_len - 1)]
        if slots:
            slots.sort()
            server_wait = max(0.0, slots[0] - start)
            ttft += server_wait
            slots[0] = start + ttft + sum(gaps)
        lat = ttft + sum(gaps)
        if failed:
            ttfts.append(0.0)
            itls.append([])
            lats.append(0.0)
            errors.append("Traceback (most recent call last):\naiohttp.client_exceptions."
                          "ServerDisconnectedError: Server disconnected\n")
            outs.append(0)
            in_flight_end.append(start + 0.01)
        else:
            ttfts.append(ttft)
            itls.append(gaps)
            lats.append(lat)
            errors.append("")
            outs.append(out_len)
            in_flight_end.append(start + lat)
        starts.append(start)
        ins.append(in_len)
        queue.append(wait)
    duration = max(s + l for s, l in zip(starts, lats))
    ok = [i for i in range(n) if not errors[i]]
    completed = len(ok)
    total_in = sum(ins[i] for i in ok)
    total_out = sum(outs[i] for i in ok)
    # The most requests in flight at once (vllm counts them per second of the run).
    events = sorted([(starts[i], 1) for i in ok] + [(starts[i] + lats[i], -1) for i in ok])
    peak = level = 0
    for _, d in events:
        level += d
        peak = max(peak, level)
    res = {
        "duration": duration, "completed": completed, "failed": n - completed,
        "total_input_tokens": total_in, "total_output_tokens": total_out,
        "request_throughput": completed / duration,
        "request_goodput": None, "output_throughput": total_out / duration,
        "total_token_throughput": (total_in + total_out) / duration,
        "input_lens": ins, "output_lens": outs, "ttfts": ttfts, "itls": itls, "latencies": lats,
        "start_times": starts, "queue_times": queue, "generated_texts": ["x" * 16 if not e else ""
                                                                         for e in errors],
        "errors": errors,
        "max_output_tokens_per_s": float(round(peak / (tpot_ms / 1000))),
        "max_concurrent_requests": peak, "rtfx": 0.0,
    }
    per = {
        "ttft": [ttfts[i] for i in ok],
        "tpot": [(lats[i] - ttfts[i]) / (outs[i] - 1) for i in ok if outs[i] > 1],
        "itl": [g for i in ok for g in itls[i]],
        "e2el": [lats[i] for i in ok],
    }
    if goodput is not None:  # --goodput ttft:G: requests whose TTFT is within G ms
        good = sum(1 for x in per["ttft"] if x * 1000 <= goodput)
        res["request_goodput"] = good / duration
    for m in metrics:
        xs = per[m]
        res[f"mean_{m}_ms"] = mean(xs) * 1000
        res[f"median_{m}_ms"] = percentile(xs, 50) * 1000
        res[f"std_{m}_ms"] = std(xs) * 1000
        for p in percentiles:
            word = str(int(p)) if int(p) == p else str(p)
            res[f"p{word}_{m}_ms"] = percentile(xs, p) * 1000
    if max_conc is not None:
        qs = [queue[i] for i in ok]
        res["mean_client_queue_time_ms"] = mean(qs) * 1000
        res["median_client_queue_time_ms"] = percentile(qs, 50) * 1000
        res["std_client_queue_time_ms"] = std(qs) * 1000
        for p in percentiles:
            word = str(int(p)) if int(p) == p else str(p)
            res[f"p{word}_client_queue_time_ms"] = percentile(qs, p) * 1000
    head = {
        "date": "20261206-101500", "endpoint_type": "vllm", "backend": "vllm", "label": None,
        "model_id": "meta-llama/Llama-3.1-8B-Instruct",
        "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct", "num_prompts": n,
        "request_rate": rate, "burstiness": 1.0, "max_concurrency": max_conc,
    }
    out = {**head, **res}
    if not detailed:
        for f in ["input_lens", "output_lens", "start_times", "ttfts", "itls",
                  "generated_texts", "errors"]:
            del out[f]
    return out


def write(name, doc):
    with open(name, "w") as f:
        json.dump(doc, f)
        f.write("\n")


if __name__ == "__main__":
    write("vllm_serve_50_detailed.json", run(1, 50, "inf", 8, True, metrics=("ttft", "tpot", "itl", "e2el")))
    write("vllm_serve_1000_percentiles.json",
          run(2, 1000, 16.0, None, False, percentiles=(50, 90, 99, 99.9),
              metrics=("ttft", "tpot", "itl", "e2el"), goodput=100.0, out_len=32))
    write("vllm_serve_failed_detailed.json",
          run(3, 200, 4.0, None, True, metrics=("ttft", "tpot", "itl", "e2el"), fail_every=40,
              out_len=16))
    write("vllm_serve_saturated.json",
          run(4, 600, 32.0, None, False, metrics=("ttft", "tpot", "itl", "e2el"),
              server_slots=16, out_len=32))
    sys.exit(0)
