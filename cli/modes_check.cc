#include "modes_check.h"

#include <fmt/format.h>

#include "stats/modes.h"
#include "stats/percentiles.h"

namespace vouch::cli {

GateModesFound GateModes(const GateReport& report, const Baseline& baseline,
                         const std::map<std::string, CurrentMetric>& now) {
  GateModesFound found;
  for (const auto& row : report.rows) {
    if (row.verdict == GateVerdict::kSkipped || row.verdict == GateVerdict::kMissing ||
        row.verdict == GateVerdict::kError)
      continue;
    std::vector<std::string>& out = row.fail_pct ? found.refuse : found.warn;
    if (auto it = now.find(row.metric); it != now.end()) {
      auto m = DetectModes(it->second.values);
      if (m.found)
        out.push_back(fmt::format("{}: this run's legs show {}", row.metric,
                                  DescribeModes(m, it->second.unit)));
    }
    for (const auto& b : baseline.metrics) {
      if (b.name != row.metric) continue;
      auto m = DetectModes(b.trials);
      if (m.found)
        out.push_back(fmt::format("{}: the baseline's trials show {}", row.metric,
                                  DescribeModes(m, b.unit, "trials")));
    }
  }
  return found;
}

std::vector<std::string> ArmModes(const std::vector<LegRecord>& legs, const std::string& metric,
                                  const std::vector<std::string>& arms) {
  std::vector<std::string> out;
  if (metric.empty()) return out;
  for (const auto& arm : arms) {
    std::vector<double> values;
    std::string unit;
    for (const auto& l : legs) {
      if (l.arm != arm || l.role != "measured" || !l.valid) continue;
      if (const Metric* m = FindMetric(l.metrics, metric); m && !m->is_text()) {
        values.push_back(m->value);
        unit = m->unit;
      }
    }
    auto m = DetectModes(values);
    if (m.found)
      out.push_back(fmt::format("{}: arm {}'s legs show {}", metric, arm, DescribeModes(m, unit)));
  }
  return out;
}

std::string ModesRefusal(std::string_view what) {
  return fmt::format(
      "refused: a median over two modes is a number no process ran at (each leg is one process, "
      "and its mode is fixed for its life); find what picks the mode, or pass --allow-modes to "
      "{} over them anyway (the modes test's false-alarm rate is {:g} % per metric on unimodal "
      "legs)",
      what, kModesFalseAlarmRate * 100);
}

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
