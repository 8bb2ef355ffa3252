#include "ncu/ncu_derive.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include "util/number.h"
#include "util/strings.h"

namespace vouch::ncu {
namespace stream_detail {

// Metric names to look for, raw page first then details page; the first present wins.
struct Wanted {
  std::optional<double> KernelProfile::*field;
  std::vector<const char*> names;
  const char* required_unit;  // details page: "%" where a name is reused with other units
};

const std::vector<Wanted>& WantedMetrics() {
  static const std::vector<Wanted> w = {
      {&KernelProfile::registers_per_thread,
       {"launch__registers_per_thread", "Registers Per Thread"},
       nullptr},
      {&KernelProfile::achieved_occupancy_percent,
       {"sm__warps_active.avg.pct_of_peak_sustained_active", "Achieved Occupancy"},
       nullptr},
      {&KernelProfile::issue_active_percent,
       {"smsp__issue_active.avg.pct_of_peak_sustained_active",
        "sm__issue_active.avg.pct_of_peak_sustained_active",
        "sm__issue_active.avg.pct_of_peak_sustained_elapsed", "Issue Slots Busy",
        "One or More Eligible"},
       nullptr},
      {&KernelProfile::sm_throughput_percent,
       {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "Compute (SM) Throughput"},
       nullptr},
      {&KernelProfile::memory_throughput_percent,
       {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "Memory Throughput"},
       "%"},
      {&KernelProfile::l2_hit_rate_percent, {"lts__t_sector_hit_rate.pct", "L2 Hit Rate"}, nullptr},
  };
  return w;
}

constexpr const char* kDurationNames[] = {"gpu__time_duration.sum", "Duration"};
constexpr const char* kFrequencyNames[] = {"SM Frequency", "sm__cycles_elapsed.avg.per_second",
                                           "gpc__cycles_elapsed.avg.per_second"};
constexpr const char* kSpillLine = "Local Memory Spilling Requests";
constexpr const char* kSpillParts[] = {"l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
                                       "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum"};
// Stall reasons in warps per issue-active cycle, as the third seed reports them:
// smsp__average_warps_issue_stalled_REASON_per_issue_active.ratio, by prefix and suffix: a
// backtracking matcher (std-library regex) recursed once per character and overflowed the
// stack on a 50 KB name.
constexpr std::string_view kStallHead = "smsp__average_warps_issue_stalled_";
constexpr std::string_view kStallTail = "_per_issue_active.ratio";

bool IsStallName(std::string_view name) {
  return name.size() > kStallHead.size() + kStallTail.size() && name.starts_with(kStallHead) &&
         name.ends_with(kStallTail);
}

bool Consulted(std::string_view name) {
  if (IsStallName(name) || name == kSpillLine) return true;
  for (const auto& w : WantedMetrics())
    for (const char* n : w.names)
      if (name == n) return true;
  for (const auto* list : {&kDurationNames, &kSpillParts})
    for (const char* n : *list)
      if (name == n) return true;
  for (const char* n : kFrequencyNames)
    if (name == n) return true;
  return false;
}

double DurationScale(std::string unit) {
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (unit == "ns" || unit == "nsecond" || unit == "nsec" || unit.empty()) return 1;
  if (unit == "us" || unit == "usecond" || unit == "usec") return 1e3;
  if (unit == "ms" || unit == "msecond" || unit == "msec") return 1e6;
  if (unit == "s" || unit == "second") return 1e9;
  return 0;  // unknown
}

void Derive(KernelProfile& k, const KernelMetrics& km, std::vector<std::string>* warnings) {
  auto find = [&](std::string_view name) { return km.Find(name); };
  for (const auto& w : WantedMetrics()) {
    for (const char* n : w.names) {
      const Metric* m = find(n);
      if (!m) continue;
      if (w.required_unit && !m->unit.empty() && m->unit != w.required_unit) continue;
      if (auto v = ParseNcuNumber(m->value)) {
        if (*v < 0) {
          warnings->push_back(
              fmt::format("kernel {}: '{}' is negative ({}); left out", k.id, n, m->value));
          break;
        }
        k.*(w.field) = *v;
        break;
      }
      if (!Trim(m->value).empty() && m->value != "n/a" && m->value != "N/A")
        warnings->push_back(
            fmt::format("kernel {}: '{}' is not a number ('{}'); left out", k.id, n, m->value));
    }
  }
  for (const char* n : kDurationNames) {
    const Metric* m = find(n);
    if (!m) continue;
    auto v = ParseNcuNumber(m->value);
    double scale = DurationScale(m->unit);
    if (!v || *v < 0) {
      // A duration that is "nan", text or negative is no time: never shown as one.
      warnings->push_back(
          fmt::format("kernel {}: duration '{}' is not a non-negative number; "
                      "duration left out",
                      k.id, m->value));
      break;
    }
    if (v && scale > 0) {
      // 1e300 s is finite, its nanoseconds are not: checked after the scale, never "inf".
      auto ns = ScaleFinite(*v, scale,
                            fmt::format("kernel {}: duration '{} {}'", k.id, m->value, m->unit));
      if (ns)
        k.duration_ns = *ns;
      else
        warnings->push_back(ns.error().message + "; duration left out");
      break;
    }
    if (v && scale == 0)
      warnings->push_back(fmt::format("kernel {}: duration unit '{}' is unknown; duration left out",
                                      k.id, m->unit));
  }
  for (const char* n : kFrequencyNames) {
    const Metric* m = find(n);
    if (!m) continue;
    std::string u = m->unit;
    for (auto& c : u) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    double to_mhz = u == "hz" || u == "cycle/second"     ? 1e-6
                    : u == "khz" || u == "cycle/msecond" ? 1e-3
                    : u == "mhz" || u == "cycle/usecond" ? 1
                    : u == "ghz" || u == "cycle/nsecond" ? 1e3
                                                         : 0;
    if (auto v = ParseNcuNumber(m->value); v && to_mhz > 0) {
      auto mhz = ScaleFinite(*v, to_mhz,
                             fmt::format("kernel {}: '{}' ({} {})", k.id, n, m->value, m->unit));
      if (mhz && *mhz >= 0)
        k.sm_frequency_mhz = *mhz;
      else
        warnings->push_back(
            (mhz ? fmt::format("kernel {}: '{}' is negative ({})", k.id, n, m->value)
                 : mhz.error().message) +
            "; SM frequency left out");
      break;
    }
  }
  // Spills: local-memory requests (loads + stores), or the details page's own line.
  if (const Metric* m = find(kSpillLine)) {
    k.local_spilling_requests = ParseNcuNumber(m->value);
  } else {
    std::optional<double> sum;
    for (const char* n : kSpillParts)
      if (const Metric* lm = find(n))
        if (auto v = ParseNcuNumber(lm->value)) sum = sum.value_or(0) + *v;
    if (sum && !std::isfinite(*sum)) {
      warnings->push_back(fmt::format(
          "kernel {}: local-memory requests add up to more than a double holds; left out", k.id));
      sum.reset();
    }
    k.local_spilling_requests = sum;
  }
  for (const auto* e : km.touched()) {
    const std::string& name = e->first;
    if (!IsStallName(name)) continue;
    std::string reason =
        name.substr(kStallHead.size(), name.size() - kStallHead.size() - kStallTail.size());
    if (auto v = ParseNcuNumber(e->second.m.value)) k.top_stalls.push_back({std::move(reason), *v});
  }
  std::sort(k.top_stalls.begin(), k.top_stalls.end(), [](const Stall& a, const Stall& b) {
    return a.warps_per_issue_active != b.warps_per_issue_active
               ? a.warps_per_issue_active > b.warps_per_issue_active
               : a.reason < b.reason;
  });
  if (k.top_stalls.size() > 5) k.top_stalls.resize(5);
}

}  // namespace stream_detail
}  // namespace vouch::ncu
