// Serving-load validity: whether a serving benchmark's latencies were measured at the load it
// offered. A client offers requests at a rate (request_rate) or keeps a number in flight
// (max_concurrency); the result says how many completed in how long, and what was in flight.
// Latencies taken while the offered load outran the server measure a queue, not the server
// ("saturated"); latencies taken while the client could not offer its own load measure the
// client ("client-bound"). Either way they are no figure for a verdict; throughputs stay.
//
// The rule, with n the requests sent, d the run's duration, W the mean request latency and
// margin m = max(10 %, 3 / sqrt(n)) (three standard deviations of the length of a Poisson
// schedule of n requests, relative):
//   - request_rate inf, no max_concurrency: saturated (every request is offered at once, so
//     each latency includes its wait behind the others).
//   - request_rate R finite: client-bound when the sends (first to last, where the result
//     gives them) ran slower than R / (1 + m) and no max_concurrency held them back;
//     saturated when d > (n / R + W) (1 + m): the run outlasted its own schedule plus one
//     request by more than the margin, so requests queued.
//   - request_rate inf with max_concurrency C (a closed loop): client-bound when n >= 2 C and
//     the mean number in flight (the format's, or completed / d x W by Little's law) is below
//     C / 2: the client, not the server, set the pace.
//   - otherwise valid.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "metrics/metric.h"

namespace vouch {

struct ServingLoad {
  std::optional<double> offered_rate;     // req/s; nullopt: infinite (all at once)
  std::optional<double> max_concurrency;  // nullopt: no cap
  double sent = 0;                        // requests sent (completed + failed)
  double completed = 0;
  double duration_s = 0;
  std::optional<double> mean_latency_s;  // of a completed request, end to end
  std::optional<double> mean_in_flight;  // over the run, when the format gives it
  std::optional<double> send_span_s;     // first send to last send, when the format gives it
};

enum class LoadVerdict { kValid, kSaturated, kClientBound };

struct LoadAssessment {
  LoadVerdict verdict = LoadVerdict::kValid;
  std::string reason;  // the numbers the verdict came from, in words
};

LoadAssessment AssessServingLoad(const ServingLoad& load);

// True for a metric read from a serving result: its source is "vllm ...", "sglang ..." or
// "guidellm ..." (the readers of metrics/formats_serving.h).
bool IsServingMetric(const Metric& m);

// "valid", "saturated", "client-bound".
std::string LoadVerdictName(LoadVerdict v);

// The name of the text metric a serving reader writes the assessment into: its text is
// "saturated: REASON" (the verdict's name, a colon, the reason).
inline constexpr const char* kServingLoadMetric = "serving_load";

// The text metric of an assessment, from SOURCE (the reader's source, "vllm PATH").
Metric ServingLoadMetric(const LoadAssessment& a, const std::string& source);

// The prefix of a leg's note (LegResult::notes) that says which serving figures it does not
// quote and why: "serving: load saturated: ...", "serving: p99 of 50 completed requests ...".
inline constexpr const char* kServingNotePrefix = "serving: ";

// A leg whose serving_load is saturated or client-bound gives no latency as a figure: every
// latency of a serving source (unit ms or s, other than duration) is removed from METRICS, and
// one line says why and which ("load saturated: offered 20 req/s ...; its latencies are not
// figures (mean_ttft_ms, ...)"). Nothing happens to a valid leg or one without serving_load.
std::vector<std::string> RefuseLatenciesOfAnInvalidLoad(std::vector<Metric>* metrics);

}  // namespace vouch
