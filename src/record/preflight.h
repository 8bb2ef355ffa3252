// The checks before a run's first leg: the GPUs free of other compute processes, enough
// free disk for the evidence, enough free device memory. Moved out of record.cc (issue 22).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "telemetry/device.h"

namespace vouch {

struct Preflight {
  bool ok = true;
  std::vector<std::string> problems;  // refuse the run
  std::vector<std::string> warnings;  // recorded and shown
  nlohmann::json busy_processes = nlohmann::json::array();
};

// GPU free (another compute process refuses unless ALLOW_BUSY, which records who), free
// disk under DIR above the budget, free device memory (near zero is a warning).
Preflight RunPreflight(Device& device, const std::vector<int>& gpus, bool allow_busy,
                       std::uint64_t disk_budget_bytes, const std::string& dir);

}  // namespace vouch
