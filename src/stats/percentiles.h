// Percentiles that are percentiles. `vllm bench serve` writes p99 latencies from any number
// of requests; numpy's p99 of 50 requests interpolates between the two slowest, and no order
// statistic of 50 bounds the server's p99 at 99 % confidence. A percentile is quoted as one
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
// "p99.9_e2el_ms" -> 0.999, and the same after the last '/' of a GuideLLM benchmark's
// ("constant@6.00/p99_ttft_ms" -> 0.99); nullopt for any other name.
std::optional<double> PercentileOfName(std::string_view name);

// The smallest order statistic k (1-based, from the fastest) of N requests that bounds the
// Q-quantile from above with CONFIDENCE: the smallest k with P(Binomial(N, Q) < k) >=
// CONFIDENCE (distribution-free: the number of requests below the true quantile is binomial).
// 0 when none does (N too small: even the slowest request is not such a bound).
std::size_t UpperBoundOrder(std::size_t n, double q, double confidence = kPercentileConfidence);

// The highest quantile the slowest of N requests bounds with CONFIDENCE: (1 - CONFIDENCE)^(1/N)
// (P(the slowest is below the q-quantile) = q^N). 50 requests at 99 %: 0.912.
double QuantileBoundedBySlowest(std::size_t n, double confidence = kPercentileConfidence);

// Serving results (vllm bench serve, SGLang bench_serving, GuideLLM: a source "vllm ...",
// "sglang ..." or "guidellm ...") whose `completed` count is below what a percentile needs at
// CONFIDENCE, or below MIN_REQUESTS when it is set, do not give that percentile as a figure: it
// is removed from METRICS (so no summary, baseline, gate or headline quotes it), and one line
// per percentile level says which metrics, the count, the count needed and the order-statistic
// bound the data does support: "p99 of 50 completed requests is not a figure (p99_ttft_ms,
// p99_e2el_ms not quoted): a p99 at 99 % confidence needs at least 459 requests; the slowest
// of 50 bounds p91.2 at 99 % (and the p99 at only 39.5 %): ttft <= 180.26 ms, ...". The values
// are the slowest requests (max_ttft_ms, max_e2el_ms, ... when the reader had per-request
// times), else the line says how to get them. Under --min-requests alone the line names the
// order statistic that does bound it ("the 3rd largest bounds the p99 at 99 %"). A GuideLLM
// result is judged per benchmark ("constant@6.00/..."), each by its own NAME/completed.
// Metrics of other sources are left alone.
std::vector<std::string> RefuseUnsupportedPercentiles(
    std::vector<Metric>* metrics, std::optional<long long> min_requests = std::nullopt,
    double confidence = kPercentileConfidence);

// "1,000": a count with thousands separators.
std::string GroupedCount(std::size_t n);

}  // namespace vouch
