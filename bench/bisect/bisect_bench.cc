// Found-rate, wrong-commit rate and steps of `vouch bisect` over seeded scenarios: one
// planted regression among 64 commits at 2 % leg noise, with and without commits that fail
// to build and a flaky commit, and equal ends. The search, the sequential A/B design, the
// Bonferroni level per step and every verdict are the real ones (src/bisect, src/stats); only
// the legs' metrics are drawn (lognormal, src/stats/ab_sim.h), so thousands of bisects take
// seconds instead of thousands of processes. Each run draws the planted commit, the broken
// commits and the flaky one at random. Prints Markdown.
//
//   ./build/vouch_bench_bisect [--runs 2000] [--seed 1] [--max-pairs 96] [--noise-pct 2]
//                              [--regression-pct 5] [--commits 64]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "bisect/sim.h"

namespace {

using vouch::bisect::Scenario;
using vouch::bisect::Search;
using vouch::bisect::SimResult;

struct Row {
  const char* name;
  int broken = 0;
  bool flaky = false;
  bool planted = true;
  // Keep the broken and flaky commits off the planted one and its parent: a commit next to
  // the regression that cannot be tested makes it unidentifiable (git bisect's "one of these
  // commits"), whatever the statistics.
  bool identifiable = true;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"vouch bisect's search on simulated A/B outcomes (Markdown)"};
  std::size_t runs = 2000, max_pairs = 96, commits = 64;
  std::uint64_t seed = 1;
  double noise = 2, regression = 5, alpha = 0.05, flaky_fail = 0.3;
  app.add_option("--runs", runs, "seeded bisects per scenario (2000)");
  app.add_option("--seed", seed, "first seed (1)");
  app.add_option("--max-pairs", max_pairs, "most pairs of one step's sequential A/B (96)");
  app.add_option("--noise-pct", noise, "lognormal sd of one leg's metric, percent (2)");
  app.add_option("--regression-pct", regression, "the planted regression, percent (5)");
  app.add_option("--commits", commits, "commits after the good end (64)");
  app.add_option("--alpha", alpha, "family-wise error of the whole search (0.05)");
  app.add_option("--flaky-leg-fail", flaky_fail, "chance a flaky commit's leg fails (0.3)");
  CLI11_PARSE(app, argc, argv);

  vouch::bisect::SimPlan plan;
  plan.alpha = alpha;
  plan.max_pairs = max_pairs;
  auto designs = vouch::bisect::MakeSimDesigns(commits + 1, plan);
  if (!designs) {
    fmt::print(stderr, "bad plan\n");
    return 1;
  }
  fmt::print(
      "{} commits after the good end, {} % regression, {} % leg noise, alpha {} over {} planned "
      "decisions ({:.4f} per step), sequential A/B of at most {} pairs per step, {} runs each\n\n",
      commits, regression, noise, alpha, designs->family.planned_decisions,
      designs->family.per_step_alpha, max_pairs, runs);
  fmt::print(
      "| scenario | found | wrong commit | undecided | only skipped left | ends not apart | steps "
      "mean (max) | skipped mean | pairs mean | legs mean "
      "|\n|---|---|---|---|---|---|---|---|---|---|\n");
  const std::vector<Row> rows = {
      {"one planted regression", 0, false, true},
      {"planted + 3 commits that fail to build + 1 flaky commit (none next to it)", 3, true, true},
      {"the same, placed anywhere (next to the regression included)", 3, true, true, false},
      {"no regression (equal ends)", 0, false, false},
  };
  for (const auto& row : rows) {
    std::mt19937_64 rng(seed);
    double found = 0, wrong = 0, undecided = 0, only_skipped = 0, not_apart = 0;
    double steps = 0, skipped = 0, pairs = 0, legs = 0;
    std::size_t max_steps = 0;
    for (std::size_t run = 0; run < runs; ++run) {
      Scenario sc;
      sc.commits = commits + 1;
      sc.regression_pct = regression;
      sc.leg_noise_pct = noise;
      sc.flaky_leg_fail = flaky_fail;
      std::uniform_int_distribution<std::size_t> pick(1, commits - 1);  // never an end
      sc.first_bad = row.planted ? std::uniform_int_distribution<std::size_t>(1, commits)(rng) : 0;
      auto allowed = [&](std::size_t c) {
        return !row.identifiable || (c != sc.first_bad && c + 1 != sc.first_bad);
      };
      while (static_cast<int>(sc.broken.size()) < row.broken)
        if (std::size_t c = pick(rng); allowed(c)) sc.broken.insert(c);
      if (row.flaky)
        for (std::size_t c = pick(rng);; c = pick(rng))
          if (!sc.broken.count(c) && allowed(c)) {
            sc.flaky = c;
            break;
          }
      const SimResult r = vouch::bisect::SimulateBisect(sc, plan, *designs, rng);
      found += r.found;
      wrong += r.wrong;
      undecided += r.state == Search::State::kUndecided;
      only_skipped += r.state == Search::State::kOnlySkipped;
      not_apart += r.state == Search::State::kEndsNotApart;
      steps += static_cast<double>(r.steps);
      max_steps = std::max(max_steps, r.steps);
      skipped += static_cast<double>(r.skipped);
      pairs += static_cast<double>(r.pairs);
      legs += static_cast<double>(r.legs);
    }
    const double n = static_cast<double>(runs);
    fmt::print(
        "| {} | {:.1f} % | {:.2f} % | {:.1f} % | {:.1f} % | {:.1f} % | {:.2f} ({}) | {:.2f} | "
        "{:.0f} "
        "| {:.0f} |\n",
        row.name, 100 * found / n, 100 * wrong / n, 100 * undecided / n, 100 * only_skipped / n,
        100 * not_apart / n, steps / n, max_steps, skipped / n, pairs / n, legs / n);
  }
  return 0;
}
