#include "metrics/summary.h"

#include <algorithm>
#include <cmath>
#include <numeric>

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
  std::vector<const Metric*> firsts;  // first occurrence of each name, in order
  for (const auto& leg : per_leg)
    for (const auto& m : leg) {
      if (m.is_text()) continue;
      bool seen = false;
      for (const Metric* f : firsts) seen = seen || f->name == m.name;
      if (!seen) firsts.push_back(&m);
    }
  std::vector<MetricSummary> out;
  for (const Metric* f : firsts) {
    std::vector<double> values;
    for (const auto& leg : per_leg)
      if (const Metric* m = FindMetric(leg, f->name); m && !m->is_text())
        values.push_back(m->value);
    if (auto s = Summarize(f->name, f->unit, f->better, values)) out.push_back(std::move(*s));
  }
  return out;
}

}  // namespace vouch
