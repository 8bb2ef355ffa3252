#include "util/number.h"

#include <charconv>
#include <cmath>
#include <string>

#include "util/number_range.h"

namespace vouch {
namespace {

// The token as it is shown in an error: a hostile token may be long.
std::string Shown(std::string_view token) {
  constexpr std::size_t kMax = 40;
  if (token.size() <= kMax) return std::string(token);
  return fmt::format("{}... ({} bytes)", token.substr(0, kMax), token.size());
}

Error NotNumber(std::string_view token, std::string_view what, std::string_view kind) {
  return MakeError("{} '{}' is not {}", what, Shown(token), kind);
}

constexpr std::int64_t kMaxTimeNs = std::int64_t{1} << 62;

template <class Int>
Result<Int> ParseInteger(std::string_view token, std::string_view what, std::string_view kind) {
  std::string_view t = token;
  if (t.size() > 1 && t[0] == '+' && t[1] != '-') t.remove_prefix(1);
  if (!IsIntegerToken(t)) return NotNumber(token, what, kind);
  Int v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range)
    return MakeError("{} '{}' is out of range for {}", what, Shown(token), kind);
  if (ec != std::errc() || p != t.data() + t.size()) return NotNumber(token, what, kind);
  return v;
}

}  // namespace

bool IsIntegerToken(std::string_view token) {
  std::size_t i = !token.empty() && token[0] == '-' ? 1 : 0;
  if (i == token.size()) return false;
  for (; i < token.size(); ++i)
    if (token[i] < '0' || token[i] > '9') return false;
  return true;
}

Result<double> ParseFiniteDouble(std::string_view token, std::string_view what) {
  std::string_view t = token;
  if (t.size() > 1 && t[0] == '+' && t[1] != '-') t.remove_prefix(1);
  // from_chars also reads "inf", "nan" and hex-free "1e5"; only digits may start a number.
  std::size_t first = !t.empty() && t[0] == '-' ? 1 : 0;
  double v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (first >= t.size() || !(std::isdigit(static_cast<unsigned char>(t[first])) || t[first] == '.'))
    return ec == std::errc() && p == t.data() + t.size()  // "nan", "inf", "infinity"
               ? MakeError("{} '{}' is not a finite number", what, Shown(token))
               : NotNumber(token, what, "a number");
  if (ec == std::errc::result_out_of_range) {
    // Overflow is refused; underflow to (almost) zero is a number: 1e-400 reads as 0.
    double d = std::strtod(std::string(t).c_str(), nullptr);
    if (std::isfinite(d) && p == t.data() + t.size()) return d;
    return MakeError("{} '{}' is not a finite number", what, Shown(token));
  }
  if (ec != std::errc() || p != t.data() + t.size()) return NotNumber(token, what, "a number");
  if (!std::isfinite(v)) return MakeError("{} '{}' is not a finite number", what, Shown(token));
  return v;
}

Result<std::int64_t> ParseInt64(std::string_view token, std::string_view what) {
  return ParseInteger<std::int64_t>(token, what, "a 64-bit integer");
}

Result<std::uint64_t> ParseUint64(std::string_view token, std::string_view what) {
  if (!token.empty() && token[0] == '-')
    return MakeError("{} '{}' is negative; a count cannot be", what, Shown(token));
  return ParseInteger<std::uint64_t>(token, what, "an unsigned 64-bit integer");
}

Result<std::int64_t> ParseInt64In(std::string_view token, std::int64_t lo, std::int64_t hi,
                                  std::string_view what) {
  auto v = ParseInt64(token, what);
  if (!v) return v;
  if (*v < lo || *v > hi)
    return MakeError("{}: {} is out of range (must be {} to {})", what, *v, lo, hi);
  return v;
}

std::string DescribeRange(const NumberRange& r) {
  const char* kind = r.integer ? "a whole number" : "a number";
  if (r.lo_open || r.hi_open)
    return fmt::format("{} {} {} and {} {}", kind, r.lo_open ? "above" : "from", r.lo,
                       r.hi_open ? "below" : "up to", r.hi);
  return fmt::format("{} from {} to {}", kind, r.lo, r.hi);
}

Result<double> ParseNumberIn(std::string_view token, const NumberRange& range,
                             std::string_view what) {
  const auto refuse = [&] {
    return MakeError("{} '{}' is not {}", what, Shown(token), DescribeRange(range));
  };
  double v = 0;
  if (range.integer) {
    auto i = ParseInt64(token, what);
    if (!i) return refuse();
    v = static_cast<double>(*i);
    // Past 2^53 a double no longer holds every integer: such a bound is a count never reached.
  } else {
    auto d = ParseFiniteDouble(token, what);
    if (!d) return refuse();
    v = *d;
  }
  if (v < range.lo || v > range.hi || (range.lo_open && v == range.lo) ||
      (range.hi_open && v == range.hi))
    return refuse();
  return v;
}

Result<double> ScaleFinite(double v, double factor, std::string_view what) {
  double r = v * factor;
  if (!std::isfinite(v) || !std::isfinite(factor) || !std::isfinite(r))
    return MakeError("{}: {} x {} is not a finite number", what, v, factor);
  return r;
}

Result<std::int64_t> CheckedInt64(double v, std::string_view what, std::int64_t limit) {
  // Compared as doubles before the cast: a cast of an out-of-range double is undefined.
  if (!std::isfinite(v) || !(std::fabs(v) <= static_cast<double>(limit)))
    return MakeError("{}: {} is out of range (beyond +-{})", what, v, limit);
  return static_cast<std::int64_t>(std::llround(v));
}

Result<std::int64_t> SecondsToNs(double seconds, std::string_view what) {
  const double ns = seconds * 1e9;  // inf (or nan) when SECONDS is out of any range
  if (!(std::fabs(ns) < static_cast<double>(kMaxTimeNs)))
    return MakeError("{}: {} s is beyond +-2^62 ns (146 years): not a real time", what, seconds);
  return static_cast<std::int64_t>(std::llround(ns));
}

Result<std::int64_t> CheckedAdd(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    return MakeError("{}: {} + {} overflows a 64-bit integer", what, a, b);
  return r;
}

}  // namespace vouch
