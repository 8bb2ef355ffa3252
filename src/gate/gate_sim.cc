#include "gate/gate_sim.h"

#include <algorithm>
#include <cmath>

namespace vouch {

double GateSimulator::Normal() { return std::normal_distribution<double>(0.0, 1.0)(rng_); }

const GateSequentialDesign* GateSimulator::Design(const Baseline& b, const GateSimSetup& s) {
  const auto key =
      std::make_tuple(b.metrics.front().trials.size(), b.first_stage_trials, b.max_trials);
  auto it = designs_.find(key);
  if (it == designs_.end())
    it = designs_
             .emplace(key, GateDesignFor(b, s.reps, s.max_reps, s.look_every,
                                         GateAlphaPerMetric(b, nullptr), nullptr, spending))
             .first;
  return it->second ? &*it->second : nullptr;
}

GateSimOutcome GateSimulator::Run(const GateSimSetup& s) {
  const double sd = s.noise_sd_pct / 100, base = 1000;
  auto draw = [&](double log_mean) { return base * std::exp(log_mean + sd * Normal()); };
  BaselineInput in{"tps", s.better == Better::kHigher ? "tok/s" : "ms", s.better, {}, {}};
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
    b->max_trials = static_cast<int>(s.max_trials);
  }
  GateSimOutcome out;
  out.trials = in.values.size();
  // X % in the bad direction is a factor of 1 + X/100 worse: below for higher-is-better.
  const double bad_log = std::log1p(s.change_pct / 100);
  const double now_mean = s.better == Better::kHigher ? -bad_log : bad_log;
  CurrentMetric cur{0, s.better == Better::kHigher ? "tok/s" : "ms", {}, {}};
  auto compare = [&](const std::optional<GateLook>& look) {
    std::vector<double> sorted = cur.values;
    std::sort(sorted.begin(), sorted.end());
    cur.value = sorted[sorted.size() / 2];
    return CompareToBaseline(*b, {{"tps", cur}}, ClockState{}, nullptr, look);
  };
  for (std::size_t i = 0; i < s.reps; ++i) cur.values.push_back(draw(now_mean));
  const GateSequentialDesign* d = Design(*b, s);
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
                      d->plan.alpha,
                      d->plan.first_legs,
                      d->plan.legs_per_look};
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
