#include "telemetry/edge.h"

namespace vouch {

std::string_view CauseKey(ThrottleCause c) {
  switch (c) {
    case ThrottleCause::kPower:
      return "power";
    case ThrottleCause::kThermal:
      return "thermal";
    case ThrottleCause::kSyncBoost:
      return "sync_boost";
    case ThrottleCause::kBoardLimit:
      return "board_limit";
    case ThrottleCause::kLowUtilization:
      return "low_utilization";
    case ThrottleCause::kReliability:
      return "reliability";
    case ThrottleCause::kTotalAppClocks:
      return "total_app_clocks";
    case ThrottleCause::kTotalBaseClocks:
      return "total_base_clocks";
  }
  return "?";
}

std::optional<ThrottleCause> CauseFromKey(std::string_view key) {
  for (auto c : kThrottleCauses)
    if (CauseKey(c) == key) return c;
  return std::nullopt;
}

std::string_view CounterName(ThrottleCause c) {
  switch (c) {
    case ThrottleCause::kPower:
      return "NVML_PERF_POLICY_POWER";
    case ThrottleCause::kThermal:
      return "NVML_PERF_POLICY_THERMAL";
    case ThrottleCause::kSyncBoost:
      return "NVML_PERF_POLICY_SYNC_BOOST";
    case ThrottleCause::kBoardLimit:
      return "NVML_PERF_POLICY_BOARD_LIMIT";
    case ThrottleCause::kLowUtilization:
      return "NVML_PERF_POLICY_LOW_UTILIZATION";
    case ThrottleCause::kReliability:
      return "NVML_PERF_POLICY_RELIABILITY";
    case ThrottleCause::kTotalAppClocks:
      return "NVML_PERF_POLICY_TOTAL_APP_CLOCKS";
    case ThrottleCause::kTotalBaseClocks:
      return "NVML_PERF_POLICY_TOTAL_BASE_CLOCKS";
  }
  return "?";
}

}  // namespace vouch
