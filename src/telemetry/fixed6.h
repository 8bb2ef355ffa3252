// X with six decimals exactly as fmt's "{:.6f}" writes it, without fmt's float formatter: the
// sampler writes two such times a sample, and formatting them was a fifth of a poll round's
// instructions (callgrind, issue 24). The whole part and the microseconds are written as
// integers; the microseconds come from (X - whole) * 1e6, which is within 1e-9 of exact (the
// subtraction is exact, the product's error under half an ulp of 1e6), so the rounding it gives
// is fmt's wherever the exact fraction is more than 1e-6 from a half. Near a half, and for a
// negative (-0 included), huge or non-finite X, fmt itself writes it.
#pragma once

#include <fmt/compile.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdint>

namespace vouch {

template <class It>
It FormatFixed6(It it, double x) {
  if (std::signbit(x) || !(x < 1e12)) return fmt::format_to(it, FMT_COMPILE("{:.6f}"), x);
  const double whole = std::floor(x);
  const double scaled = (x - whole) * 1e6;
  const double below = std::floor(scaled);
  const double rest = scaled - below;
  if (std::fabs(rest - 0.5) < 1e-6) return fmt::format_to(it, FMT_COMPILE("{:.6f}"), x);
  auto w = static_cast<std::uint64_t>(whole);
  auto us = static_cast<std::uint32_t>(below) + (rest > 0.5 ? 1u : 0u);
  if (us == 1000000) ++w, us = 0;
  return fmt::format_to(it, FMT_COMPILE("{}.{:06}"), w, us);
}

}  // namespace vouch
