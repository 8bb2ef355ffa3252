#include "gate/gate_sim.h"

#include <algorithm>
#include <cmath>

namespace vouch {

double GateSimulator::Normal() { return std::normal_distribution<double>(0.0, 1.0)(rng_); }

const GateSequentialDesign* GateSimulator::Design(std::size_t trials, std::size_t first,
                                                  const GateSimSetup& s) {
  auto it = designs_.find({trials, first});
  if (it != designs_.end()) return &it->second;
  GateSequentialPlan plan;
  plan.baseline_trials = trials;
  plan.baseline_spread_trials = first;
  plan.spending = spending;
  plan.first_legs = s.reps;
  plan.legs_per_look = s.reps;
  plan.max_legs = s.max_reps;
  auto d = MakeGateSequentialDesign(plan);
  if (!d) return nullptr;
  return &designs_.emplace(std::make_pair(trials, first), *d).first->second;
}

GateSimOutcome GateSimulator::Run(const GateSimSetup& s) {
  const double sd = s.noise_sd_pct / 100, base = 1000;
  auto draw = [&](double log_mean) { return base * std::exp(log_mean + sd * Normal()); };
  BaselineInput in{"tps", "tok/s", Better::kHigher, {}, {}};
  for (std::size_t i = 0; i < s.trials; ++i) in.values.push_back(draw(0));
  BaselineOptions bo;
  bo.headline_fail_pct = s.fail_pct;
  bo.created_utc = "2026-01-01T00:00:00Z";
  auto b = MakeBaseline({in}, "tps", ClockState{}, bo);
  if (s.max_trials > s.trials) {
    std::size_t want = BaselineTrialsToResolve(*b, s.max_trials);
    while (in.values.size() < want) in.values.push_back(draw(0));
    b = MakeBaseline({in}, "tps", ClockState{}, bo);
    // As `baseline --max-trials` records it: the gate takes the spread from the first stage.
    if (in.values.size() > s.trials) b->first_stage_trials = static_cast<int>(s.trials);
  }
  GateSimOutcome out;
  out.trials = in.values.size();
  // Higher is better: a change of +X % in the bad direction is a rate X % lower.
  const double now_mean = std::log1p(-s.change_pct / 100);
  CurrentMetric cur{0, "tok/s", {}, {}};
  auto compare = [&](const std::optional<GateLook>& look) {
    std::vector<double> sorted = cur.values;
    std::sort(sorted.begin(), sorted.end());
    cur.value = sorted[sorted.size() / 2];
    return CompareToBaseline(*b, {{"tps", cur}}, ClockState{}, nullptr, look);
  };
  for (std::size_t i = 0; i < s.reps; ++i) cur.values.push_back(draw(now_mean));
  const GateSequentialDesign* d =
      s.max_reps > s.reps ? Design(out.trials, static_cast<std::size_t>(b->first_stage_trials), s)
                          : nullptr;
  GateReport r;
  for (;;) {
    std::optional<GateLook> look;
    if (d) {
      std::size_t k = GateLookAt(*d, cur.values.size());
      look = GateLook{k,
                      d->look_legs.size(),
                      cur.values.size(),
                      d->plan.max_legs,
                      d->nominal_alpha[k - 1],
                      d->plan.alpha};
    }
    r = compare(look);
    if (!d || !GateUndecided(r) || cur.values.size() >= d->plan.max_legs) break;
    for (std::size_t i = 0; i < d->plan.legs_per_look && cur.values.size() < d->plan.max_legs; ++i)
      cur.values.push_back(draw(now_mean));
  }
  out.verdict = r.overall;
  out.legs = cur.values.size();
  return out;
}

}  // namespace vouch
