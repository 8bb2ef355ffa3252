#include "util/value_format.h"

#include <fmt/format.h>

#include <cmath>

#include "util/strings.h"

namespace vouch {
namespace {

bool ByteUnit(std::string_view unit) { return unit == "bytes" || unit == "B" || unit == "byte"; }

// "1234567.891" -> "1,234,567.891" (the integer part grouped).
std::string Group(std::string s) {
  const size_t start = s[0] == '-' ? 1 : 0;
  size_t end = s.find('.');
  if (end == std::string::npos) end = s.size();
  for (size_t at = end; at > start + 3; at -= 3) s.insert(at - 3, ",");
  return s;
}

}  // namespace

std::string FormatValue(double v, std::string_view unit) {
  if (!std::isfinite(v)) return fmt::format("{}", v);
  if (ByteUnit(unit)) return v < 0 ? "-" + HumanBytes(-v) : HumanBytes(v);
  const double a = std::fabs(v);
  if (a == 0) return "0";
  if (a < 1e-9 || a >= 1e15) return fmt::format("{:.6g}", v);
  // Six significant digits, in fixed notation: as many decimals as they need (none past them).
  const int magnitude = static_cast<int>(std::floor(std::log10(a)));
  const int decimals = std::max(0, 5 - magnitude);
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return Group(s);
}

std::string FormatValueWithUnit(double v, std::string_view unit) {
  if (ByteUnit(unit) || unit.empty()) return FormatValue(v, unit);
  return fmt::format("{} {}", FormatValue(v, unit), unit);
}

}  // namespace vouch
