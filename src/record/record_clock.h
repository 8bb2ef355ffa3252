// A record's clock state per arm (record.h's RecordClockState and CheckedRecordClockState),
// stated once for any tree with nlohmann::json's const interface: nlohmann's own, and the
// store's reading of simdjson's (util/dom_json.h) in `history add`.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "clock/clock_state.h"
#include "util/median.h"

namespace vouch::record_clock {

// A leg window's share of the clock state: its pacing clocks, its GPUs' UUIDs, the first GPU's
// driver and the boot id.
struct LegClock {
  std::optional<double> median, mean;
  std::vector<std::string> uuids;
  std::string driver, boot_id;
};

// CheckWindowHeader's test (clock/window.h), as a yes or no.
template <class J>
bool WindowHeaderOk(const J& w) {
  if (!w.is_object() || !w.contains("schema") || !w.contains("schema_version")) return false;
  const auto& schema = w["schema"];
  const auto& version = w["schema_version"];
  return schema.is_string() && schema.template get<std::string>() == "vouch.window" &&
         version.is_number_integer() && version.template get<std::int64_t>() == 1;
}

// The leg clock of a window that passed WindowSummarySchema (in CheckRecordShape), read where
// it lies: WindowSummaryFromJson would walk the schema again and build every field of the
// window, a tenth of `vouch history add`. What it still checks, the header, is checked here
// too; the pacing rule is PacingClockMedian's and PacingClockMean's (the lowest finite clock
// of the busy GPUs).
template <class J>
std::optional<LegClock> CheckedLegClockOf(const J& window) {
  if (!WindowHeaderOk(window)) return std::nullopt;
  const auto& gpus = window["gpus"];
  if (gpus.empty()) return std::nullopt;
  LegClock c;
  auto lowest = [](std::optional<double>& out, double x) {
    if (std::isfinite(x) && (!out || x < *out)) out = x;
  };
  for (const auto& g : gpus) {
    c.uuids.push_back(g["static"].value("uuid", ""));
    const auto& f = g["fold"];
    if (f["busy_readings"].template get<int>() == 0 || !f.contains("sm_mhz")) continue;
    const auto& sm = f["sm_mhz"];
    if (sm.is_null()) continue;
    lowest(c.median, sm.at("median").template get<double>());
    if (sm.contains("mean") && !sm["mean"].is_null())
      lowest(c.mean, sm["mean"].template get<double>());
  }
  c.driver = gpus.front()["static"].value("driver_version", "");
  c.boot_id = window["host"].value("boot_id", "");
  return c;
}

// The clock state of ARM's valid measured legs, each leg's clock by LEG_CLOCK.
template <class J, class F>
ClockState ClockStateOver(const J& rec, const std::string& arm, F leg_clock) {
  ClockState c;
  if (rec.contains("environment") && rec["environment"].is_object())
    c.simulated = rec["environment"].value("simulated", false);
  std::vector<double> med, mean;
  for (const auto& l : rec["legs"]) {
    if (l.value("arm", "") != arm || l.value("role", "") != "measured" || !l.value("valid", false))
      continue;
    auto w = leg_clock(l["window"]);
    // Over several GPUs the slowest busy GPU's clock paces the leg; the GPUs are named by
    // their UUIDs together.
    if (!w || !w->median || !w->mean) continue;
    med.push_back(*w->median);
    mean.push_back(*w->mean);
    c.gpu_uuid = fmt::format("{}", fmt::join(w->uuids, ","));
    c.driver = std::move(w->driver);
    c.boot_id = std::move(w->boot_id);
  }
  if (med.empty()) return c;
  c.valid = true;
  c.sm_median_mhz = MedianOf(med);
  double s = 0;
  for (double x : mean) s += x;
  c.sm_mean_mhz = s / static_cast<double>(mean.size());
  return c;
}

// CheckedRecordClockState of any tree.
template <class J>
ClockState CheckedClockState(const J& rec, const std::string& arm) {
  return ClockStateOver(rec, arm, [](const J& w) { return CheckedLegClockOf(w); });
}

}  // namespace vouch::record_clock
