// Simulated gates of known truth (lognormal legs, seeded), through the real decision
// functions: MakeBaseline, BaselineTrialsToResolve, CompareToBaseline and the sequential
// design. For the error-rate tests and bench/gate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <random>

#include "gate/gate.h"

namespace vouch {

struct GateSimSetup {
  double noise_sd_pct = 2;     // log sd of every leg and trial, in percent
  double change_pct = 0;       // the true change in the bad direction (+8: 8 % slower)
  double fail_pct = 3;         // the headline's fail threshold
  std::size_t trials = 5;      // the baseline's planned trials (--trials)
  std::size_t max_trials = 0;  // baseline --max-trials; 0: the fixed design (no growth)
  std::size_t reps = 3;        // the gate's planned legs (--reps)
  std::size_t max_reps = 0;    // gate --max-reps; 0: the fixed design (no further legs)
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
  // One simulated baseline and gate (the headline "tps", higher is better).
  GateSimOutcome Run(const GateSimSetup& setup);
  // The sequential gate's alpha spending (the gate's is Pocock).
  SpendingFunction spending = GateSequentialPlan{}.spending;
  // FIRST: the baseline's first stage when it grew (0: it did not).
  const GateSequentialDesign* Design(std::size_t trials, std::size_t first,
                                     const GateSimSetup& setup);

 private:
  std::mt19937_64 rng_;
  std::map<std::pair<std::size_t, std::size_t>, GateSequentialDesign> designs_;
  double Normal();
};

}  // namespace vouch
