// Serving percentiles (src/stats/percentiles.h) found in the legs a command ran or read, in the
// words run prints. The modes rules of gate and ab are in src/verdict/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "record/leg_runner.h"

namespace vouch::cli {

// The serving-percentile warnings of a run's valid measured legs (stats/percentiles.h).
std::vector<std::string> LegPercentileWarnings(const std::vector<LegRecord>& legs,
                                               std::optional<long long> min_requests);

}  // namespace vouch::cli
