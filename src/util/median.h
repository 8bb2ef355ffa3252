// The median of a sample (the mean of the two middle values for an even count), the one
// definition every module uses.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace vouch {

// nullopt when V is empty.
inline std::optional<double> Median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  if (n % 2 == 1) return v[n / 2];
  // Two values near DBL_MAX sum to infinity; halved first, they do not (the same bits
  // otherwise: halving is exact, so the sum's one rounding is the same).
  const double a = v[n / 2 - 1], b = v[n / 2], sum = a + b;
  return std::isfinite(sum) ? sum / 2.0 : a / 2.0 + b / 2.0;
}

// For a V known to be non-empty; 0 for an empty one.
inline double MedianOf(std::vector<double> v) { return Median(std::move(v)).value_or(0.0); }

}  // namespace vouch
