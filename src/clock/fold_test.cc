#include "clock/fold.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "clock/window.h"

namespace vouch {
namespace {

constexpr const char* kScenario = VOUCH_FIXTURES_DIR "/nvml_h200_scenario.jsonl";

// A synthetic stream polled every 10 ms where the driver updates every 100 ms: each reading
// holds for ten polls. BUSY readings, then IDLE readings. Clocks come from SM(i).
template <class F>
std::vector<Sample> Stream(int busy, int idle, F sm_of_reading, int polls_per_reading = 10) {
  std::vector<Sample> out;
  int n = busy + idle;
  for (int r = 0; r < n; ++r) {
    for (int k = 0; k < polls_per_reading; ++k) {
      Sample s;
      s.t_s = (r * polls_per_reading + k) * 0.01;
      s.unix_s = 1000 + s.t_s;
      bool b = r < busy;
      s.sm_mhz = b ? sm_of_reading(r) : 345;
      s.mem_mhz = 3201;
      s.power_mw = 400000 + r;  // power changes at every driver update, as on the H200
      s.util_gpu_pct = b ? 99 : 0;
      s.util_mem_pct = b ? 40 : 0;
      s.reasons = b ? 0 : 1;
      out.push_back(s);
    }
  }
  return out;
}

std::vector<Sample> Flat(int busy, int idle) {
  return Stream(busy, idle, [](int) { return 1980; });
}

Fold FoldOf(const std::vector<Sample>& s) { return FoldWindow(s, Policy{}); }
WindowStatus Judge(const Fold& f) {
  return JudgeWindow({{StaticState{}, f, false, {}}}, Policy{}).status;
}

TEST(Readings, CountsDriverUpdatesNotPolls) {
  auto f = FoldOf(Flat(30, 0));
  EXPECT_EQ(f.polls, 300);
  EXPECT_EQ(f.readings, 30);
  EXPECT_EQ(f.busy_readings, 30);
  EXPECT_TRUE(f.period_measured);
  EXPECT_NEAR(f.update_period_s, 0.1, 1e-9);
  EXPECT_EQ(f.missed_readings, 0);
}

TEST(Readings, ThirtyBusyPollsAreOnlyThreeReadings) {
  auto f = FoldOf(Flat(3, 0));
  EXPECT_EQ(f.polls, 30);
  EXPECT_EQ(f.busy_readings, 3);
  EXPECT_EQ(Judge(f), WindowStatus::kInvalid);
}

TEST(Readings, EveryPollIsAReadingWhenTheDeviceUpdatesFaster) {
  auto s = Stream(
      40, 0, [](int) { return 1980; }, 1);
  auto f = FoldOf(s);
  EXPECT_EQ(f.readings, 40);
  EXPECT_EQ(f.busy_readings, 40);
}

TEST(Readings, GapsBetweenPollsAreMissedNotCounted) {
  auto s = Flat(40, 0);
  // The sampler stalls for 0.5 s: drop polls 100..149 and shift nothing.
  s.erase(s.begin() + 100, s.begin() + 150);
  auto f = FoldOf(s);
  EXPECT_EQ(f.missed_readings, 4);
  EXPECT_EQ(f.readings, 36);
}

TEST(Readings, AHugeGapSaturatesTheCountsInsteadOfOverflowing) {
  // t_s jumping by 1e11 s at a 10 ms poll used to overflow an int (UBSan) and print
  // negative counts; the counts now stop at a billion, far past any real window.
  std::vector<Sample> s = Flat(3, 0);
  Sample far = s.back();
  far.t_s = 1e11;
  s.push_back(far);
  Fold f = FoldOf(s);
  EXPECT_GE(f.missed_readings, 0);
  EXPECT_EQ(f.missed_readings, 999999999);
  EXPECT_GE(f.readings, 1);
}

TEST(Rules, BusyFloorAtTheBoundary) {
  EXPECT_EQ(Judge(FoldOf(Flat(29, 0))), WindowStatus::kInvalid);
  EXPECT_EQ(Judge(FoldOf(Flat(30, 0))), WindowStatus::kValid);
}

TEST(Rules, ExactlyHalfBusyIsNotAMajority) {
  auto half = FoldOf(Flat(40, 40));
  EXPECT_EQ(half.busy_readings, 40);
  EXPECT_EQ(half.readings, 80);
  EXPECT_EQ(Judge(half), WindowStatus::kInvalid);
  auto v = JudgeWindow({{StaticState{}, half, false, {}}}, Policy{});
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_NE(v.reasons[0].find("busy readings are 50.00 % of the window"), std::string::npos);
  EXPECT_EQ(Judge(FoldOf(Flat(41, 40))), WindowStatus::kValid);
}

TEST(Rules, SpreadAtFivePercentPassesJustAboveFails) {
  // min 1950, max 2050, median 2000: spread exactly 5 %.
  auto at5 = FoldOf(Stream(31, 0, [](int r) { return r == 0 ? 1950 : r == 1 ? 2050 : 2000; }));
  ASSERT_TRUE(at5.spread);
  EXPECT_NEAR(*at5.spread, 0.05, 1e-12);
  EXPECT_EQ(Judge(at5), WindowStatus::kValid);
  auto above = FoldOf(Stream(31, 0, [](int r) { return r == 0 ? 1950 : r == 1 ? 2051 : 2000; }));
  EXPECT_GT(*above.spread, 0.05);
  EXPECT_EQ(Judge(above), WindowStatus::kInvalid);
}

TEST(Rules, AllIdleIsIdle) {
  auto f = FoldOf(Flat(0, 50));
  EXPECT_EQ(f.busy_readings, 0);
  EXPECT_FALSE(f.sm_mhz.has_value());
  EXPECT_EQ(Judge(f), WindowStatus::kIdle);
}

TEST(Rules, IdleBitClearButUtilizationZeroIsNotBusy) {
  Sample s;
  s.reasons = 0;
  s.util_gpu_pct = 0;
  EXPECT_FALSE(IsBusy(s));
  s.util_gpu_pct = 1;
  EXPECT_TRUE(IsBusy(s));
  s.reasons = 1;
  EXPECT_FALSE(IsBusy(s));
  s.reasons.reset();  // reasons unsupported: utilization alone
  EXPECT_TRUE(IsBusy(s));
}

TEST(Stats, MeanAndMedianAreOverReadings) {
  // 20 readings at 2000 and 11 at 1900: the median is 2000, the mean is lower.
  auto f = FoldOf(Stream(31, 0, [](int r) { return r < 20 ? 2000 : 1900; }));
  ASSERT_TRUE(f.sm_mhz);
  EXPECT_EQ(f.sm_mhz->median, 2000);
  EXPECT_NEAR(f.sm_mhz->mean, (20 * 2000 + 11 * 1900) / 31.0, 1e-9);
  EXPECT_EQ(f.sm_mhz->min, 1900);
}

class Scenario : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = ReadSampleStream(kScenario);
    ASSERT_TRUE(r.ok()) << r.error().message;
    samples_ = new std::vector<Sample>(std::move(*r));
  }
  static void TearDownTestSuite() { delete samples_; }
  static Fold Between(double a, double b) { return FoldOf(Slice(*samples_, a, b)); }
  static std::vector<Sample>* samples_;
};
std::vector<Sample>* Scenario::samples_ = nullptr;

TEST_F(Scenario, UpdatePeriodIs100ms) {
  auto f = Between(1795946971.36, 1795946983.28);
  EXPECT_TRUE(f.period_measured);
  EXPECT_NEAR(f.update_period_s, 0.1, 0.002);
  EXPECT_EQ(f.missed_readings, 0);
}

TEST_F(Scenario, CopySegmentIsAccepted) {
  auto f = Between(1795946971.36, 1795946983.28);
  ASSERT_TRUE(f.sm_mhz);
  EXPECT_EQ(f.sm_mhz->min, 1980);
  EXPECT_EQ(f.sm_mhz->max, 1980);
  EXPECT_EQ(*f.spread, 0.0);
  EXPECT_GE(f.busy_readings, 30);
  EXPECT_GT(f.busy_fraction, 0.5);
  EXPECT_EQ(Judge(f), WindowStatus::kValid);
}

TEST_F(Scenario, MatrixSegmentIsRefusedForSpread) {
  auto f = Between(1795946955.64, 1795946969.35);
  ASSERT_TRUE(f.sm_mhz);
  EXPECT_EQ(f.sm_mhz->min, 1215);
  EXPECT_EQ(f.sm_mhz->max, 1980);
  EXPECT_GT(*f.spread, 0.05);
  auto v = JudgeWindow({{StaticState{}, f, false, {}}}, Policy{});
  EXPECT_EQ(v.status, WindowStatus::kInvalid);
  bool spread_reason = false;
  for (const auto& r : v.reasons)
    if (r.find("SM clock spread") != std::string::npos &&
        r.find("sw_power_cap") != std::string::npos)
      spread_reason = true;
  EXPECT_TRUE(spread_reason) << "the refusal must name the spread and the power cap";
  EXPECT_GT(f.busy_fraction_by_reason.at("sw_power_cap"), 0.9);
}

TEST_F(Scenario, MatrixSteadyPartAloneIsRefusedAtSevenPercent) {
  auto f = Between(1795946963.6, 1795946968.3);
  ASSERT_TRUE(f.sm_mhz);
  EXPECT_GE(f.busy_readings, 30);
  EXPECT_GT(f.busy_fraction, 0.9);
  EXPECT_EQ(f.sm_mhz->min, 1395);
  EXPECT_EQ(f.sm_mhz->max, 1500);
  EXPECT_NEAR(*f.spread, 0.07, 0.005);
  EXPECT_EQ(Judge(f), WindowStatus::kInvalid);
}

TEST_F(Scenario, AfterTheMatrixProductsIsIdle) {
  // The idle bit is clear for ~1.4 s with the clock at max, but utilization is 0.
  auto s = Slice(*samples_, 1795946969.40, 1795946970.75);
  int idle_bit_clear = 0;
  for (const auto& x : s) idle_bit_clear += (*x.reasons & 1) == 0;
  EXPECT_GE(idle_bit_clear, 100);  // at least 1 s of polls
  auto f = FoldOf(s);
  EXPECT_EQ(f.busy_readings, 0);
  EXPECT_EQ(Judge(f), WindowStatus::kIdle);
}

}  // namespace
}  // namespace vouch

namespace vouch {
namespace {

// --interval-ms 250 against a driver that updates every 100 ms: every poll sees a new value,
// so the spacing of changes is the poll interval. It used to be reported as "update period
// 250 ms measured, missed 0"; the readings between polls are missed and must be said so.
TEST(Fold, PollsSlowerThanTheDriverCountTheReadingsTheyMiss) {
  std::vector<Sample> polls;
  for (int i = 0; i < 40; ++i) {  // 10 s of 250 ms polls
    Sample s;
    s.t_s = i * 0.25;
    s.unix_s = 1000 + s.t_s;
    s.sm_mhz = 1980;
    s.mem_mhz = 3201;
    s.power_mw = 400000 + 3 * i;  // a new driver value at every poll
    s.util_gpu_pct = 99;
    s.reasons = 0;
    polls.push_back(s);
  }
  Fold f = FoldWindow(polls, Policy{});
  EXPECT_TRUE(f.polls_slower_than_updates);
  EXPECT_FALSE(f.period_measured);
  EXPECT_DOUBLE_EQ(f.update_period_s, 0.1);
  EXPECT_DOUBLE_EQ(f.poll_interval_s, 0.25);
  EXPECT_EQ(f.readings, 40);         // each poll saw one reading
  EXPECT_EQ(f.missed_readings, 60);  // 10 s at 100 ms is 100 readings
  EXPECT_EQ(f.busy_readings, 40);
  GpuWindow g;
  g.fold = f;
  Policy p;
  p.min_busy_readings = 5;
  WindowVerdict v = JudgeWindow({g}, p, "");
  ASSERT_FALSE(v.warnings.empty());
  EXPECT_NE(v.warnings[0].find("polled every 250 ms, slower than the driver's update period "
                               "(100 ms, the policy's: polls this slow cannot measure it): about "
                               "60 of 100 readings were missed"),
            std::string::npos)
      << v.warnings[0];
  // Round trip through the window JSON.
  auto back = FoldFromJson(ToJson(f), "f");
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->polls_slower_than_updates);
  EXPECT_EQ(back->missed_readings, 60);
  // Polls at 10 ms of the same driver: nothing is missed and the period is measured.
  Fold fast = FoldWindow(Stream(30, 0, [](int) { return 1980; }), Policy{});
  EXPECT_FALSE(fast.polls_slower_than_updates);
  EXPECT_TRUE(fast.period_measured);
  EXPECT_EQ(fast.missed_readings, 0);
}

}  // namespace
}  // namespace vouch

namespace vouch {
namespace {

// The driver's own timestamps (nvmlDeviceGetSamples) count the readings no poll saw.
TEST(Fold, DriverSamplesCountTheReadingsThePollsMissed) {
  std::vector<DriverSample> driver;
  for (int i = 0; i < 100; ++i)  // a reading every 100 ms for 10 s
    driver.push_back({static_cast<std::uint64_t>((1000.0 + i * 0.1) * 1e6 + 0.5), 400.0 + i});
  auto polls_every = [](double step) {
    std::vector<Sample> out;
    for (double t = 0; t < 10 - 1e-9; t += step) {
      Sample s;
      s.unix_s = 1000 + t + 0.001;
      out.push_back(s);
    }
    return out;
  };
  auto slow = CountDriverReadings("power", driver, polls_every(0.25), 1000, 1010);
  ASSERT_TRUE(slow.has_value());
  EXPECT_EQ(slow->readings, 100);
  EXPECT_NEAR(slow->period_s, 0.1, 1e-6);
  EXPECT_EQ(slow->missed, 60);  // 40 polls see 40 of the 100
  auto fast = CountDriverReadings("power", driver, polls_every(0.01), 1000, 1010);
  EXPECT_EQ(fast->missed, 0);
  EXPECT_FALSE(CountDriverReadings("power", driver, polls_every(0.01), 2000, 2010).has_value());
}

}  // namespace
}  // namespace vouch
