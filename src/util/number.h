// One checked conversion from text to numbers, used by every reader (SPEC: inputs are
// hostile). A token is a number only when the WHOLE token is one (no "5xyz", no "7.5.5"), it
// is finite (no nan, inf, or a value that overflows the type), and it is in range. Every
// scale (a unit conversion) and every cast from double to an integer is checked the same way.
// Errors read "WHAT 'TOKEN' is not a number": WHAT names the file, line and field read.
#pragma once

#include <cstdint>
#include <string_view>

#include "util/result.h"

namespace vouch {

// A decimal floating-point number: optional sign, digits, fraction, exponent. No leading or
// trailing space (callers trim what their format allows), no hex, no nan/inf, no overflow.
Result<double> ParseFiniteDouble(std::string_view token, std::string_view what);
// A decimal integer (optional sign), the whole token, inside the type's range.
Result<std::int64_t> ParseInt64(std::string_view token, std::string_view what);
Result<std::uint64_t> ParseUint64(std::string_view token, std::string_view what);
// ParseInt64 inside [lo, hi].
Result<std::int64_t> ParseInt64In(std::string_view token, std::int64_t lo, std::int64_t hi,
                                  std::string_view what);
// True when TOKEN is written as an integer (digits, optional sign): a number that must be
// compared as an integer, not through a double.
bool IsIntegerToken(std::string_view token);

// V * FACTOR, refused when either is not finite or the product overflows to inf.
Result<double> ScaleFinite(double v, double factor, std::string_view what);
// V rounded to the nearest integer, refused unless finite and inside [-limit, limit].
Result<std::int64_t> CheckedInt64(double v, std::string_view what,
                                  std::int64_t limit = INT64_MAX / 2);
// Seconds (a wall-clock instant or a duration) as nanoseconds, refused unless finite and
// inside +-2^62 ns (146 years), the range every trace time lies in.
Result<std::int64_t> SecondsToNs(double seconds, std::string_view what);
// A + B, refused on int64 overflow.
Result<std::int64_t> CheckedAdd(std::int64_t a, std::int64_t b, std::string_view what);

}  // namespace vouch
