// Simulated gates of known truth, today's fixed design against the sequential one
// (gate --max-reps, baseline --max-trials), through the real decision functions
// (src/gate/gate_sim.h). Prints a Markdown table for docs/BENCHMARKS.md.
//
//   ./build/vouch_bench_gate [--gates 2000] [--seed 23] [--max-trials 20] [--max-reps 12]
//   (issue 34 item 4's design: --sequential-only --trials 8 --max-trials 8 --reps 4
//   --look-every 3 --max-reps 15)
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gate/gate_sim.h"

namespace {

struct Case {
  double noise_pct, change_pct;
  std::string truth;
};

struct Rates {
  double pass = 0, fail = 0, inconclusive = 0, trials = 0, legs = 0;
};

Rates Simulate(vouch::GateSimulator& sim, const vouch::GateSimSetup& s, int gates) {
  Rates r;
  for (int i = 0; i < gates; ++i) {
    auto o = sim.Run(s);
    (o.verdict == vouch::GateVerdict::kFail           ? r.fail
     : o.verdict == vouch::GateVerdict::kInconclusive ? r.inconclusive
                                                      : r.pass) += 1;
    r.trials += static_cast<double>(o.trials);
    r.legs += static_cast<double>(o.legs);
  }
  for (double* x : {&r.pass, &r.fail, &r.inconclusive, &r.trials, &r.legs}) *x /= gates;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Simulated gates: fixed design against sequential"};
  int gates = 2000;
  std::uint64_t seed = 23;
  std::size_t trials = 5, reps = 3, max_trials = 20, max_reps = 12;
  app.add_option("--gates", gates, "simulated gates per case and design (2000)");
  app.add_option("--seed", seed, "RNG seed (23)");
  app.add_option("--trials", trials, "baseline trials, both designs (5)");
  app.add_option("--reps", reps, "gate legs, both designs; the sequential block (3)");
  app.add_option("--max-trials", max_trials, "sequential: baseline --max-trials (20)");
  app.add_option("--max-reps", max_reps, "sequential: gate --max-reps (12)");
  std::size_t look_every = 0;
  app.add_option("--look-every", look_every, "sequential: gate --look-every (0: --reps)");
  std::size_t only_case = 0;
  app.add_option("--case", only_case, "run only this case, 1-4 in the table's order (0: all)")
      ->check(CLI::Range(0, 4));
  std::string spending = "obf";
  app.add_option("--spending", spending,
                 "the sequential gate's alpha spending: obf (the gate's) or pocock")
      ->check(CLI::IsMember({"pocock", "obf"}));
  bool sequential_only = false;
  app.add_flag("--sequential-only", sequential_only, "skip the fixed design's rows");
  std::string direction = "both";
  app.add_option("--direction", direction, "the headline's direction: higher, lower or both")
      ->check(CLI::IsMember({"higher", "lower", "both"}));
  CLI11_PARSE(app, argc, argv);
  const std::vector<Case> cases = {{2, 0, "unchanged"},
                                   {2, 3, "at the 3 % threshold"},
                                   {1, 8, "+8 % regression"},
                                   {5, 0, "unchanged"}};
  fmt::print(
      "| noise | truth | better | design | pass | FAIL (upper 95 %) | inconclusive | baseline "
      "trials | gate legs | total legs |\n|---:|---|---|---|---:|---:|---:|---:|---:|---:|\n");
  std::vector<vouch::Better> directions;
  if (direction != "lower") directions.push_back(vouch::Better::kHigher);
  if (direction != "higher") directions.push_back(vouch::Better::kLower);
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    if (only_case != 0 && ci + 1 != only_case) continue;
    for (vouch::Better better : directions)
      for (bool seq : {false, true}) {
        if (sequential_only && !seq) continue;
        vouch::GateSimulator sim(seed);  // the same seed for both designs
        if (spending == "pocock") sim.spending = vouch::SpendingFunction::kPocock;
        vouch::GateSimSetup s;
        s.noise_sd_pct = c.noise_pct;
        s.change_pct = c.change_pct;
        s.better = better;
        s.trials = trials;
        s.reps = reps;
        if (seq) {
          s.max_trials = max_trials;
          s.max_reps = max_reps;
          s.look_every = look_every;
        }
        Rates r = Simulate(sim, s, gates);
        // The FAIL rate's upper 95 % bound (Wilson score interval, one-sided z = 1.645).
        const double z = 1.645, nn = gates, ph = r.fail;
        const double upper =
            (ph + z * z / (2 * nn) + z * std::sqrt(ph * (1 - ph) / nn + z * z / (4 * nn * nn))) /
            (1 + z * z / nn);
        fmt::print(
            "| {:g} % | {} | {} | {} | {:.2f} % | {:.2f} % ({:.2f} %) | {:.2f} % | {:.2f} | {:.2f} "
            "| "
            "{:.2f} |\n",
            c.noise_pct, c.truth, better == vouch::Better::kHigher ? "higher" : "lower",
            seq ? fmt::format("sequential (max-trials {}, max-reps {})", max_trials, max_reps)
                : fmt::format("fixed ({} trials, {} legs)", trials, reps),
            100 * r.pass, 100 * r.fail, 100 * upper, 100 * r.inconclusive, r.trials, r.legs,
            r.trials + r.legs);
      }
  }
  fmt::print("\n{} simulated gates per row, seed {}; fail threshold 3 %, one metric.\n", gates,
             seed);
  return 0;
}
