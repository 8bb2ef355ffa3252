// Readers of serving benchmark results: `vllm bench serve --save-result` (declared in
// metrics/formats.h with the other formats), SGLang `bench_serving --output-file` and GuideLLM's
// benchmarks.json; the per-request times a detailed result carries, from which the slowest
// request is given (max_ttft_ms, ...: the bound stats/percentiles.h states); and the load each
// run offered and achieved, assessed by stats/serving_load.h into a `serving_load` text metric
// (tests/data/serving/README.md says where each field comes from).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/metric.h"
#include "stats/serving_load.h"
#include "util/result.h"

namespace vouch {

// The per-request times of a vllm --save-detailed result, in milliseconds, sorted, successful
// requests only (an "errors" entry that is not empty is a failed request; without "errors", as
// vllm saves "latencies" even without --save-detailed, a latency of 0 is): "ttft" from
// "ttfts", "e2el" from "latencies", "tpot" as vllm computes it ((latency - ttft) / (output
// tokens - 1), for requests of more than one output token). Empty vectors when the result has
// no per-request arrays; an error when an array is malformed or the lengths disagree.
struct VllmRequestTimes {
  std::vector<double> ttft_ms, e2el_ms, tpot_ms;
};
Result<VllmRequestTimes> ReadVllmRequestTimes(const nlohmann::json& doc, std::string_view path);

// SGLang `python -m sglang.bench_serving --output-file FILE` (JSONL, one line appended per run:
// the last line is read). Its keys as written: request_throughput (req/s higher),
// input/output/total_throughput (tok/s higher), duration, completed, failed, token totals,
// concurrency (mean requests in flight), and {mean,median,std,pNN}_{ttft,tpot,itl,e2e_latency}_ms
// (ms lower); max_ttft_ms with --output-details; serving_load. Python's bare NaN and Infinity
// (request_rate inf) are read as not measured and as "inf".
Result<std::vector<Metric>> ParseSglangBenchServing(std::string_view text, std::string_view path);

// GuideLLM `guidellm benchmark --output-path FILE.json`. Per benchmark, named by its strategy
// as GuideLLM prints it (synchronous, throughput, concurrent@8, constant@6.00, poisson@2.50;
// "[2]" for a repeat), over its successful requests: NAME/completed, /failed (errored),
// /incomplete, /requests_per_second, /output_tokens_per_second, /tokens_per_second (means),
// /request_concurrency (mean in flight), /duration, and for ttft, tpot, itl and e2el
// (request_latency, seconds in the file): /mean_X_ms, /median_X_ms, /std_X_ms, /max_X_ms and
// /pNN_X_ms for each percentile it writes (p001 is p0.1, p999 is p99.9); NAME/serving_load.
Result<std::vector<Metric>> ParseGuidellm(std::string_view text, std::string_view path);

namespace serving_detail {

// DOC[KEY] when it is a finite number.
std::optional<double> NumberAt(const nlohmann::json& doc, const char* key);

// The load a serving result offered and achieved, when it says what it offered
// ("request_rate" a number, or "inf"): max_concurrency, completed (+ failed), duration, the mean
// latency from MEAN_LATENCY_MS_KEY (else the per-request e2el times, else TTFT + TPOT x the mean
// output tokens), the mean in flight from IN_FLIGHT_KEY (nullptr: none), the send span from
// "start_times". nullopt when the result does not say.
Result<std::optional<ServingLoad>> ServingLoadOf(const nlohmann::json& doc,
                                                 const VllmRequestTimes& t, std::string_view path,
                                                 const char* mean_latency_ms_key,
                                                 const char* in_flight_key);

// Python's json.dump text made JSON: outside strings, NaN becomes null, Infinity "inf" and
// -Infinity "-inf" (strings).
std::string PythonJsonText(std::string_view text);

}  // namespace serving_detail

}  // namespace vouch
