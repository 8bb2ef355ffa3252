// Modes across process spawns: do a metric's legs (one process each) form two separated
// clusters? vLLM decode on one GPU has been seen at 33 or 26 tok/s per spawn, fixed for the
// life of the process; the median of such legs is a number no process ever ran at.
//
// The test (pure; the design and its calibration are in modes.cc):
//   * the values are taken on the log scale when all are positive (modes of a throughput or a
//     latency are multiplicative, and a lognormal sample becomes a normal one);
//   * for every split of the sorted values into a low and a high cluster of at least
//     kModesMinCluster legs each, T = (mean_high - mean_low) / s_within, s_within the pooled
//     standard deviation of the two clusters (n - 2 degrees of freedom); the statistic is the
//     largest T over the splits;
//   * two modes when T exceeds the threshold for n (ModesThreshold), calibrated by seeded
//     simulation so that the false-alarm rate on unimodal normal and lognormal legs is at most
//     kModesFalseAlarmRate, and the two clusters' medians are at least min_separation_pct apart.
// One leg away from the rest is an outlier, not a mode: a cluster needs two legs, so at least
// four legs are needed (fewer: never modes).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vouch {

inline constexpr double kModesFalseAlarmRate = 0.01;  // per metric, on unimodal legs
inline constexpr std::size_t kModesMinCluster = 2;
inline constexpr std::size_t kModesMinLegs = 2 * kModesMinCluster;
// Clusters whose medians are closer than this are not reported as modes, however clean.
inline constexpr double kModesMinSeparationPct = 1.0;

struct Mode {
  double center = 0;  // the median of the cluster's values
  std::size_t legs = 0;
  double min = 0, max = 0;
};

struct ModesResult {
  bool found = false;
  double statistic = 0;       // the largest T (0 with fewer than kModesMinLegs values)
  double threshold = 0;       // ModesThreshold(n)
  double separation_pct = 0;  // (high center - low center) / low center, in percent
  std::vector<Mode> modes;    // when found: two, the higher center first
};

// The largest standardized split T of VALUES (see above) and, in *SPLIT, how many of the
// sorted values are in the low cluster. 0 (and *split 0) with fewer than kModesMinLegs values
// or when every value is equal; +infinity when the clusters have no spread of their own.
double ModesStatistic(std::span<const double> values, std::size_t* split = nullptr);

// The threshold of ModesStatistic for N values (false-alarm rate <= kModesFalseAlarmRate);
// +infinity below kModesMinLegs.
double ModesThreshold(std::size_t n);

ModesResult DetectModes(std::span<const double> values,
                        double min_separation_pct = kModesMinSeparationPct);

// "two modes: 33.1 tok/s in 5 legs, 26.0 in 4" (LEGS names the unit of a value: "legs",
// "trials"); "" when none was found.
std::string DescribeModes(const ModesResult& r, std::string_view unit,
                          std::string_view legs = "legs");

}  // namespace vouch
