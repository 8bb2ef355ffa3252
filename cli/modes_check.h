// Serving lines (src/stats/percentiles.h, src/stats/serving_load.h) found in the legs a command
// ran or read, in the words run prints. The modes rules of gate and ab are in src/verdict/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "record/leg_runner.h"

namespace vouch::cli {

// The serving lines of a run's valid measured legs: each leg's note of what it does not quote
// and why (a saturated load's latencies, a percentile its count cannot support), once with
// the legs it holds for; and the legs that completed fewer requests than MIN_REQUESTS.
std::vector<std::string> LegPercentileWarnings(const std::vector<LegRecord>& legs,
                                               std::optional<long long> min_requests);

}  // namespace vouch::cli
