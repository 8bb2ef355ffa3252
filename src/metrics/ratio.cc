#include "metrics/ratio.h"

#include <fmt/format.h>

#include <cmath>

namespace vouch {

std::string_view QuantityOf(std::string_view unit) {
  if (unit == "s" || unit == "ms" || unit == "us" || unit == "ns" || unit == "min") return "time";
  if (unit.size() > 2 && unit.substr(unit.size() - 2) == "/s") return "throughput";
  return "value";
}

std::string_view RatioWord(double ratio, Better better, std::string_view unit) {
  if (better == Better::kNone || !std::isfinite(ratio)) return "";
  // A ratio printed as 1.0000 never reads "faster" or "slower": the word follows the digits.
  if (std::abs(ratio - 1) < 5e-5) return "same";
  bool up = ratio > 1;
  bool good = better == Better::kHigher ? up : !up;
  bool speed = QuantityOf(unit) != "value";
  if (speed) return good ? "faster" : "slower";
  return good ? "better" : "worse";
}

std::string RatioReading(std::string_view num, std::string_view den, double ratio, Better better,
                         std::string_view unit) {
  std::string_view word = RatioWord(ratio, better, unit);
  std::string out = fmt::format("{}/{} {} {:.4f}", num, den, QuantityOf(unit), ratio);
  if (word == "same")
    out += " (equal)";
  else if (!word.empty())
    out += fmt::format(" ({} {})", num, word);
  return out;
}

}  // namespace vouch
