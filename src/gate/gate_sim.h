// Simulated gates of known truth (lognormal legs, seeded), through the real decision
// functions: MakeBaseline, BaselineTrialsToResolve, CompareToBaseline and the sequential
// design. For the error-rate tests and bench/gate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <tuple>

#include "gate/gate.h"

namespace vouch {

struct GateSimSetup {
  double noise_sd_pct = 2;  // log sd of every leg and trial, in percent
  // The true change in the bad direction, as a factor: +8 is 1.08x worse (a lower-is-better
  // headline 8 % higher, a higher-is-better one 1/1.08 of the baseline), the gate's own scale.
  double change_pct = 0;
  Better better = Better::kHigher;  // the headline's direction
  double fail_pct = 3;              // the headline's fail threshold
  std::size_t trials = 5;           // the baseline's planned trials (--trials)
  std::size_t max_trials = 0;       // baseline --max-trials; 0: the fixed design (no growth)
  std::size_t reps = 3;             // the gate's planned legs (--reps)
  std::size_t max_reps = 0;         // gate --max-reps; 0: the fixed design (no further legs)
  std::size_t look_every = 0;       // gate --look-every; 0: every --reps legs
};

struct GateSimOutcome {
  GateVerdict verdict = GateVerdict::kPass;
  std::size_t trials = 0;  // baseline trials run
  std::size_t legs = 0;    // gate legs run
};

// Designs are cached by baseline trials (the calibration is the costly part).
class GateSimulator {
 public:
  explicit GateSimulator(std::uint64_t seed) : rng_(seed) {}
  // One simulated baseline and gate (the headline "tps", in the setup's direction).
  GateSimOutcome Run(const GateSimSetup& setup);
  // The sequential gate's alpha spending (the gate's is Pocock).
  SpendingFunction spending = GateSequentialPlan{}.spending;
  // The design the gate on B runs under (GateDesignFor: sequential, one look calibrated on
  // the growth rule, or none), cached by the baseline's trials, first stage and growth cap.
  const GateSequentialDesign* Design(const Baseline& b, const GateSimSetup& setup);

 private:
  std::mt19937_64 rng_;
  std::map<std::tuple<std::size_t, int, int>, std::optional<GateSequentialDesign>> designs_;
  double Normal();
};

}  // namespace vouch
