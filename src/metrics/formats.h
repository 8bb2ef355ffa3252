// Parsers for the output formats of known benchmark tools. Each takes the text and a PATH
// used only to name the file in errors, and returns every metric it found. Each is tested
// on real output of the tool (tests/data/metrics/README.md says where each came from).
#pragma once

#include <string_view>
#include <vector>

#include "metrics/metric.h"
#include "util/result.h"

namespace vouch {

// llama-bench `-o json` (an array) or `-o jsonl` (one object per line). Per result:
//   <test>.tokens_per_s  tok/s higher  (avg_ts, samples = samples_ts)
//   <test>.duration_ns   ns    lower   (avg_ns, samples = samples_ns)
// <test> is pp<n_prompt>, tg<n_gen> or pp<n>+tg<n>, with "@d<n_depth>" when n_depth > 0;
// a test that repeats (a sweep over another setting) gets "[2]", "[3]", ... appended.
Result<std::vector<Metric>> ParseLlamaBench(std::string_view text, std::string_view path);

// `vllm bench serve --save-result` JSON: request/output/total token throughputs, goodput,
// duration, completed/failed counts, and every {mean,median,std,pNN}_{ttft,tpot,itl,e2el}_ms;
// with per-request times, max_{ttft,tpot,e2el}_ms; and serving_load (stats/serving_load.h).
// SGLang bench_serving and GuideLLM results are recognised by their keys and read by their
// own readers (metrics/formats_serving.h).
Result<std::vector<Metric>> ParseVllmBenchServe(std::string_view text, std::string_view path);

// Google Benchmark `--benchmark_format=json`. Per result name:
//   <name>.real_time, <name>.cpu_time (unit = time_unit, lower), <name>.items_per_second
//   (items/s, higher), <name>.bytes_per_second (B/s, higher), other user counters (no unit).
// Repetitions of one name become samples; the value is their median. Aggregates keep their
// own names (<name>_mean, _median, _stddev, _cv). Results that errored or were skipped give
// no metrics.
Result<std::vector<Metric>> ParseGoogleBenchmark(std::string_view text, std::string_view path);

// nvbench `--json` (JSON format 1.x). Per benchmark, state and summary with a "value":
//   <benchmark>[<state name>].<tag>   e.g. "simple[Device=0].nv/cold/time/gpu/mean" (s, lower)
// Units come from the summary hint: duration s, item_rate items/s, byte_rate B/s,
// percentage fraction, sample_size count. Skipped states give no metrics.
Result<std::vector<Metric>> ParseNvbench(std::string_view text, std::string_view path);

}  // namespace vouch
