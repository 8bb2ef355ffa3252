// The one checked conversion of a numeric flag (issue 36, util/number_range.h ParseNumberIn):
// the whole token a finite number inside its range, else a usage error (exit 64) naming the
// flag and the range: `--max-spread-pct=nan`, `--output-cap-mib=-1`, `--confidence 2` never
// reach a leg.
#pragma once

#include <CLI/CLI.hpp>

#include "util/number_range.h"

namespace vouch::cli {

CLI::Validator NumberFlag(NumberRange range);
// The common ranges: a percentage, a count, a size or budget that is not negative.
inline NumberRange Percent() { return {0, 100}; }
inline NumberRange Count(double lo, double hi) { return {lo, hi, false, false, true}; }
inline NumberRange NotNegative(double hi) { return {0, hi}; }
// A 64-bit seed: digits only, at most 2^64 - 1 (a double-valued range cannot hold every one;
// vouch draws seeds over the whole range and a fleet hands them on).
inline CLI::Validator Seed64() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const bool digits =
            !s.empty() && s.size() <= 20 && s.find_first_not_of("0123456789") == std::string::npos;
        if (digits && (s.size() < 20 || s <= "18446744073709551615")) return "";
        return "'" + s + "' is not a seed: a whole number from 0 to 18446744073709551615";
      },
      "SEED");
}
// The largest size in GiB a flag takes (a disk budget, a memory floor): a pebibyte.
inline constexpr double kMaxGib = 1 << 20;

}  // namespace vouch::cli
