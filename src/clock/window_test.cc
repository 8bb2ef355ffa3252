#include "clock/window.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace vouch {
namespace {

WindowSummary Window(double median, double mean, const std::string& boot = "boot-1") {
  WindowSummary w;
  w.boot_id = boot;
  GpuWindow g;
  g.state.uuid = "GPU-1";
  g.state.driver_version = "580.159.04";
  g.state.max_sm_mhz = 1980;
  g.state.app_sm_mhz = 1980;
  g.state.persistence = true;
  g.fold.busy_readings = 100;
  g.fold.readings = 110;
  g.fold.busy_fraction = 100.0 / 110;
  g.fold.sm_mhz = ClockStats{median - 10, median, median + 10, mean};
  g.fold.spread = 20 / median;
  w.gpus.push_back(g);
  w.verdict.status = WindowStatus::kValid;
  return w;
}

const PairRule* Rule(const PairVerdict& v, const std::string& prefix) {
  for (const auto& r : v.rules)
    if (r.rule.rfind(prefix, 0) == 0) return &r;
  return nullptr;
}

TEST(Pair, EqualWindowsPair) {
  auto v = PairWindows(Window(2000, 1995), Window(2000, 1995), Policy{}, false);
  EXPECT_TRUE(v.paired);
  EXPECT_TRUE(v.caveats.empty());
}

TEST(Pair, MedianOffsetAtOnePercentPassesJustAboveFails) {
  EXPECT_TRUE(PairWindows(Window(2000, 2000), Window(2020, 2000), Policy{}, false).paired);
  auto v = PairWindows(Window(2000, 2000), Window(2020.5, 2000), Policy{}, false);
  EXPECT_FALSE(v.paired);
  EXPECT_FALSE(Rule(v, "SM clock median offset")->pass);
  EXPECT_TRUE(Rule(v, "SM clock mean offset")->pass);
}

TEST(Pair, MeanOffsetIsASeparateRule) {
  // Medians equal (0.00 %), means 1.2 % apart: refused on the mean alone.
  EXPECT_TRUE(PairWindows(Window(2000, 1980), Window(2000, 1999.8), Policy{}, false).paired);
  auto v = PairWindows(Window(2000, 1980), Window(2000, 2003.8), Policy{}, false);
  EXPECT_FALSE(v.paired);
  EXPECT_TRUE(Rule(v, "SM clock median offset")->pass);
  EXPECT_FALSE(Rule(v, "SM clock mean offset")->pass);
}

TEST(Pair, WindowWithoutAMeanIsRefusedNotSkipped) {
  auto old = Window(2000, std::nan(""));
  auto v = PairWindows(old, Window(2000, 2000), Policy{}, false);
  EXPECT_FALSE(v.paired);
  ASSERT_NE(Rule(v, "SM clock mean recorded"), nullptr);
  EXPECT_FALSE(Rule(v, "SM clock mean recorded")->pass);
}

TEST(Pair, CrossBootRefusedUnlessWaivedAndTheWaiverWaivesNothingElse) {
  auto a = Window(2000, 2000, "boot-1");
  auto b = Window(2000, 2000, "boot-2");
  auto refused = PairWindows(a, b, Policy{}, false);
  EXPECT_FALSE(refused.paired);
  auto waived = PairWindows(a, b, Policy{}, true);
  EXPECT_TRUE(waived.paired);
  ASSERT_EQ(waived.caveats.size(), 1u);
  EXPECT_NE(waived.caveats[0].find("cross-boot"), std::string::npos);
  EXPECT_TRUE(Rule(waived, "boot id")->waived);
  // Waiving the boot does not waive the machine or the clock.
  b.gpus[0].state.driver_version = "580.0";
  EXPECT_FALSE(PairWindows(a, b, Policy{}, true).paired);
  b = Window(2000, 2000, "boot-2");
  b.gpus[0].state.max_sm_mhz = 1755;
  EXPECT_FALSE(PairWindows(a, b, Policy{}, true).paired);
  b = Window(2000, 2000, "boot-2");
  b.gpus[0].state.persistence = false;
  EXPECT_FALSE(PairWindows(a, b, Policy{}, true).paired);
  EXPECT_FALSE(PairWindows(a, Window(2000, 2030, "boot-2"), Policy{}, true).paired);
}

TEST(Pair, InvalidWindowDoesNotPair) {
  auto b = Window(2000, 2000);
  b.verdict.status = WindowStatus::kInvalid;
  EXPECT_FALSE(PairWindows(Window(2000, 2000), b, Policy{}, false).paired);
}

TEST(Summary, RoundTripsThroughJson) {
  auto w = Window(1470, 1455.5);
  w.simulated = true;
  w.device = "simulated";
  w.command = {"sleep", "1"};
  auto back = WindowSummaryFromJson(ToJson(w), "test");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->gpus[0].fold.sm_mhz->mean, 1455.5);
  EXPECT_EQ(back->gpus[0].state.uuid, "GPU-1");
  EXPECT_TRUE(back->simulated);
}

TEST(Summary, UnknownSchemaVersionAndMissingFieldsAreErrors) {
  auto j = ToJson(Window(2000, 2000));
  j["schema_version"] = 7;
  auto r = WindowSummaryFromJson(j, "w.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("schema version 7"), std::string::npos);
  auto k = ToJson(Window(2000, 2000));
  k.erase("gpus");
  auto s = WindowSummaryFromJson(k, "w.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("w.json"), std::string::npos);
}

TEST(Summary, CheckedReadIsTheFullReadAndStillChecksTheHeader) {
  // For a window whose schema a record's check walked already: the same summary, and the
  // header (which the schema does not fix) still refused when it is not a window's.
  auto w = Window(1470, 1455.5);
  w.command = {"sleep", "1"};
  const auto j = ToJson(w);
  auto full = WindowSummaryFromJson(j, "w");
  auto checked = WindowSummaryFromCheckedJson(j, "w");
  ASSERT_TRUE(full.ok() && checked.ok());
  EXPECT_EQ(ToJson(*checked), ToJson(*full));
  auto k = j;
  k["schema_version"] = 7;
  ASSERT_FALSE(WindowSummaryFromCheckedJson(k, "w.json").ok());
  k = j;
  k["schema"] = "vouch.record";
  auto r = WindowSummaryFromCheckedJson(k, "w.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("w.json: not a vouch window summary"), std::string::npos);
}

}  // namespace
}  // namespace vouch

namespace vouch {
namespace {

// Seed 000's #1103: the leg's own allocations filled the GPU. The check before the leg saw
// free memory; the window's peak says the leg came within the policy's margin of the total.
TEST(Window, PeakMemoryNearTheTotalIsAWarning) {
  WindowSummary w = Window(1980, 1980);
  GpuWindow& g = w.gpus[0];
  g.state.total_mem_bytes = 150754820096ull;     // the H200's
  g.fold.peak_mem_used_bytes = 148000000000ull;  // 98.2 %
  Policy p;
  p.min_busy_readings = 5;
  WindowVerdict v = JudgeWindow(w.gpus, p, "");
  EXPECT_EQ(v.status, WindowStatus::kValid);  // a warning, not a refusal
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("peak memory used 137.84 of 140.40 GiB (98.2 %) is within 2 % of "
                               "the GPU's total"),
            std::string::npos)
      << v.warnings[0];
  g.fold.peak_mem_used_bytes = 140000000000ull;  // 92.9 %: headroom
  EXPECT_TRUE(JudgeWindow(w.gpus, p, "").warnings.empty());
  p.memory_margin = 0.08;  // a wider margin is a policy choice
  EXPECT_EQ(JudgeWindow(w.gpus, p, "").warnings.size(), 1u);
  // Kept through the window's JSON (the record holds it).
  w.policy = p;
  w.verdict = JudgeWindow(w.gpus, p, "");
  auto back = WindowSummaryFromJson(ToJson(w), "w");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->verdict.warnings, w.verdict.warnings);
  EXPECT_EQ(back->policy.memory_margin, 0.08);
}

}  // namespace
}  // namespace vouch
