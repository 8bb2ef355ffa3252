// The verdict of a gate: one pure function of the baseline, the run's metrics (its record's
// valid measured legs) and the rules. `vouch gate -- CMD`, `vouch gate RECORD` and the fleet's
// nodes call it, so a record gets one verdict and one exit code however it is asked. The rules:
//   1. each metric's row against its threshold, with the noise of the baseline's trials and the
//      run's legs (gate/gate.h CompareToBaseline);
//   2. modes: the baseline's trials and the run's legs are tested for modes apart and together
//      (a median over two modes is no process's number, and a default gate of 3 legs cannot be
//      checked alone): a metric that can fail is refused over modes, a warn-only one warned;
//      a pooled split that is exactly baseline against run is a shift, not modes;
//   3. host noise: an undecided wall-clock row says where a quieter figure is.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gate/gate.h"
#include "gputrace/host_noise.h"
#include "util/result.h"

namespace vouch::verdict {

struct GateRules {
  bool allow_modes = false;
  GateOptions options = {};  // the count threshold (--fail-count)
};

// One line per metric and side whose values form two modes.
struct GateModesFound {
  std::vector<std::string> refuse;     // metrics with a fail threshold
  std::vector<std::string> warn;       // warn-only metrics
  std::vector<std::string> unchecked;  // "decode.tok_s: modes not checkable at 3 values"
};
GateModesFound GateModes(const GateReport& report, const Baseline& baseline,
                         const std::map<std::string, CurrentMetric>& now);

struct GateFinal {
  GateReport report;
  GateModesFound modes;
  bool refused = false;  // over modes (not allowed)
  std::optional<gputrace::HostNoise> host_noise;
  nlohmann::json json;  // the gate table with modes and host noise: record.extra.gate
  int exit_code = 0;    // 0 pass/warn, 1 fail, 2 inconclusive, 3 refused over modes
};

// LEGS: the record's legs (record.json's legs[]), for host noise.
GateFinal DecideGate(const Baseline& baseline, const std::map<std::string, CurrentMetric>& now,
                     const ClockState& clock, const EnvLookup& env,
                     const std::optional<GateLook>& look, const nlohmann::json& legs,
                     const GateRules& rules);

inline constexpr int kGateExitModes = 3;

// The design of a record's live gate: a sequential gate keeps its looks (extra.gate.sequential:
// first_legs, legs_per_look, max_legs), so that `gate RECORD` takes the level of the look the
// live gate stopped at; any other gate planned its measured legs as one look (issue 34: one
// verdict per record).
struct GateRecordDesign {
  std::size_t reps = 0, max_reps = 0, look_every = 0, legs = 0;
  // The one-sided level the live gate's last look used (nominal_alpha_one_sided), where kept.
  std::optional<double> level;
};

// The sequential design REC's gate kept, checked (a hostile record's numbers bounded as the
// flags are): nullopt when it kept none; an error naming PATH when what it kept is not a design
// or predates the record keeping its looks.
Result<std::optional<GateRecordDesign>> GateSequentialDesignOfRecord(const nlohmann::json& rec,
                                                                     const std::string& path);

// A RECORD is judged at its live gate's level or not at all: an error naming PATH when the level
// this vouch computes for the record's look (NOW) is not the one the live gate used (a record
// gated before the levels were recalibrated), never a verdict at another level.
Status CheckRecordedLevel(const GateRecordDesign& design, double now, const std::string& path);

// The legs a live gate adds before it may pass (issue 34 item 2c): where the baseline's trials
// of a metric that can fail and the run's legs together are too few values for the modes test
// (stats/modes.h kModesMinLegs), the gate runs the legs the check needs rather than pass over
// modes it could not check. 0 when every such metric is checkable. NOTE (when not 0): "tok_s:
// modes not checkable at 2 values (the baseline's 1 trial and this run's 1 leg): 2 more legs".
// Only a fixed design can need them: a sequential or calibrated one needs 2 trials and 2 legs.
std::size_t GateLegsForModes(const GateReport& report, const Baseline& baseline,
                             const std::map<std::string, CurrentMetric>& now, std::string* note);

// What refusing a gate over modes means, said once after the modes found.
std::string GateModesRefusal();

}  // namespace vouch::verdict
