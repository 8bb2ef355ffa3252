#include "bisect/sim.h"

#include <cmath>

#include "stats/ab_sim.h"

namespace vouch::bisect {
namespace {

struct SimStep {
  AbDecision decision;
  std::size_t pairs = 0;
};

// One sequential A/B of the good end (A) against a commit (B) whose metric differs by
// EFFECT_PCT, judged at every look against BAND.
SimStep SimulateStep(double effect_pct, double noise_pct, const SequentialDesign& design,
                     const NoiseBand& band, std::mt19937_64& rng) {
  AbSimulation sim;
  sim.effect_pct = effect_pct;
  sim.leg_noise_sd_pct = noise_pct;
  std::vector<double> d;
  SimStep out;
  for (std::size_t look = 1; look <= design.look_pairs.size(); ++look) {
    auto more = SimulateLogRatios(design.look_pairs[look - 1] - d.size(), sim, rng);
    d.insert(d.end(), more.begin(), more.end());
    auto step = SequentialLook(d, look, design, band);
    out = {step->decision, d.size()};
    if (step->stop) break;
  }
  return out;
}

}  // namespace

std::optional<SimDesigns> MakeSimDesigns(std::size_t commits, const SimPlan& plan) {
  auto family = PlanFamily(commits, plan.alpha);
  if (!family) return std::nullopt;
  SequentialPlan sp;
  sp.max_pairs = plan.max_pairs;
  sp.confidence = family->per_step_confidence();
  auto design = MakeSequentialDesign(sp);
  if (!design) return std::nullopt;
  return SimDesigns{*family, *design};
}

SimResult SimulateBisect(const Scenario& sc, const SimPlan& plan, const SimDesigns& designs,
                         std::mt19937_64& rng) {
  Search search(sc.commits);
  SimResult r;
  NoiseBand band = *NoiseBandFromPercent(plan.min_effect_pct);
  std::bernoulli_distribution leg_fails(sc.flaky_leg_fail);
  while (auto next = search.Next()) {
    const std::size_t c = *next;
    StepVerdict v;
    if (sc.broken.count(c)) {
      v = StepVerdict::kSkipped;
    } else {
      const bool bad = sc.first_bad > 0 && c >= sc.first_bad;
      SimStep step =
          SimulateStep(bad ? -sc.regression_pct : 0, sc.leg_noise_pct, designs.design, band, rng);
      const std::size_t legs = plan.warmup_legs + 2 * step.pairs;
      r.pairs += step.pairs;
      r.legs += legs;
      bool failed = false;
      if (sc.flaky && *sc.flaky == c)
        for (std::size_t l = 0; l < legs && !failed; ++l) failed = leg_fails(rng);
      if (search.state() == Search::State::kConfirming) {
        v = ClassifyConfirmation(failed ? AbVerdict::kRefused : step.decision.verdict);
        if (v == StepVerdict::kLikeBad) band = MidpointBand(step.decision.interval->mean_log);
      } else {
        v = failed ? StepVerdict::kSkipped : ClassifyStep(step.decision.verdict);
      }
    }
    (void)search.Feed(c, v);
  }
  r.state = search.state();
  r.steps = search.steps();
  r.decisions = search.decisions();
  r.skipped = search.skipped().size();
  if (r.state == Search::State::kFound) {
    r.named = search.first_bad();
    r.found = *r.named == sc.first_bad;
    r.wrong = !r.found;
  }
  return r;
}

}  // namespace vouch::bisect
