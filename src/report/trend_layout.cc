#include "report/trend_layout.h"

#include <algorithm>

namespace vouch {

TrendPageLayout LayOutTrendPage(std::size_t n, const std::vector<Step>& steps,
                                std::size_t max_chart_points, std::size_t max_rows) {
  TrendPageLayout l;
  max_chart_points = std::max<std::size_t>(1, max_chart_points);
  l.bucket = n > max_chart_points ? (n + max_chart_points - 1) / max_chart_points : 1;
  if (n <= max_rows) {
    if (n > 0) l.rows.emplace_back(0, n);
    return l;
  }
  std::vector<std::pair<std::size_t, std::size_t>> want;
  for (const auto& st : steps) {
    const auto at = static_cast<std::size_t>(std::max(0, st.index));
    want.emplace_back(at > 3 ? at - 3 : 0, std::min(n, at + 3));
  }
  want.emplace_back(n - std::min(n, max_rows / 2), n);
  std::sort(want.begin(), want.end());
  for (const auto& r : want) {
    if (r.first >= r.second) continue;
    if (!l.rows.empty() && r.first <= l.rows.back().second)
      l.rows.back().second = std::max(l.rows.back().second, r.second);
    else
      l.rows.push_back(r);
  }
  return l;
}

}  // namespace vouch
