#include "stats/percentiles.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <cmath>

namespace vouch {
namespace {

// P(Binomial(n, p) >= k).
double AtLeast(std::size_t n, double p, std::size_t k) {
  if (k == 0) return 1;
  if (k > n) return 0;
  boost::math::binomial_distribution<double> b(static_cast<double>(n), p);
  return boost::math::cdf(boost::math::complement(b, static_cast<double>(k - 1)));
}

bool IsVllm(const Metric& m) { return m.source.rfind("vllm ", 0) == 0; }

}  // namespace

std::size_t MinRequestsForPercentile(double q, double confidence, std::size_t k) {
  if (!(q > 0 && q < 1) || !(confidence > 0 && confidence < 1) || k == 0) return 0;
  const double tail = std::min(q, 1 - q);  // the chance one request lies beyond the quantile
  // P(at least k beyond) grows with n: double, then bisect.
  std::size_t hi = k;
  while (AtLeast(hi, tail, k) < confidence) {
    if (hi > (std::size_t{1} << 40)) return 0;
    hi *= 2;
  }
  std::size_t lo = k;
  while (lo < hi) {
    std::size_t mid = lo + (hi - lo) / 2;
    if (AtLeast(mid, tail, k) >= confidence)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

std::optional<double> PercentileOfName(std::string_view name) {
  if (name.size() < 2 || name[0] != 'p') return std::nullopt;
  std::size_t us = name.find('_');
  if (us == name.npos || us < 2) return std::nullopt;
  std::string_view num = name.substr(1, us - 1);
  if (num.find_first_not_of("0123456789.") != num.npos || num.front() == '.' || num.back() == '.' ||
      std::count(num.begin(), num.end(), '.') > 1)
    return std::nullopt;
  double pct = 0, scale = 1;
  bool frac = false;
  for (char c : num) {
    if (c == '.') {
      frac = true;
      continue;
    }
    if (frac) scale /= 10;
    pct = frac ? pct + (c - '0') * scale : pct * 10 + (c - '0');
  }
  if (!(pct > 0 && pct < 100)) return std::nullopt;
  return pct / 100;
}

std::vector<std::string> ServingPercentileWarnings(const std::vector<std::vector<Metric>>& legs,
                                                   const std::vector<int>& numbers,
                                                   std::optional<long long> min_requests,
                                                   double confidence) {
  std::vector<std::string> out;
  std::optional<double> fewest;
  std::vector<int> short_legs;
  // "p99" -> (q, the metric names), in the order first seen.
  std::vector<std::pair<std::string, std::pair<double, std::vector<std::string>>>> levels;
  for (std::size_t i = 0; i < legs.size(); ++i) {
    const Metric* done = nullptr;
    for (const auto& m : legs[i])
      if (m.name == "completed" && IsVllm(m) && !m.is_text()) done = &m;
    if (!done) continue;
    fewest = fewest ? std::min(*fewest, done->value) : done->value;
    if (min_requests && done->value < static_cast<double>(*min_requests))
      short_legs.push_back(i < numbers.size() ? numbers[i] : static_cast<int>(i) + 1);
    for (const auto& m : legs[i]) {
      if (!IsVllm(m) || m.is_text()) continue;
      auto q = PercentileOfName(m.name);
      if (!q) continue;
      std::string level = m.name.substr(0, m.name.find('_'));
      auto it = std::find_if(levels.begin(), levels.end(),
                             [&](const auto& l) { return l.first == level; });
      if (it == levels.end()) {
        levels.push_back({level, {*q, {}}});
        it = levels.end() - 1;
      }
      auto& names = it->second.second;
      if (std::find(names.begin(), names.end(), m.name) == names.end()) names.push_back(m.name);
    }
  }
  if (!fewest) return out;
  const std::string conf = fmt::format("{:g}", confidence * 100);
  for (const auto& [level, qn] : levels) {
    const std::size_t need = MinRequestsForPercentile(qn.first, confidence);
    if (need == 0 || *fewest >= static_cast<double>(need)) continue;
    out.push_back(fmt::format(
        "serving percentiles: {} ({}) from {} completed requests is not a {}: at {} % "
        "confidence a {} needs at least {} requests per leg (then the most extreme request "
        "bounds it: the order-statistic bound of MLPerf LoadGen's early stopping); quote it as "
        "the extreme of {}, or run longer",
        level, fmt::join(qn.second, ", "), fmt::format("{:g}", *fewest), level, conf, level, need,
        fmt::format("{:g}", *fewest)));
  }
  if (!short_legs.empty())
    out.push_back(fmt::format(
        "serving run too short: leg{} {} completed fewer requests than --min-requests {} "
        "(fewest: {})",
        short_legs.size() == 1 ? "" : "s", fmt::join(short_legs, ", "), *min_requests,
        fmt::format("{:g}", *fewest)));
  return out;
}

}  // namespace vouch
