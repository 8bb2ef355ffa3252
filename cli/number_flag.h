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
// The largest size in GiB a flag takes (a disk budget, a memory floor): a pebibyte.
inline constexpr double kMaxGib = 1 << 20;

}  // namespace vouch::cli
