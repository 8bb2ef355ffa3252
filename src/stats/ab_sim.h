// Seeded simulation of A/B series for the tests and bench/ab: each leg's metric is
// lognormal, metric = (1 + effect) * exp(noise_sd * N(0, 1)) for B and exp(noise_sd *
// N(0, 1)) for A, so d = ln(B/A) has mean ln(1 + effect) and sd noise_sd * sqrt(2).
// Deterministic for a given seed with one standard library (std::normal_distribution is
// implementation-defined across libraries).
#pragma once

#include <cstddef>  // size_t
#include <random>   // std::mt19937_64
#include <vector>   // d values

#include "stats/ab_stats.h"
#include "stats/sequential.h"

namespace vouch {

struct AbSimulation {
  double effect_pct = 0;          // planted: B better by this much (0: an A/A series)
  double leg_noise_sd_pct = 1.0;  // lognormal sd of one leg, in percent
};

// d of `pairs` simulated pairs (higher-is-better metric).
std::vector<double> SimulateLogRatios(std::size_t pairs, const AbSimulation& sim,
                                      std::mt19937_64& rng);

struct SimOutcome {
  AbVerdict verdict = AbVerdict::kRefused;
  std::size_t pairs = 0;  // pairs run before the verdict
};

SimOutcome SimulateFixed(std::size_t pairs, const AbSimulation& sim, const NoiseBand& band,
                         const AbOptions& options, std::mt19937_64& rng);
SimOutcome SimulateSequential(const SequentialDesign& design, const AbSimulation& sim,
                              const NoiseBand& band, std::mt19937_64& rng);

}  // namespace vouch
