// Modes across process spawns (src/stats/modes.h) and serving percentiles
// (src/stats/percentiles.h), found in the legs a command ran or read, in the words gate, ab
// and run print.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gate/gate.h"
#include "record/leg_runner.h"

namespace vouch::cli {

// One line per metric and side whose values form two modes: "decode.tok_s: this run's legs
// show two modes: 33.1 tok/s in 5 legs, 26.0 in 4", on the rows that compare (not skipped,
// missing or in error), on the run's legs and on the baseline's trials. A metric that can fail
// the gate (it has a fail threshold) is refused over its modes; a warn-only metric cannot
// fail it, so its modes are said as a warning and do not stop the gate.
struct GateModesFound {
  std::vector<std::string> refuse;  // metrics with a fail threshold
  std::vector<std::string> warn;    // warn-only metrics
};
GateModesFound GateModes(const GateReport& report, const Baseline& baseline,
                         const std::map<std::string, CurrentMetric>& now);

// Ab: the headline over each arm's valid measured legs ("arm A's legs show two modes: ...").
std::vector<std::string> ArmModes(const std::vector<LegRecord>& legs, const std::string& metric,
                                  const std::vector<std::string>& arms);

// What refusing means, said once after the lines above.
std::string ModesRefusal(std::string_view what);

// The serving lines of a run's valid measured legs: each leg's note of what it does not quote
// and why (a saturated load's latencies, a percentile its count cannot support), once with
// the legs it holds for; and the legs that completed fewer requests than MIN_REQUESTS.
std::vector<std::string> LegPercentileWarnings(const std::vector<LegRecord>& legs,
                                               std::optional<long long> min_requests);

}  // namespace vouch::cli
