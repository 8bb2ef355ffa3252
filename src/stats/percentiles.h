// Percentiles that are percentiles. `vllm bench serve` writes p99 latencies from any number
// of requests; a p99 of 50 requests is their maximum, not a p99. A percentile is quoted as one
// only when the request count supports it: the bound is the one MLPerf LoadGen's early-stopping
// rule uses, an order statistic as a one-sided confidence bound on a quantile. With n
// independent requests, the number above the true q-quantile is Binomial(n, 1 - q), so the k-th
// largest request bounds the q-quantile from above with confidence c when
// P(Binomial(n, 1 - q) >= k) >= c. The smallest such n (k = 1: the slowest request) is the
// count a pNN needs: 459 for p99 at 99 % confidence, 299 at 95 %, 90 for p95, 44 for p90.
// (For q below one half the tail is the low one: the fastest request bounds it from below.)
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/metric.h"

namespace vouch {

// The confidence at which a serving percentile must be bounded (MLPerf LoadGen's 99 %).
inline constexpr double kPercentileConfidence = 0.99;

// The smallest n for which the K-th most extreme of n requests (on the tail side of Q) bounds
// the Q-quantile with CONFIDENCE (Boost.Math's binomial). Q in (0, 1), CONFIDENCE in (0, 1),
// K >= 1; 0 for arguments outside those ranges.
std::size_t MinRequestsForPercentile(double q, double confidence = kPercentileConfidence,
                                     std::size_t k = 1);

// The percentile of a latency metric name as vllm writes it: "p99_ttft_ms" -> 0.99,
// "p99.9_e2el_ms" -> 0.999; nullopt for any other name.
std::optional<double> PercentileOfName(std::string_view name);

// The warnings for a serving run's legs (each leg's metrics; NUMBERS the legs' 1-based
// numbers): for each percentile level vllm reported, when the fewest `completed` requests of
// a leg cannot support it at CONFIDENCE, one line naming the metrics, the count and the count
// needed; and, when MIN_REQUESTS is set, one line naming the legs that completed fewer.
// Only metrics read from a vllm result (source "vllm ...") are looked at; none: no warning.
std::vector<std::string> ServingPercentileWarnings(
    const std::vector<std::vector<Metric>>& legs, const std::vector<int>& numbers,
    std::optional<long long> min_requests = std::nullopt,
    double confidence = kPercentileConfidence);

}  // namespace vouch
