#include "throttle/throttle.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace vouch {
namespace {

// The H100 of issue 38: a 10.01 s bf16 GEMM loop, power-capped 9.90 s of it.
std::pair<EdgeReading, EdgeReading> GemmLoop() {
  EdgeReading b, e;
  b.unix_s = 1000.0;
  e.unix_s = 1010.01;
  b.violation_ns = {{ThrottleCause::kPower, 5'000'000'000ull},
                    {ThrottleCause::kThermal, 0},
                    {ThrottleCause::kLowUtilization, 7'000'000'000ull},
                    {ThrottleCause::kTotalAppClocks, 12'000'000'000ull}};
  e.violation_ns = {{ThrottleCause::kPower, 14'900'000'000ull},
                    {ThrottleCause::kThermal, 0},
                    {ThrottleCause::kLowUtilization, 7'050'000'000ull},
                    {ThrottleCause::kTotalAppClocks, 21'950'000'000ull}};
  e.power_instant_w = 702;
  e.power_average_w = 699;
  e.errors = {"nvmlDeviceGetViolationStatus(SYNC_BOOST): Not Supported"};
  return {b, e};
}

TEST(Throttle, SecondsAndSharePerCauseBetweenTheEdges) {
  auto [b, e] = GemmLoop();
  auto f = FoldEdges(b, e);
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->region_s, 10.01, 1e-9);
  ASSERT_EQ(f->causes.size(), 4u);
  EXPECT_EQ(f->causes[0].cause, ThrottleCause::kPower);
  EXPECT_NEAR(f->causes[0].seconds, 9.90, 1e-9);
  EXPECT_NEAR(f->causes[0].share, 9.90 / 10.01, 1e-12);
  auto worst = WorstJudgedCause(*f);
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->cause, ThrottleCause::kPower) << "the app-clocks total includes idle time";
  EXPECT_EQ(DescribeCause(*worst, f->region_s),
            "power-capped 98.9 % of the region (9.90 s of 10.01 s, NVML_PERF_POLICY_POWER)");
  EXPECT_EQ(f->notes,
            std::vector<std::string>{"nvmlDeviceGetViolationStatus(SYNC_BOOST): Not Supported"});
  auto line = RenderThrottleLine(*f);
  EXPECT_EQ(line,
            "driver counters over 10.01 s: power-capped 98.9 % (9.90 s), thermally throttled 0.0 % "
            "(0.00 s), at low utilization 0.5 % (0.05 s); power at the end 702 W instant 699 W "
            "1-s average (the window's power figures are the 1-s average)");
}

// The H100 of 2026-12-06 (evidence/2026-12-06-roof-throttle-region): a bf16 GEMM loop in a
// 14.23 s window that holds PyTorch's start-up. The below-base total (82.6 %) holds the idle
// start-up too; the cause is the power cap (72.4 %), and it is the one that decides.
TEST(Throttle, TheBelowBaseTotalHoldsIdleTimeAndIsNotTheCause) {
  EdgeReading b, e;
  b.unix_s = 2000.0;
  e.unix_s = 2014.228184938;
  b.violation_ns = {{ThrottleCause::kPower, 0},
                    {ThrottleCause::kLowUtilization, 0},
                    {ThrottleCause::kTotalAppClocks, 0},
                    {ThrottleCause::kTotalBaseClocks, 0}};
  e.violation_ns = {{ThrottleCause::kPower, 10'300'395'360ull},
                    {ThrottleCause::kLowUtilization, 2'234'217'696ull},
                    {ThrottleCause::kTotalAppClocks, 12'172'659'360ull},
                    {ThrottleCause::kTotalBaseClocks, 11'748'066'880ull}};
  auto f = FoldEdges(b, e);
  ASSERT_TRUE(f);
  auto worst = WorstJudgedCause(*f);
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->cause, ThrottleCause::kPower);
  auto why = ThrottleRefusal(*f, 0.5);
  ASSERT_TRUE(why);
  EXPECT_EQ(why->rfind("power-capped 72.4 % of the region (10.30 s of 14.23 s, "
                       "NVML_PERF_POLICY_POWER), above the policy's 50.0 %",
                       0),
            0u)
      << *why;
  EXPECT_FALSE(ThrottleRefusal(*f, 0.75)) << "below base 82.6 % is not a cause";
}

TEST(Throttle, AboveThePolicyShareIsRefusedNamingTheCounter) {
  auto [b, e] = GemmLoop();
  auto f = *FoldEdges(b, e);
  EXPECT_FALSE(ThrottleRefusal(f, 0.99));
  auto why = ThrottleRefusal(f, 0.5);
  ASSERT_TRUE(why);
  EXPECT_EQ(why->rfind("power-capped 98.9 % of the region (9.90 s of 10.01 s, "
                       "NVML_PERF_POLICY_POWER), above the policy's 50.0 % (--max-throttled-pct), "
                       "by the driver's own counter NVML_PERF_POLICY_POWER",
                       0),
            0u)
      << *why;
  // Idle time alone (low utilization) never refuses a window.
  EdgeReading ib = b, ie = e;
  ib.violation_ns = {{ThrottleCause::kLowUtilization, 0}};
  ie.violation_ns = {{ThrottleCause::kLowUtilization, 10'000'000'000ull}};
  auto idle = FoldEdges(ib, ie);
  ASSERT_TRUE(idle);
  EXPECT_FALSE(ThrottleRefusal(*idle, 0.1));
}

TEST(Throttle, BackwardsOneSidedOrMissingCountersAreNotCounted) {
  auto [b, e] = GemmLoop();
  e.violation_ns[ThrottleCause::kPower] = 1;  // the driver reloaded
  e.violation_ns.erase(ThrottleCause::kThermal);
  auto f = FoldEdges(b, e);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->causes.size(), 2u);
  EXPECT_EQ(f->notes[0],
            "NVML_PERF_POLICY_POWER went backwards (5000000000 ns to 1 ns: the driver reloaded?); "
            "not counted");
  EXPECT_EQ(f->notes[1], "NVML_PERF_POLICY_THERMAL was read at one edge only");
  EdgeReading none_b, none_e;
  none_b.unix_s = 1;
  none_e.unix_s = 2;
  EXPECT_FALSE(FoldEdges(none_b, none_e));
  EXPECT_FALSE(FoldEdges(e, b)) << "edges out of order";
  // A counter that ran past the edges a little is clamped to the region.
  EdgeReading cb, ce;
  cb.unix_s = 0;
  ce.unix_s = 1;
  cb.violation_ns = {{ThrottleCause::kThermal, 0}};
  ce.violation_ns = {{ThrottleCause::kThermal, 1'020'000'000ull}};
  EXPECT_DOUBLE_EQ(FoldEdges(cb, ce)->causes[0].share, 1.0);
}

TEST(Throttle, JsonRoundTripAndHostileInput) {
  auto [b, e] = GemmLoop();
  auto f = *FoldEdges(b, e);
  auto j = ToJson(f);
  EXPECT_EQ(j["worst"]["cause"], "power");
  EXPECT_EQ(j["causes"]["power"]["counter"], "NVML_PERF_POLICY_POWER");
  auto back = ThrottleFoldFromJson(j, "window.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->causes.size(), 4u);
  EXPECT_NEAR(back->causes[0].seconds, 9.90, 1e-9);
  EXPECT_EQ(back->power_instant_w_end, 702);
  auto bad = j;
  bad["causes"]["warp_drive"] = {{"seconds", 1}, {"share", 0.1}};
  EXPECT_EQ(ThrottleFoldFromJson(bad, "w.json")->causes.size(), 4u) << "a newer counter is skipped";
  bad = j;
  bad["causes"]["power"]["share"] = 3;
  EXPECT_FALSE(ThrottleFoldFromJson(bad, "w.json").ok());
  bad = j;
  bad["region_s"] = "long";
  EXPECT_FALSE(ThrottleFoldFromJson(bad, "w.json").ok());
}

}  // namespace
}  // namespace vouch
