// The thresholds that decide validity. Every summary carries the policy it was judged by.
// Defaults are the seeds' (001: "The clock is part of the measurement").
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "util/result.h"

namespace vouch {

struct Policy {
  // A window must have been observed: the spread over one reading is 0 %, the best score,
  // so without a floor the window nobody watched outscores the one that was.
  int min_busy_readings = 30;
  // Busy readings must be a majority of the window (strictly more than this fraction).
  double min_busy_fraction = 0.5;
  // (max - min) / median of the busy SM clock.
  double max_spread = 0.05;
  // Two windows pair when their busy SM clock medians AND means are within this of each
  // other (relative to the lower). The mean is a separate rule: throughput is an integral
  // over the window, so the mean is what transfers into a ratio.
  double max_median_offset = 0.01;
  double max_mean_offset = 0.01;
  // NVML refreshes clocks, power and utilization at its own period (100 ms on the H200);
  // used only when a window holds too few changes to measure the period.
  double default_update_period_s = 0.1;
  // Warn when a GPU's peak memory used comes within this fraction of its total. The free-
  // memory check before a leg cannot see the leg's own allocations filling the GPU (seed 000,
  // #1103: at ~0 MiB free, WDDM and unified memory spill to host memory and keep returning
  // success, and bandwidth falls off a cliff).
  double memory_margin = 0.02;
  // --max-throttled-pct: a window whose GPU the driver's own violation counters show held
  // down by one cause (power cap, thermal, ...) for more than this share of the window is
  // invalid, whatever its clock spread (throttle/throttle.h). Off unless given.
  std::optional<double> max_throttled_share;
};

nlohmann::json ToJson(const Policy& p);
class JsonSchema;
const JsonSchema& PolicySchema();
Result<Policy> PolicyFromJson(const nlohmann::json& j, const std::string& where);
// The same of J that passed PolicySchema: not checked again.
Policy PolicyFromCheckedJson(const nlohmann::json& j);

}  // namespace vouch
