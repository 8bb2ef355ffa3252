#include "stats/percentiles.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <cmath>

#include "stats/serving_load.h"

namespace vouch {
namespace {

// P(Binomial(n, p) >= k).
double AtLeast(std::size_t n, double p, std::size_t k) {
  if (k == 0) return 1;
  if (k > n) return 0;
  boost::math::binomial_distribution<double> b(static_cast<double>(n), p);
  return boost::math::cdf(boost::math::complement(b, static_cast<double>(k - 1)));
}

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
  if (std::size_t slash = name.rfind('/'); slash != name.npos) name.remove_prefix(slash + 1);
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

std::size_t UpperBoundOrder(std::size_t n, double q, double confidence) {
  if (n == 0 || !(q > 0 && q < 1) || !(confidence > 0 && confidence < 1)) return 0;
  boost::math::binomial_distribution<double> below(static_cast<double>(n), q);
  // P(Binomial(n, q) < k) = cdf(k - 1) grows with k: the smallest k that reaches CONFIDENCE.
  auto reaches = [&](std::size_t k) {
    return boost::math::cdf(below, static_cast<double>(k - 1)) >= confidence;
  };
  if (!reaches(n)) return 0;
  std::size_t lo = 1, hi = n;
  while (lo < hi) {
    std::size_t mid = lo + (hi - lo) / 2;
    if (reaches(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

double QuantileBoundedBySlowest(std::size_t n, double confidence) {
  if (n == 0 || !(confidence > 0 && confidence < 1)) return 0;
  return std::pow(1 - confidence, 1.0 / static_cast<double>(n));
}

std::string GroupedCount(std::size_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

namespace {

// "1st", "2nd", "3rd", "11th", "22nd".
std::string OrdinalText(std::size_t k) {
  const char* suffix = "th";
  if (k % 100 < 11 || k % 100 > 13) {
    if (k % 10 == 1) suffix = "st";
    if (k % 10 == 2) suffix = "nd";
    if (k % 10 == 3) suffix = "rd";
  }
  return fmt::format("{}{}", k, suffix);
}

// "p91.2" for 0.912: a percentile level to three significant digits, never rounded up.
std::string PercentileLevel(double q) {
  double pct = std::floor(q * 1000 + 1e-9) / 10;
  return fmt::format("p{:g}", pct);
}

// "ttft" of "p99_ttft_ms": what the percentile is of.
std::string WhatOf(const std::string& name) {
  std::string w = name.substr(name.find('_') + 1);
  if (w.size() > 3 && w.compare(w.size() - 3, 3, "_ms") == 0) w.resize(w.size() - 3);
  return w;
}

std::string ValueText(double v, const std::string& unit) {
  return fmt::format("{:.5g}{}{}", v, unit.empty() ? "" : " ", unit);
}

}  // namespace

namespace {

// "constant@6.00/" of a GuideLLM benchmark's metric, "" of a result with one run.
std::string PrefixOf(const std::string& name) {
  std::size_t slash = name.rfind('/');
  return slash == std::string::npos ? std::string() : name.substr(0, slash + 1);
}

// The refusals of one run of a result (its metrics named PREFIX...): lines into OUT, the
// refused names into REFUSED.
void RefuseInRun(const std::string& prefix, const std::vector<Metric>& metrics,
                 std::optional<long long> min_requests, double confidence,
                 std::vector<std::string>* out, std::vector<std::string>* refused) {
  const Metric* done = nullptr;
  for (const auto& m : metrics)
    if (m.name == prefix + "completed" && IsServingMetric(m) && !m.is_text()) done = &m;
  if (!done || !(done->value >= 0)) return;
  const auto n = static_cast<std::size_t>(done->value);
  const bool short_run = min_requests && done->value < static_cast<double>(*min_requests);
  // "p99" -> (q, the metrics of that level), in the order first seen.
  std::vector<std::pair<std::string, std::pair<double, std::vector<const Metric*>>>> levels;
  for (const auto& m : metrics) {
    if (!IsServingMetric(m) || m.is_text() || PrefixOf(m.name) != prefix) continue;
    auto q = PercentileOfName(m.name);
    if (!q) continue;
    std::string level = m.name.substr(0, m.name.find('_', prefix.size()));
    auto it =
        std::find_if(levels.begin(), levels.end(), [&](const auto& l) { return l.first == level; });
    if (it == levels.end()) {
      levels.push_back({level, {*q, {}}});
      it = levels.end() - 1;
    }
    it->second.second.push_back(&m);
  }
  const std::string conf = fmt::format("{:g}", confidence * 100);
  for (const auto& [level, qm] : levels) {
    const auto& [q, ms] = qm;
    const std::size_t need = MinRequestsForPercentile(q, confidence);
    const bool unsupported = need > 0 && n < need;
    if (!unsupported && !short_run) continue;
    std::vector<std::string> names, bounds;
    for (const Metric* m : ms) names.push_back(m->name);
    std::string line =
        fmt::format("{} of {} completed requests is not a figure ({} not quoted): ", level,
                    GroupedCount(n), fmt::join(names, ", "));
    const std::string bare = level.substr(prefix.size());
    if (unsupported) {
      line += fmt::format("a {} at {} % confidence needs at least {} requests", bare, conf,
                          GroupedCount(need));
      if (n == 0) {
        line += "; no request completed";
      } else {
        const double qs = QuantileBoundedBySlowest(n, confidence);
        line += fmt::format("; the slowest of {} bounds {} at {} % (and the {} at only {:.3g} %)",
                            GroupedCount(n), PercentileLevel(qs), conf, bare,
                            100 * (1 - std::pow(q, static_cast<double>(n))));
        for (const Metric* m : ms) {
          const std::string what = WhatOf(m->name.substr(prefix.size()));
          const Metric* slowest = nullptr;
          for (const auto& x : metrics)
            if (x.name == prefix + "max_" + what + "_ms" && IsServingMetric(x) && !x.is_text())
              slowest = &x;
          if (slowest)
            bounds.push_back(
                fmt::format("{} <= {}", what, ValueText(slowest->value, slowest->unit)));
        }
        line += bounds.empty() ? std::string(
                                     ": the result holds no per-request times (vllm bench "
                                     "serve --save-detailed writes them)")
                               : fmt::format(": {}", fmt::join(bounds, ", "));
      }
    } else {
      const std::size_t k = UpperBoundOrder(n, q, confidence);
      line += fmt::format(
          "fewer than --min-requests {}; what {} requests do support: the {} largest bounds the "
          "{} at {} %",
          *min_requests, GroupedCount(n), OrdinalText(n - k + 1), bare, conf);
    }
    out->push_back(line);
    refused->insert(refused->end(), names.begin(), names.end());
  }
}

}  // namespace

std::vector<std::string> RefuseUnsupportedPercentiles(std::vector<Metric>* metrics,
                                                      std::optional<long long> min_requests,
                                                      double confidence) {
  std::vector<std::string> out, refused, prefixes;
  for (const auto& m : *metrics)
    if (IsServingMetric(m) && !m.is_text() && m.name == PrefixOf(m.name) + "completed")
      prefixes.push_back(PrefixOf(m.name));
  for (const auto& p : prefixes) RefuseInRun(p, *metrics, min_requests, confidence, &out, &refused);
  std::erase_if(*metrics, [&](const Metric& m) {
    return IsServingMetric(m) && std::find(refused.begin(), refused.end(), m.name) != refused.end();
  });
  return out;
}

}  // namespace vouch
