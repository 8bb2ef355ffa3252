#include "gate/gate_count.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

#include "gate/noise.h"
#include "util/strings.h"

namespace vouch {
namespace {

// The increase in the bad direction: a lower-is-better count (failed requests) gets worse
// when it grows, a higher-is-better one when it shrinks.
double BadIncrease(const BaselineMetric& m, double now) {
  return m.better == Better::kHigher ? m.value - now : now - m.value;
}

std::string CountText(double v) { return fmt::format("{:g}", v); }

}  // namespace

bool IsCountMetric(std::string_view name, std::string_view unit) {
  static constexpr std::array<std::string_view, 5> kUnits = {"count", "requests", "errors",
                                                             "failures", "preemptions"};
  for (auto u : kUnits)
    if (unit == u) return true;
  if (!unit.empty()) return false;
  for (auto tail : {"failed", "errors", "failures", "preemptions"})
    if (EndsWith(name, tail)) return true;
  return false;
}

std::string CountChangeText(double change) { return fmt::format("{:+g} (count)", change); }

void DecideZeroBaselineCount(const BaselineMetric& m, double now, std::optional<double> fail_count,
                             GateRow* row) {
  const double bad = BadIncrease(m, now);
  row->change_count = now - m.value;
  row->fail_count = fail_count;
  const bool any_threshold = m.fail_pct || m.warn_pct || fail_count;
  if (bad <= 0) {
    row->verdict = GateVerdict::kPass;
    row->note = now == 0 ? "0 -> 0: compared as a count" : "";
  } else if (fail_count && bad > *fail_count) {
    row->verdict = GateVerdict::kFail;
    row->note = fmt::format("0 -> {}: beyond the count threshold of {}", CountText(now),
                            CountText(*fail_count));
  } else if (any_threshold) {
    row->verdict = GateVerdict::kWarn;
    row->note = fail_count
                    ? fmt::format("0 -> {}: a count of 0 warns on any increase; it fails beyond {}",
                                  CountText(now), CountText(*fail_count))
                    : fmt::format(
                          "0 -> {}: a count of 0 warns on any increase; to fail past N more, give "
                          "--fail-count N",
                          CountText(now));
  } else {
    row->verdict = GateVerdict::kPass;
    row->note = "no threshold";
  }
}

void ApplyCountThreshold(const BaselineMetric& m, double now, std::optional<double> fail_count,
                         GateRow* row) {
  row->change_count = now - m.value;
  row->fail_count = fail_count;
  if (!fail_count) return;
  const double bad = BadIncrease(m, now);
  if (bad > *fail_count && row->verdict != GateVerdict::kFail) {
    row->verdict = GateVerdict::kFail;
    row->note = fmt::format("{} -> {}: beyond the count threshold of {}", CountText(m.value),
                            CountText(now), CountText(*fail_count));
    row->mde_pct.reset();
  }
}

}  // namespace vouch
