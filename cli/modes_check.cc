#include "modes_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "stats/modes.h"
#include "stats/percentiles.h"
#include "stats/serving_load.h"

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
  // Each refusal once, with the legs it holds for (legs of one run usually say the same).
  std::vector<std::pair<std::string, std::vector<int>>> refused;
  std::vector<int> short_legs;
  std::optional<double> fewest;
  for (const auto& l : legs) {
    if (l.role != "measured" || !l.valid) continue;
    for (const auto& note : l.result.notes) {
      const std::string prefix = kServingNotePrefix;
      if (note.rfind(prefix, 0) != 0) continue;
      const std::string line = note.substr(prefix.size());
      auto it = std::find_if(refused.begin(), refused.end(),
                             [&](const auto& r) { return r.first == line; });
      if (it == refused.end()) it = refused.insert(refused.end(), {line, {}});
      it->second.push_back(l.index + 1);
    }
    const Metric* done = FindMetric(l.metrics, "completed");
    if (!done || done->is_text() || done->source.rfind("channel", 0) == 0) continue;
    fewest = fewest ? std::min(*fewest, done->value) : done->value;
    if (min_requests && done->value < static_cast<double>(*min_requests))
      short_legs.push_back(l.index + 1);
  }
  std::vector<std::string> out;
  for (const auto& [line, numbers] : refused)
    out.push_back(fmt::format("serving (leg{} {}): {}", numbers.size() == 1 ? "" : "s",
                              fmt::join(numbers, ", "), line));
  if (!short_legs.empty())
    out.push_back(fmt::format(
        "serving run too short: leg{} {} completed fewer requests than --min-requests {} "
        "(fewest: {}); their percentiles are not quoted",
        short_legs.size() == 1 ? "" : "s", fmt::join(short_legs, ", "), *min_requests,
        fmt::format("{:g}", *fewest)));
  return out;
}

}  // namespace vouch::cli
