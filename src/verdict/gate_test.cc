#include "verdict/gate.h"

#include <gtest/gtest.h>

namespace vouch::verdict {
namespace {

Baseline OneMetric(std::vector<double> trials, double median) {
  Baseline b;
  b.headline = "tok_s";
  BaselineMetric m;
  m.name = "tok_s";
  m.unit = "tok/s";
  m.better = Better::kHigher;
  m.fail_pct = 3;
  m.value = median;
  m.trials = std::move(trials);
  b.metrics = {m};
  return b;
}

std::map<std::string, CurrentMetric> Now(std::vector<double> legs, double median) {
  return {{"tok_s", CurrentMetric{median, "tok/s", std::move(legs), {}}}};
}

EnvLookup NoEnv() {
  return [](const std::string&) { return std::optional<std::string>(); };
}

TEST(GateVerdict, ModesAcrossTheBaselineAndTheLegsAreRefusedNotAveraged) {
  // The case: trials 100,100,100,120,100 and legs 120,120,120 (a two-speed benchmark):
  // neither side alone shows modes a 3-leg run can check; together they do.
  auto f = DecideGate(OneMetric({100, 100, 100, 120, 100}, 100), Now({120, 120, 120}, 120), {},
                      NoEnv(), std::nullopt, nlohmann::json::array(), {});
  EXPECT_TRUE(f.refused);
  EXPECT_EQ(f.exit_code, kGateExitModes);
  ASSERT_EQ(f.modes.refuse.size(), 1u);
  EXPECT_NE(f.modes.refuse[0].find("the baseline's trials and this run's legs together show two "
                                   "modes"),
            std::string::npos)
      << f.modes.refuse[0];
  EXPECT_EQ(f.json["verdict"], "refused");
  auto allowed = DecideGate(OneMetric({100, 100, 100, 120, 100}, 100), Now({120, 120, 120}, 120),
                            {}, NoEnv(), std::nullopt, nlohmann::json::array(), {true});
  EXPECT_FALSE(allowed.refused);
  EXPECT_TRUE(allowed.json.contains("modes_allowed"));
}

TEST(GateVerdict, AShiftIsNotModes) {
  // Every trial near 100, every leg near 90: the split is baseline against run, a regression.
  auto f = DecideGate(OneMetric({100, 100.5, 99.5, 100.2, 99.8}, 100), Now({90, 90.4, 89.7}, 90),
                      {}, NoEnv(), std::nullopt, nlohmann::json::array(), {});
  EXPECT_FALSE(f.refused);
  EXPECT_TRUE(f.modes.refuse.empty());
  EXPECT_EQ(f.report.rows[0].verdict, GateVerdict::kFail);
  EXPECT_EQ(f.exit_code, 1);
}

TEST(GateVerdict, TooFewValuesToCheckModesIsSaid) {
  auto f = DecideGate(OneMetric({100}, 100), Now({100.5, 99.8}, 100), {}, NoEnv(), std::nullopt,
                      nlohmann::json::array(), {});
  ASSERT_EQ(f.modes.unchecked.size(), 1u);
  EXPECT_NE(f.modes.unchecked[0].find("modes not checkable at 3 values"), std::string::npos);
}

TEST(GateVerdict, AGateThatCannotCheckModesRunsTheLegsTheCheckNeeds) {
  std::string note;
  auto one = OneMetric({100}, 100);
  auto f =
      DecideGate(one, Now({100.5}, 100.5), {}, NoEnv(), std::nullopt, nlohmann::json::array(), {});
  EXPECT_EQ(GateLegsForModes(f.report, one, Now({100.5}, 100.5), &note), 2u);
  EXPECT_EQ(note,
            "tok_s: modes not checkable at 2 values (the baseline's 1 trial and this run's 1 leg): "
            "2 more legs");
  auto three = DecideGate(one, Now({100.5, 99.8, 100.1}, 100.1), {}, NoEnv(), std::nullopt,
                          nlohmann::json::array(), {});
  EXPECT_EQ(GateLegsForModes(three.report, one, Now({100.5, 99.8, 100.1}, 100.1), &note), 0u);
  // The default gate (5 trials, 3 legs) is always checkable; a warn-only metric needs none.
  auto five = OneMetric({100, 101, 99, 100, 100.5}, 100);
  auto d =
      DecideGate(five, Now({100.2}, 100.2), {}, NoEnv(), std::nullopt, nlohmann::json::array(), {});
  EXPECT_EQ(GateLegsForModes(d.report, five, Now({100.2}, 100.2), nullptr), 0u);
  auto warn_only = OneMetric({100}, 100);
  warn_only.metrics[0].fail_pct.reset();
  warn_only.metrics[0].warn_pct = 3;
  auto w = DecideGate(warn_only, Now({100.5}, 100.5), {}, NoEnv(), std::nullopt,
                      nlohmann::json::array(), {});
  EXPECT_EQ(GateLegsForModes(w.report, warn_only, Now({100.5}, 100.5), nullptr), 0u);
}

}  // namespace
}  // namespace vouch::verdict
