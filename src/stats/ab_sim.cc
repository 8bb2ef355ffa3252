#include "stats/ab_sim.h"

#include <cmath>

namespace vouch {

std::vector<double> SimulateLogRatios(std::size_t pairs, const AbSimulation& sim,
                                      std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0.0, sim.leg_noise_sd_pct / 100.0);
  std::vector<double> d;
  d.reserve(pairs);
  for (std::size_t i = 0; i < pairs; ++i) {
    const double a = std::exp(noise(rng));
    const double b = (1 + sim.effect_pct / 100.0) * std::exp(noise(rng));
    d.push_back(*PairLogRatio(a, b, MetricDirection::kHigherIsBetter));
  }
  return d;
}

SimOutcome SimulateFixed(std::size_t pairs, const AbSimulation& sim, const NoiseBand& band,
                         const AbOptions& options, std::mt19937_64& rng) {
  const std::vector<double> d = SimulateLogRatios(pairs, sim, rng);
  return {DecideAb(d, band, options).verdict, pairs};
}

SimOutcome SimulateSequential(const SequentialDesign& design, const AbSimulation& sim,
                              const NoiseBand& band, std::mt19937_64& rng) {
  std::vector<double> d;
  SimOutcome out;
  for (std::size_t look = 1; look <= design.look_pairs.size(); ++look) {
    const std::vector<double> more =
        SimulateLogRatios(design.look_pairs[look - 1] - d.size(), sim, rng);
    d.insert(d.end(), more.begin(), more.end());
    const auto step = SequentialLook(d, look, design, band);
    out = {step->decision.verdict, d.size()};
    if (step->stop) break;
  }
  return out;
}

}  // namespace vouch
