#include "bisect/sim.h"

#include <gtest/gtest.h>

namespace vouch::bisect {
namespace {

TEST(BisectSim, FindsAPlantedRegressionAtLowNoiseEveryTime) {
  Scenario sc;
  sc.commits = 17;
  sc.first_bad = 11;
  sc.leg_noise_pct = 0.5;
  SimPlan plan;
  plan.max_pairs = 16;
  auto designs = MakeSimDesigns(sc.commits, plan);
  ASSERT_TRUE(designs);
  EXPECT_EQ(designs->family.planned_decisions, 5u);
  std::mt19937_64 rng(7);
  for (int run = 0; run < 40; ++run) {
    auto r = SimulateBisect(sc, plan, *designs, rng);
    ASSERT_EQ(r.state, Search::State::kFound) << run;
    EXPECT_TRUE(r.found);
    EXPECT_FALSE(r.wrong);
    EXPECT_EQ(*r.named, 11u);
    EXPECT_LE(r.decisions, 5u);
    EXPECT_GE(r.pairs, 4u * r.decisions) << "each step is at least two ABBA blocks";
    EXPECT_EQ(r.legs, r.pairs * 2 + 2 * r.steps);
  }
}

TEST(BisectSim, EqualEndsAreNotSearched) {
  Scenario sc;
  sc.commits = 9;
  sc.first_bad = 0;
  sc.leg_noise_pct = 0.5;
  SimPlan plan;
  plan.max_pairs = 16;
  auto designs = MakeSimDesigns(sc.commits, plan);
  ASSERT_TRUE(designs);
  std::mt19937_64 rng(3);
  for (int run = 0; run < 30; ++run) {
    auto r = SimulateBisect(sc, plan, *designs, rng);
    EXPECT_EQ(r.state, Search::State::kEndsNotApart) << run;
    EXPECT_EQ(r.steps, 1u);
  }
}

TEST(BisectSim, BrokenAndFlakyCommitsAreSkipped) {
  Scenario sc;
  sc.commits = 17;
  sc.first_bad = 5;
  sc.leg_noise_pct = 0.5;
  sc.broken = {8, 2};
  sc.flaky = 7;
  sc.flaky_leg_fail = 1.0;  // every leg fails: always skipped
  SimPlan plan;
  plan.max_pairs = 16;
  auto designs = MakeSimDesigns(sc.commits, plan);
  ASSERT_TRUE(designs);
  std::mt19937_64 rng(11);
  auto r = SimulateBisect(sc, plan, *designs, rng);
  ASSERT_EQ(r.state, Search::State::kFound);
  EXPECT_EQ(*r.named, 5u);
  EXPECT_EQ(r.skipped, 2u);  // 8 (the first middle), then 7; 2 is never reached
  EXPECT_EQ(r.steps, r.decisions + r.skipped);
}

}  // namespace
}  // namespace vouch::bisect
