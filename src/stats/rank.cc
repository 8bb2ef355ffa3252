#include "stats/rank.h"

#include <algorithm>
#include <cmath>

namespace vouch {

double SeparationP(std::size_t m, std::size_t n) {
  if (m == 0 || n == 0) return 1;
  if (m + n <= 60) {
    // C(m + n, m) exactly (every partial product is a binomial, an integer below 2^60).
    double c = 1;
    const std::size_t k = std::min(m, n);
    for (std::size_t i = 1; i <= k; ++i)
      c = c * static_cast<double>(m + n - k + i) / static_cast<double>(i);
    return std::min(1.0, 2 / c);
  }
  // C(m + n, m) in logs: lgamma stays finite far past where the binomial overflows a double.
  const double log_c = std::lgamma(static_cast<double>(m + n) + 1) -
                       std::lgamma(static_cast<double>(m) + 1) -
                       std::lgamma(static_cast<double>(n) + 1);
  return std::min(1.0, 2 * std::exp(-log_c));
}

std::optional<Separation> CompleteSeparation(std::span<const double> x, std::span<const double> y) {
  if (x.empty() || y.empty()) return std::nullopt;
  auto finite = [](double v) { return std::isfinite(v); };
  if (!std::all_of(x.begin(), x.end(), finite) || !std::all_of(y.begin(), y.end(), finite))
    return std::nullopt;
  const auto [xmin, xmax] = std::minmax_element(x.begin(), x.end());
  const auto [ymin, ymax] = std::minmax_element(y.begin(), y.end());
  Separation s;
  s.m = x.size();
  s.n = y.size();
  double lower = 0, upper = 0;
  if (*ymin > *xmax) {
    s.direction = +1;
    lower = *xmax;
    upper = *ymin;
  } else if (*ymax < *xmin) {
    s.direction = -1;
    lower = *ymax;
    upper = *xmin;
  } else {
    return std::nullopt;
  }
  if (lower > 0) s.gap_log = std::log(upper / lower);
  s.p_two_sided = SeparationP(s.m, s.n);
  return s;
}

}  // namespace vouch
