#include "trend_metric.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "store/sql.h"
#include "util/strings.h"

namespace vouch::cli {

Result<std::vector<std::string>> StoreMetricNames(Store& store) {
  // A store with no table yet holds no metric (and has no table to ask).
  if (store.empty()) return std::vector<std::string>{};
  auto q = store.db().Query("SELECT name FROM summaries UNION SELECT name FROM metrics ORDER BY 1");
  if (!q) return q.error();
  std::vector<std::string> names;
  for (const auto& r : q->rows) names.push_back(AsText(r[0]));
  return names;
}

bool KnownTrendMetric(std::string_view command, Store& store, const std::string& where,
                      const std::string& metric) {
  auto names = StoreMetricNames(store);
  if (!names) {
    fmt::print(stderr, "vouch {}: {}\n", command, names.error().message);
    return false;
  }
  if (std::find(names->begin(), names->end(), metric) != names->end()) return true;
  std::string near = ClosestMatch(metric, *names);
  fmt::print(stderr, "vouch {}: no metric '{}' in {}{}\n", command, metric, where,
             !near.empty() ? fmt::format("; did you mean '{}'?", near) : std::string());
  if (names->empty())
    fmt::print(stderr, "the store holds no metric yet (vouch history add DIR)\n");
  else
    fmt::print(
        stderr, "metrics it has: {}{}\n",
        fmt::join(names->begin(), names->begin() + std::min<long>(20, std::ssize(*names)), ", "),
        names->size() > 20 ? fmt::format(" (and {} more)", names->size() - 20) : "");
  return false;
}

}  // namespace vouch::cli
