#include "modes_check.h"

#include "stats/percentiles.h"

namespace vouch::cli {

std::vector<std::string> LegPercentileWarnings(const std::vector<LegRecord>& legs,
                                               std::optional<long long> min_requests) {
  std::vector<std::vector<Metric>> metrics;
  std::vector<int> numbers;
  for (const auto& l : legs)
    if (l.role == "measured" && l.valid) {
      metrics.push_back(l.metrics);
      numbers.push_back(l.index + 1);
    }
  return ServingPercentileWarnings(metrics, numbers, min_requests);
}

}  // namespace vouch::cli
