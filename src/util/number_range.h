// The numbers a flag (or a field) may take, and the one checked conversion into them (issue
// 36): every numeric flag of vouch is read through ParseNumberIn with its range
// (cli/number_flag.h): nan, inf, -1, or 2 where a fraction is meant are refused naming the
// flag, never taken as given. The conversion itself is util/number.h's.
#pragma once

#include <string>
#include <string_view>

#include "util/result.h"

namespace vouch {

// From LO to HI, an open end excluding its bound, and only whole numbers when INTEGER.
struct NumberRange {
  double lo = 0, hi = 0;
  bool lo_open = false, hi_open = false;
  bool integer = false;
};
// RANGE in words: "a number from 0 to 100", "a whole number from 1 to 1000", "a number above
// 0 and below 1".
std::string DescribeRange(const NumberRange& range);
// ParseFiniteDouble (or, for an integer range, ParseInt64) of TOKEN, inside RANGE; the error
// reads "WHAT 'TOKEN' is not RANGE in words".
Result<double> ParseNumberIn(std::string_view token, const NumberRange& range,
                             std::string_view what);

}  // namespace vouch
