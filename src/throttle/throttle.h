// Throttling from the driver's own counters (issue 38): the violation time per cause between
// a window's two edge readings (telemetry/edge.h), as seconds and as a share of the region,
// and the policy rule that makes a window invalid when a cause held the clocks down for more
// than a share of it, naming the counter that decided. Pure: a fold of two readings.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/edge.h"
#include "util/result.h"

namespace vouch {

struct CauseTime {
  ThrottleCause cause = ThrottleCause::kPower;
  double seconds = 0;  // violation time between the edges
  double share = 0;    // of the region, in [0, 1] (a counter a little past the edges is clamped)
};

struct ThrottleFold {
  double region_s = 0;             // between the two edge readings
  std::vector<CauseTime> causes;   // every counter read at both edges, in NVML's order
  std::vector<std::string> notes;  // counters not read, a counter that went backwards
  std::optional<double> power_instant_w_begin, power_instant_w_end;
  std::optional<double> power_average_w_begin, power_average_w_end;
};

// Whether a cause is a throttle the rule judges: every cause but low utilization (idle time,
// not a limiter) and the two totals, below application clocks and below base clocks (both
// include that idle time: an H100's idle clock, 345 MHz, is below base).
bool JudgedCause(ThrottleCause c);
// "power-capped", "thermally throttled", "held by sync boost", "board-limited",
// "at low utilization", "reliability-limited", "below application clocks", "below base clocks"
std::string CausePhrase(ThrottleCause c);

// nullopt when no counter was read at both edges, or the edges are not in order.
std::optional<ThrottleFold> FoldEdges(const EdgeReading& begin, const EdgeReading& end);
// The judged cause with the largest share; nullopt when none was read.
std::optional<CauseTime> WorstJudgedCause(const ThrottleFold& f);
// "power-capped 98.9 % of the region (9.90 s of 10.01 s, NVML_PERF_POLICY_POWER)"
std::string DescribeCause(const CauseTime& c, double region_s);
// The reason a window is refused when the worst judged share is above MAX_SHARE (0..1):
// "power-capped 98.9 % of the region (...), above the policy's 50.0 % (--max-throttled-pct):
// the driver held the clocks down for most of the window; ..."; nullopt when within it.
std::optional<std::string> ThrottleRefusal(const ThrottleFold& f, double max_share);
// One line for the window's text: "driver counters over 10.01 s: power-capped 98.9 % (9.90 s),
// thermal 0.0 %, ...; power 612 W instant / 598 W 1-s average at the end".
std::string RenderThrottleLine(const ThrottleFold& f);

nlohmann::json ToJson(const ThrottleFold& f);
class JsonSchema;
// Every field the reader uses; a cause key it does not know (a newer vouch's) is skipped.
const JsonSchema& ThrottleFoldSchema();
Result<ThrottleFold> ThrottleFoldFromJson(const nlohmann::json& j, const std::string& where);
// The same of J that passed ThrottleFoldSchema: not checked again.
ThrottleFold ThrottleFoldFromCheckedJson(const nlohmann::json& j);

}  // namespace vouch
