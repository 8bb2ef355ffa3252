// What a window reads at its edges only: the driver's cumulative violation counters (time the
// clocks were held down, per cause: nvmlDeviceGetViolationStatus) and the instant and 1-s
// average power (NVML field values). Each read costs about a millisecond (a field value
// ~1.3 ms on the H100), so they never go in the 10 ms poll: two reads per window say exactly
// what a thousand polls of the event reasons infer.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vouch {

// nvmlPerfPolicyType_t, in its order (the values are NVML's).
enum class ThrottleCause {
  kPower = 0,             // NVML_PERF_POLICY_POWER: the software power cap
  kThermal = 1,           // NVML_PERF_POLICY_THERMAL
  kSyncBoost = 2,         // NVML_PERF_POLICY_SYNC_BOOST
  kBoardLimit = 3,        // NVML_PERF_POLICY_BOARD_LIMIT
  kLowUtilization = 4,    // NVML_PERF_POLICY_LOW_UTILIZATION: idle, not a throttle
  kReliability = 5,       // NVML_PERF_POLICY_RELIABILITY
  kTotalAppClocks = 10,   // NVML_PERF_POLICY_TOTAL_APP_CLOCKS: any of 0-5 (idle included)
  kTotalBaseClocks = 11,  // NVML_PERF_POLICY_TOTAL_BASE_CLOCKS: below the base clock
};
inline constexpr std::array<ThrottleCause, 8> kThrottleCauses = {
    ThrottleCause::kPower,          ThrottleCause::kThermal,        ThrottleCause::kSyncBoost,
    ThrottleCause::kBoardLimit,     ThrottleCause::kLowUtilization, ThrottleCause::kReliability,
    ThrottleCause::kTotalAppClocks, ThrottleCause::kTotalBaseClocks};
// "power", "thermal", "sync_boost", "board_limit", "low_utilization", "reliability",
// "total_app_clocks", "total_base_clocks": the keys of records and of the simulated device.
std::string_view CauseKey(ThrottleCause c);
std::optional<ThrottleCause> CauseFromKey(std::string_view key);
// "NVML_PERF_POLICY_POWER": the counter, as the driver names it.
std::string_view CounterName(ThrottleCause c);

struct EdgeReading {
  double unix_s = 0;
  std::map<ThrottleCause, std::uint64_t> violation_ns;  // cumulative since the driver loaded
  std::optional<double> power_instant_w;                // NVML_FI_DEV_POWER_INSTANT
  std::optional<double> power_average_w;                // NVML_FI_DEV_POWER_AVERAGE (1 s)
  std::vector<std::string> errors;  // "nvmlDeviceGetViolationStatus(THERMAL): Not Supported"
};

}  // namespace vouch
