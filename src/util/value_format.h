// A metric's value as a person reads it, in every output (issue 37: pages showed "1.2e+07"):
// bytes in KiB/MiB/GiB, large numbers in full with thousands separators, small ones in fixed
// notation, six significant digits; never an exponent between 1e-9 and 1e15.
#pragma once

#include <string>
#include <string_view>

namespace vouch {

// The number alone (no unit): 12345678 -> "12,345,678"; 1234.56789 -> "1,234.57";
// 0.0000123456 -> "0.0000123456"; a byte unit ("bytes", "B") -> HumanBytes ("11.8 MiB").
// Non-finite values as "nan", "inf"; outside 1e-9..1e15 the "{:.6g}" form.
std::string FormatValue(double v, std::string_view unit = "");

// FormatValue followed by the unit ("12,345,678 tok/s"); a byte unit's is in the number.
std::string FormatValueWithUnit(double v, std::string_view unit);

}  // namespace vouch
