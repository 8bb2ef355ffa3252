// The check both `history trend` and `report --trend` make before they build a series: a
// metric the store does not hold is a misspelling, not an empty series.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace vouch::cli {

// Every metric name STORE holds (per leg and in the runs' summaries), sorted.
Result<std::vector<std::string>> StoreMetricNames(Store& store);

// When STORE holds no metric METRIC: prints "vouch COMMAND: no metric 'X' in WHERE; did you
// mean 'Y'?" and the names it has (or that it holds none), and returns false. True when it
// holds it (or cannot say: the error is printed, and false returned).
bool KnownTrendMetric(std::string_view command, Store& store, const std::string& where,
                      const std::string& metric);

}  // namespace vouch::cli
