// Host noise, read from a run's traced legs (issue 23 item 5, issue 22 item 9): when the GPU is
// active a small share of the measured region and a wall-clock headline (tok/s, seconds)
// spreads several times more from leg to leg than the GPU time does, the headline measures the
// host, and GPU time (gpu.active_ns_per.RANGE, per NVTX range instance) is the figure to quote.
// Pure: the record's legs (JSON, as record.json holds them) in, words out.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace vouch::gputrace {

// "A small share": the GPU active under this fraction of the region (median over legs).
inline constexpr double kHostBoundShare = 0.5;
// "Several times": the headline's spread at least this multiple of the GPU time's ...
inline constexpr double kHostNoiseRatio = 3.0;
// ... and at least this many percent (a quiet headline is no host-noise finding).
inline constexpr double kHostNoiseFloorPct = 1.0;

struct HostNoise {
  std::string headline;
  bool traced = false;         // every valid measured leg has its GPU trace fold
  std::string gpu_metric;      // gpu.active_ns_per.R (the range with the most GPU time), else
                               // gpu.active_ns; "" when not traced
  double gpu_share = 0;        // GPU-active time / region wall time, median over legs
  double headline_spread = 0;  // leg-to-leg spread, percent (sd of logs within each arm)
  double gpu_spread = 0;       // the same for gpu_metric
  bool host_bound = false;     // traced, small share, headline spread >= ratio x GPU spread
  std::string text;            // the finding, "" when not host_bound
  nlohmann::json ToJson() const;
};

// LEGS: record.json's legs[]; only valid measured legs count. Spreads are pooled over arms.
// nullopt when HEADLINE is itself a gpu.* metric, or fewer than two legs of an arm have it.
std::optional<HostNoise> AssessHostNoise(const nlohmann::json& legs, const std::string& headline);

// For a traced A/B whose wall-clock headline and GPU time point opposite ways (B did more GPU
// work per step yet had the better median headline, or the reverse): the sentence; nullopt
// when they agree, when the GPU times differ by less than max(1 %, 2x their spread), or when
// not traced. H gives the metric and spreads.
std::optional<std::string> OppositeWays(const nlohmann::json& legs, const HostNoise& h,
                                        const std::string& arm_a, const std::string& arm_b,
                                        bool higher_is_better);

// The advice for a noisy wall-clock verdict (an inconclusive gate, a baseline too noisy to
// resolve its threshold): with H traced, the GPU share and both spreads; untraced, a pointer at
// --gpu-trace and gpu.active_ns_per.RANGE for a loop that keeps the GPU busy a small share.
std::string HostNoiseAdvice(const std::optional<HostNoise>& h);

}  // namespace vouch::gputrace
