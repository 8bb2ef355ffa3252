#include "metrics/summary.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "metrics/reserved.h"
#include "stats/modes.h"

namespace vouch {

std::optional<MetricSummary> Summarize(const std::string& name, const std::string& unit,
                                       Better better, const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  for (double v : values)
    if (!std::isfinite(v)) return std::nullopt;
  std::vector<double> v = values;
  std::sort(v.begin(), v.end());
  MetricSummary s;
  s.name = name;
  s.unit = unit;
  s.better = better;
  s.n = v.size();
  s.min = v.front();
  s.max = v.back();
  s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  if (s.median != 0) s.spread_pct = (s.max - s.min) / std::fabs(s.median) * 100.0;
  // A leg's own metrics (vouch's host facts such as wall time are not the benchmark's figure).
  if (!IsReservedMetricName(name))
    if (auto m = DetectModes(values); m.found) s.modes = DescribeModes(m, unit);
  return s;
}

// Linear in the metrics (a leg may report up to kMaxMetricsPerLeg): per name, its first
// numeric occurrence (unit and direction) and the value of its first occurrence in each leg;
// a text metric is for equality checks and contributes nothing. A reserved name (vouch.*,
// gpu.*) counts only vouch's own figure, never one a leg's source gave.
void MetricAccumulator::AddLeg(const std::vector<Metric>& metrics) {
  ++legs_;
  for (const auto& m : metrics) {
    if (ShadowsVouchMetric(m)) continue;
    auto [it, added] = index_.try_emplace(m.name, names_.size());
    if (added) names_.push_back({m.name, "", Better::kNone, false, {}, 0});
    Name& a = names_[it->second];
    if (a.last_leg == legs_) continue;  // only a leg's first metric of that name counts
    a.last_leg = legs_;
    if (m.is_text()) continue;
    if (!a.numeric) {
      a.numeric = true;
      a.unit = m.unit;
      a.better = m.better;
      order_.push_back(it->second);
    }
    a.values.push_back(m.value);
  }
}

std::vector<MetricSummary> MetricAccumulator::Summaries() const {
  std::vector<MetricSummary> out;
  for (size_t i : order_) {
    const Name& a = names_[i];
    if (auto s = Summarize(a.name, a.unit, a.better, a.values)) out.push_back(std::move(*s));
  }
  return out;
}

std::vector<MetricSummary> SummarizeLegs(const std::vector<std::vector<Metric>>& per_leg) {
  MetricAccumulator acc;
  for (const auto& leg : per_leg) acc.AddLeg(leg);
  return acc.Summaries();
}

}  // namespace vouch
