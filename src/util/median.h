// The median of a sample (the mean of the two middle values for an even count), the one
// definition every module uses.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

namespace vouch {

// nullopt when V is empty.
inline std::optional<double> Median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

// For a V known to be non-empty; 0 for an empty one.
inline double MedianOf(std::vector<double> v) { return Median(std::move(v)).value_or(0.0); }

}  // namespace vouch
