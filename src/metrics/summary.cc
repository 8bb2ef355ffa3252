#include "metrics/summary.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "metrics/reserved.h"

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
  return s;
}

std::vector<MetricSummary> SummarizeLegs(const std::vector<std::vector<Metric>>& per_leg) {
  // Linear in the metrics (a leg may report up to kMaxMetricsPerLeg): per name, its first
  // numeric occurrence (unit and direction) and the value of its first occurrence in each
  // leg; a text metric is for equality checks and contributes nothing. A reserved name
  // (vouch.*, gpu.*) counts only vouch's own figure, never one a leg's source gave.
  struct Acc {
    const Metric* first = nullptr;
    std::vector<double> values;
    std::size_t last_leg = ~std::size_t{0};
  };
  std::unordered_map<std::string_view, Acc> by_name;
  std::vector<Acc*> order;  // by first numeric occurrence
  for (std::size_t li = 0; li < per_leg.size(); ++li)
    for (const auto& m : per_leg[li]) {
      if (ShadowsVouchMetric(m)) continue;
      Acc& a = by_name[m.name];
      if (a.last_leg == li) continue;  // only a leg's first metric of that name counts
      a.last_leg = li;
      if (m.is_text()) continue;
      if (!a.first) {
        a.first = &m;
        order.push_back(&a);
      }
      a.values.push_back(m.value);
    }
  std::vector<MetricSummary> out;
  for (const Acc* a : order)
    if (auto s = Summarize(a->first->name, a->first->unit, a->first->better, a->values))
      out.push_back(std::move(*s));
  return out;
}

}  // namespace vouch
