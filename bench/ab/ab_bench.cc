// Pairs needed to decide a planted effect, fixed design against sequential looks, on
// simulated lognormal legs (src/stats/ab_sim.h) with a seeded RNG. Prints Markdown.
//
//   ./build/vouch_bench_ab [--noise-sd-pct 0.5,1] [--effect-pct 3,1] [--band-pct 0.5]
//                          [--fixed-pairs 10] [--max-pairs 16] [--experiments 4000]
//                          [--seed 1]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "stats/ab_sim.h"
#include "stats/ab_stats.h"
#include "stats/sequential.h"

namespace {

using vouch::AbVerdict;

struct Tally {
  double right = 0;  // the planted direction (or, for an A/A run, "no change")
  double wrong = 0;  // the opposite direction, or any direction for an A/A run
  double other = 0;  // inconclusive / refused / no change on a real effect
  double mean_pairs = 0;
  std::size_t p50_pairs = 0;
  std::size_t p90_pairs = 0;
};

Tally Count(const std::vector<vouch::SimOutcome>& runs, double effect_pct) {
  Tally t;
  std::vector<std::size_t> pairs;
  for (const auto& r : runs) {
    const bool faster = r.verdict == AbVerdict::kBFaster;
    const bool slower = r.verdict == AbVerdict::kBSlower;
    if (effect_pct == 0) {
      (faster || slower ? t.wrong : (r.verdict == AbVerdict::kNoChange ? t.right : t.other)) += 1;
    } else {
      (faster ? t.right : (slower ? t.wrong : t.other)) += 1;
    }
    t.mean_pairs += static_cast<double>(r.pairs);
    pairs.push_back(r.pairs);
  }
  const auto n = static_cast<double>(runs.size());
  t.right /= n;
  t.wrong /= n;
  t.other /= n;
  t.mean_pairs /= n;
  std::sort(pairs.begin(), pairs.end());
  t.p50_pairs = pairs[pairs.size() / 2];
  t.p90_pairs = pairs[std::min(pairs.size() - 1, pairs.size() * 9 / 10)];
  return t;
}

std::vector<vouch::SimOutcome> RunFixed(std::size_t n, const vouch::AbSimulation& sim,
                                        const vouch::NoiseBand& band, std::size_t experiments,
                                        std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<vouch::SimOutcome> out;
  for (std::size_t i = 0; i < experiments; ++i) {
    out.push_back(vouch::SimulateFixed(n, sim, band, {}, rng));
  }
  return out;
}

std::vector<vouch::SimOutcome> RunSequential(const vouch::SequentialDesign& design,
                                             const vouch::AbSimulation& sim,
                                             const vouch::NoiseBand& band, std::size_t experiments,
                                             std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<vouch::SimOutcome> out;
  for (std::size_t i = 0; i < experiments; ++i) {
    out.push_back(vouch::SimulateSequential(design, sim, band, rng));
  }
  return out;
}

std::string Pct(double x) { return fmt::format("{:.1f} %", 100 * x); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Simulated pairs-to-decision of the vouch A/B verdict"};
  std::vector<double> noise_sd_pct = {0.5, 1.0};
  std::vector<double> effects_pct = {3.0, 1.0};
  double band_pct = 0.5;
  std::size_t fixed_pairs = 10;
  std::size_t max_pairs = 16;
  std::size_t experiments = 4000;
  std::uint64_t seed = 1;
  app.add_option("--noise-sd-pct", noise_sd_pct, "lognormal sd of one leg, percent")
      ->delimiter(',');
  app.add_option("--effect-pct", effects_pct, "planted effects, percent (B better)")
      ->delimiter(',');
  app.add_option("--band-pct", band_pct, "noise band, percent");
  app.add_option("--fixed-pairs", fixed_pairs, "pairs of the fixed design");
  app.add_option("--max-pairs", max_pairs, "maximum pairs of the sequential design");
  app.add_option("--experiments", experiments, "simulated series per cell");
  app.add_option("--seed", seed, "RNG seed");
  CLI11_PARSE(app, argc, argv);

  const auto band = vouch::NoiseBandFromPercent(band_pct);
  if (!band || fixed_pairs < vouch::kDefaultMinPairs || experiments == 0) {
    fmt::print(stderr,
               "vouch_bench_ab: need --band-pct >= 0, --fixed-pairs >= {}, "
               "--experiments >= 1\n",
               vouch::kDefaultMinPairs);
    return 2;
  }
  struct Design {
    std::string name;
    vouch::SequentialDesign design;
  };
  std::vector<Design> designs;
  for (const auto spending :
       {vouch::SpendingFunction::kOBrienFleming, vouch::SpendingFunction::kPocock}) {
    vouch::SequentialPlan plan;
    plan.max_pairs = max_pairs;
    plan.spending = spending;
    const auto d = vouch::MakeSequentialDesign(plan);
    if (!d) {
      fmt::print(stderr, "vouch_bench_ab: --max-pairs {} is below the first look ({} pairs)\n",
                 max_pairs, plan.first_look_pairs);
      return 2;
    }
    designs.push_back({fmt::format("sequential {} (looks {}..{} by 2)",
                                   spending == vouch::SpendingFunction::kPocock ? "Pocock" : "OBF",
                                   plan.first_look_pairs, max_pairs),
                       *d});
  }

  fmt::print("Band {} %, alpha 0.05 two-sided overall, {} simulated series per cell, seed {}.\n",
             band_pct, experiments, seed);
  fmt::print(
      "\"right\": the planted direction (A/A: `no change`); \"wrong\": the opposite "
      "direction (A/A: any direction, the false-positive rate).\n\n");
  for (const auto& d : designs) {
    fmt::print("{}: nominal two-sided levels per look:", d.name);
    for (std::size_t k = 0; k < d.design.nominal_alpha.size(); ++k) {
      fmt::print(" {}:{:.2g}", d.design.look_pairs[k], d.design.nominal_alpha[k]);
    }
    fmt::print("\n");
  }
  fmt::print("\n");
  for (const double noise : noise_sd_pct) {
    fmt::print("### Leg noise sd {} % (sd of d {:.2f} %)\n\n", noise, noise * std::sqrt(2.0));
    fmt::print("| effect | design | right | wrong | undecided | mean pairs | median | p90 |\n");
    fmt::print("|---|---|---|---|---|---|---|---|\n");
    std::vector<double> cells = {0.0};
    cells.insert(cells.end(), effects_pct.begin(), effects_pct.end());
    std::uint64_t cell_seed = seed * 1000;
    for (const double effect : cells) {
      const vouch::AbSimulation sim{.effect_pct = effect, .leg_noise_sd_pct = noise};
      const std::string label = effect == 0 ? "A/A" : fmt::format("{} %", effect);
      auto row = [&](const std::string& name, const Tally& t) {
        fmt::print("| {} | {} | {} | {} | {} | {:.1f} | {} | {} |\n", label, name, Pct(t.right),
                   Pct(t.wrong), Pct(t.other), t.mean_pairs, t.p50_pairs, t.p90_pairs);
      };
      ++cell_seed;
      row(fmt::format("fixed {}", fixed_pairs),
          Count(RunFixed(fixed_pairs, sim, *band, experiments, cell_seed), effect));
      for (const auto& d : designs) {
        row(d.name, Count(RunSequential(d.design, sim, *band, experiments, cell_seed), effect));
      }
      if (effect != 0) {
        // The fixed design's pairs for 90 % power, by simulation over even n.
        std::string needed = fmt::format("> {}", 4 * max_pairs);
        for (std::size_t n = vouch::kDefaultMinPairs; n <= 4 * max_pairs; n += 2) {
          const Tally t = Count(RunFixed(n, sim, *band, experiments / 4, cell_seed + 7), effect);
          if (t.right >= 0.9) {
            needed = fmt::format("{}", n);
            break;
          }
        }
        fmt::print("| {} | fixed n for 90 % power | | | | {} | | |\n", label, needed);
      }
    }
    fmt::print("\n");
  }
  return 0;
}
