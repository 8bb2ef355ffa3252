#include "metrics/metric.h"

#include <fmt/format.h>

#include "metrics/reserved.h"
#include "util/strings.h"

namespace vouch {

std::string_view BetterName(Better b) {
  switch (b) {
    case Better::kHigher:
      return "higher";
    case Better::kLower:
      return "lower";
    case Better::kNone:
      return "none";
  }
  return "none";
}

Result<Better> ParseBetter(std::string_view s) {
  if (s == "higher") return Better::kHigher;
  if (s == "lower") return Better::kLower;
  if (s == "none" || s.empty()) return Better::kNone;
  return MakeError("'{}' is not a direction: use higher, lower or none", s);
}

const Metric* FindMetric(const std::vector<Metric>& metrics, std::string_view name) {
  // A reserved name resolves to vouch's own figure only, whatever the order.
  for (const auto& m : metrics)
    if (m.name == name && !ShadowsVouchMetric(m)) return &m;
  return nullptr;
}

Status RequireMetrics(const std::vector<Metric>& metrics, const std::vector<std::string>& names,
                      std::string_view source) {
  std::vector<std::string> have;
  have.reserve(metrics.size());
  for (const auto& m : metrics) have.push_back(m.name);
  for (const auto& n : names) {
    if (FindMetric(metrics, n)) continue;
    std::string hint;
    if (auto close = ClosestMatch(n, have); !close.empty())
      hint = fmt::format(" (did you mean '{}'?)", close);
    else if (have.empty())
      hint = " (it reported no metrics at all)";
    else
      hint = fmt::format(" ({} metrics were found, e.g. '{}')", have.size(), have.front());
    return MakeError("metric '{}' is missing from {}{}", n, source, hint);
  }
  return OkStatus();
}

}  // namespace vouch
