#!/usr/bin/env python3
"""Writes the SGLang bench_serving and GuideLLM fixtures of this folder (README.md says what each
is), from the same simulated requests as make_vllm.py.

SGLang: python/sglang/bench_serving.py (sgl-project/sglang at 0033168f), benchmark()'s `result`
dict, one json.dumps line per run appended to --output-file (request_rate inf is written as
Python's bare `Infinity`), with result_details (input_lens, output_lens, ttfts, itls,
generated_texts, errors) merged in under --output-details.

GuideLLM: GenerativeBenchmarksReport.save_file (vllm-project/guidellm at 03820eba):
{"args": ..., "benchmarks": [GenerativeBenchmark]}, each benchmark's config.strategy
(type_ synchronous / concurrent streams / throughput / constant rate / poisson rate),
scheduler_metrics (requests_made, measure_start_time, measure_end_time), the computed
start_time/end_time/duration, and metrics: request_totals and StatusDistributionSummary
{successful, incomplete, errored, total} of DistributionSummary {mean, median, mode, variance,
std_dev, min, max, count, total_sum, percentiles {p001 ... p999}} for requests_per_second,
request_concurrency, request_latency (s), time_to_first_token_ms, time_per_output_token_ms,
inter_token_latency_ms, output_tokens_per_second, tokens_per_second.
"""
import json
import math

from make_vllm import mean, percentile, run, std


def sglang_line(seed, n, rate, max_conc, details):
    v = run(seed, n, rate, max_conc, True, metrics=("ttft", "tpot", "itl", "e2el"),
            percentiles=(95, 99), out_len=16, server_slots=32)
    lat_ok = [x for x in v["latencies"] if x > 0]
    res = {
        "backend": "sglang", "dataset_name": "random",
        "request_rate": float("inf") if rate == "inf" else rate,
        "max_concurrency": max_conc, "sharegpt_output_len": None, "random_input_len": 512,
        "random_output_len": 16, "random_range_ratio": 0.0,
        "duration": v["duration"], "completed": v["completed"],
        "total_input_tokens": v["total_input_tokens"],
        "total_output_tokens": v["total_output_tokens"],
        "total_output_tokens_retokenized": v["total_output_tokens"] - 3,
        "request_throughput": v["request_throughput"],
        "input_throughput": v["total_input_tokens"] / v["duration"],
        "output_throughput": v["output_throughput"],
        "mean_e2e_latency_ms": v["mean_e2el_ms"], "median_e2e_latency_ms": v["median_e2el_ms"],
        "std_e2e_latency_ms": v["std_e2el_ms"], "p99_e2e_latency_ms": v["p99_e2el_ms"],
        "mean_ttft_ms": v["mean_ttft_ms"], "median_ttft_ms": v["median_ttft_ms"],
        "std_ttft_ms": v["std_ttft_ms"], "p99_ttft_ms": v["p99_ttft_ms"],
        "mean_tpot_ms": v["mean_tpot_ms"], "median_tpot_ms": v["median_tpot_ms"],
        "std_tpot_ms": v["std_tpot_ms"], "p99_tpot_ms": v["p99_tpot_ms"],
        "mean_itl_ms": v["mean_itl_ms"], "median_itl_ms": v["median_itl_ms"],
        "std_itl_ms": v["std_itl_ms"], "p95_itl_ms": v["p95_itl_ms"],
        "p99_itl_ms": v["p99_itl_ms"],
        # metrics.concurrency: the sum of the requests' latencies over the duration.
        "concurrency": sum(lat_ok) / v["duration"],
        "accept_length": None,
    }
    if details:
        for k in ["input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors"]:
            res[k] = v[k]
    return json.dumps(res)


def dist(xs):
    xs = sorted(xs)
    if not xs:
        xs = [0.0]
    keys = {"p001": 0.1, "p01": 1, "p05": 5, "p10": 10, "p25": 25, "p50": 50, "p75": 75,
            "p90": 90, "p95": 95, "p99": 99, "p999": 99.9}
    m = mean(xs)
    return {"mean": m, "median": percentile(xs, 50), "mode": xs[0], "variance": std(xs) ** 2,
            "std_dev": std(xs), "min": xs[0], "max": xs[-1], "count": len(xs),
            "total_sum": sum(xs), "percentiles": {k: percentile(xs, p) for k, p in keys.items()},
            "pdf": None}


def status(succ, err=()):
    return {"successful": dist(succ), "incomplete": dist([]), "errored": dist(list(err)),
            "total": dist(list(succ) + list(err))}


def guidellm_benchmark(seed, n, strategy, rate, max_conc, index):
    v = run(seed, n, rate, max_conc, True, metrics=("ttft", "tpot", "itl", "e2el"), out_len=64,
            server_slots=64)
    ok = [i for i in range(n) if not v["errors"][i]]
    start = 1765015000.0 + 100 * index
    ends = [v["start_times"][i] + v["latencies"][i] for i in ok]
    duration = v["duration"]
    ttft = [v["ttfts"][i] * 1000 for i in ok]
    lat = [v["latencies"][i] for i in ok]
    tpot = [(v["latencies"][i] - v["ttfts"][i]) / (v["output_lens"][i] - 1) * 1000 for i in ok]
    itl = [g * 1000 for i in ok for g in v["itls"][i]]
    conc = sum(lat) / duration
    rps = v["completed"] / duration
    return {
        "type_": "generative_benchmark",
        "config": {"id_": f"bench-{index}", "run_id": "run-1", "run_index": index,
                   "strategy": strategy, "constraints": {"max_requests": {"max_num": n}},
                   "sample_requests": 20, "profile": {"type_": "sweep"},
                   "requests": {}, "backend": {"type_": "openai_http"}, "environment": {}},
        "scheduler_state": {"node_id": 0, "num_processes": 1, "start_time": start,
                            "end_time": start + duration, "created_requests": n,
                            "processed_requests": n, "successful_requests": len(ok),
                            "errored_requests": n - len(ok), "cancelled_requests": 0},
        "scheduler_metrics": {
            "start_time": start, "request_start_time": start, "measure_start_time": start,
            "measure_end_time": start + duration, "request_end_time": start + duration,
            "end_time": start + duration,
            "requests_made": {"successful": len(ok), "incomplete": 0, "errored": n - len(ok),
                              "total": n},
            "queued_time_avg": mean(v["queue_times"]), "resolve_start_delay_avg": 0.0004,
            "resolve_targeted_start_delay_avg": 0.0011, "request_start_delay_avg": 0.0002,
            "request_targeted_start_delay_avg": 0.0013, "request_time_avg": mean(lat),
            "resolve_end_delay_avg": 0.0001, "resolve_time_avg": mean(lat) + 0.0005,
            "finalized_delay_avg": 0.0002, "processed_delay_avg": 0.0001},
        "metrics": {
            "request_totals": {"successful": len(ok), "incomplete": 0, "errored": n - len(ok),
                               "total": n},
            "requests_per_second": status([rps] * 8),
            "request_concurrency": status([conc] * 8),
            "request_latency": status(lat),
            "time_to_first_token_ms": status(ttft),
            "time_per_output_token_ms": status(tpot),
            "inter_token_latency_ms": status(itl),
            "output_tokens_per_second": status([v["output_throughput"]] * 8),
            "tokens_per_second": status([v["total_token_throughput"]] * 8),
        },
        "requests": {"successful": [], "incomplete": [], "errored": [], "total": None},
        "start_time": start, "end_time": start + duration, "duration": duration,
        "warmup_duration": 0.0, "cooldown_duration": 0.0,
    }


if __name__ == "__main__":
    with open("sglang_bench_serving.jsonl", "w") as f:
        # bench_serving appends: an earlier run at 4 req/s, then the run at 8 req/s.
        f.write(sglang_line(11, 200, 4.0, None, False) + "\n")
        f.write(sglang_line(12, 600, 8.0, None, True) + "\n")
    with open("sglang_bench_serving_inf.jsonl", "w") as f:
        f.write(sglang_line(13, 300, "inf", None, False) + "\n")
    report = {
        "args": {"target": "http://localhost:8000", "profile": "sweep", "rate": None,
                 "max_requests": 600, "data": "prompt_tokens=512,output_tokens=64"},
        "benchmarks": [
            guidellm_benchmark(21, 120, {"type_": "synchronous"}, "inf", 1, 0),
            guidellm_benchmark(22, 600, {"type_": "throughput", "max_concurrency": None},
                               "inf", None, 1),
            guidellm_benchmark(23, 600, {"type_": "constant", "rate": 6.0}, 6.0, None, 2),
        ],
    }
    with open("guidellm_benchmarks.json", "w") as f:
        f.write(json.dumps(report) + "\n")
