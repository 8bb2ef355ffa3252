// Helpers shared by commands: opening the device the global options chose, policy flags.
#pragma once

#include <memory>

#include "clock/policy.h"
#include "command.h"
#include "telemetry/device.h"

namespace vouch::cli {

// The simulated device when --sim/VOUCH_SIM is set, else NVML. Prints the error on failure.
std::unique_ptr<Device> OpenDevice(const GlobalOptions& g);

// Policy overrides on the command line; percentages are given in percent.
struct PolicyFlags {
  std::optional<int> min_busy_readings;
  std::optional<double> min_busy_pct, max_spread_pct, max_median_offset_pct, max_mean_offset_pct;
  void Add(CLI::App& app);
  Policy Apply(Policy p) const;
};

// Parses "0,1" or "all" from --gpu values into indices checked against COUNT.
Result<std::vector<int>> CheckGpus(const std::vector<int>& asked, int count);

}  // namespace vouch::cli
