// A bisect driven by simulated A/B outcomes from the real statistics: each step's pairs are
// drawn as bench/ab draws them (src/stats/ab_sim.h, lognormal legs) and judged look by look
// by the real sequential design (SequentialLook) at the step's Bonferroni level, and the
// step's verdict is fed to the real Search. Only the legs are simulated; every decision is
// the one `vouch bisect` makes. For bench/bisect and the tests: thousands of seeded bisects
// in seconds instead of thousands of processes.
#pragma once

#include <cstddef>   // size_t
#include <optional>  // the flaky commit, the commit named
#include <random>    // std::mt19937_64
#include <set>       // commits that do not build

#include "bisect/search.h"
#include "stats/sequential.h"

namespace vouch::bisect {

struct Scenario {
  std::size_t commits = 65;      // the good end and 64 after it
  std::size_t first_bad = 32;    // the planted regression (0: none, the ends are equal)
  double regression_pct = 5;     // the metric is this much worse from first_bad on
  double leg_noise_pct = 2;      // lognormal sd of one leg's metric
  std::set<std::size_t> broken;  // commits that fail to build: skipped
  // A commit whose benchmark fails in some legs (crashes, times out): a step on it whose legs
  // do not all succeed is skipped, as `vouch bisect` skips a commit whose legs fail.
  std::optional<std::size_t> flaky;
  double flaky_leg_fail = 0.3;
};

struct SimPlan {
  double alpha = 0.05;          // family-wise
  std::size_t max_pairs = 96;   // of each step's sequential A/B
  double min_effect_pct = 1;    // the confirmation's band
  std::size_t warmup_legs = 2;  // per step (one per arm)
};

// The two sequential designs a bisect of PLAN over COMMITS uses (they depend only on the
// per-step level and max_pairs): build once, reuse for every seeded run.
struct SimDesigns {
  FamilyPlan family;
  SequentialDesign design;
};
std::optional<SimDesigns> MakeSimDesigns(std::size_t commits, const SimPlan& plan);

struct SimResult {
  Search::State state = Search::State::kConfirming;
  std::optional<std::size_t> named;  // the commit named as first bad (kFound only)
  bool found = false;                // named == the planted first_bad
  bool wrong = false;                // named another commit
  std::size_t steps = 0, decisions = 0, skipped = 0, pairs = 0, legs = 0;
};

SimResult SimulateBisect(const Scenario& scenario, const SimPlan& plan, const SimDesigns& designs,
                         std::mt19937_64& rng);

}  // namespace vouch::bisect
