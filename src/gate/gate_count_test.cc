#include "gate/gate_count.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace vouch {
namespace {

ClockState Clock() { return {"GPU-1", "boot-1", "570.86.15", 1980.0, 1975.0, true}; }

EnvLookup NoEnv() {
  return [](const std::string&) { return std::optional<std::string>(); };
}

// vllm's throughput as the headline and its `failed` count as a secondary (warn 5 %), as
// `vouch baseline` pins a vllm result.
Baseline VllmBaseline(double failed) {
  Baseline b;
  b.headline = "output_throughput";
  BaselineMetric tput;
  tput.name = "output_throughput";
  tput.value = 124.5;
  tput.unit = "tok/s";
  tput.better = Better::kHigher;
  tput.fail_pct = 3.0;
  tput.trials = {124.5, 124.5, 124.5};  // no noise: the medians decide
  BaselineMetric f;
  f.name = "failed";
  f.value = failed;
  f.unit = "count";
  f.better = Better::kLower;
  f.warn_pct = 5.0;
  f.trials = {failed, failed, failed};
  b.metrics = {tput, f};
  b.clock = Clock();
  b.trials = 3;
  return b;
}

std::map<std::string, CurrentMetric> Now(double failed) {
  return {{"output_throughput", {124.5, "tok/s"}},
          {"failed", {failed, "count", {failed, failed, failed}}}};
}

const GateRow& Failed(const GateReport& r) { return r.rows.at(1); }

TEST(GateCount, CountMetricsAreKnownByUnitOrName) {
  EXPECT_TRUE(IsCountMetric("failed", "count"));
  EXPECT_TRUE(IsCountMetric("whatever", "requests"));
  EXPECT_TRUE(IsCountMetric("num_preemptions", ""));
  EXPECT_TRUE(IsCountMetric("decode.errors", ""));
  EXPECT_FALSE(IsCountMetric("p99_ttft_ms", "ms"));
  EXPECT_FALSE(IsCountMetric("failed", "ms"));  // a unit that is not a count wins
  EXPECT_FALSE(IsCountMetric("latency", ""));
}

TEST(GateCount, ZeroFailedRequestsUnchangedPasses) {
  auto r = CompareToBaseline(VllmBaseline(0), Now(0), Clock(), NoEnv());
  EXPECT_EQ(Failed(r).verdict, GateVerdict::kPass) << Failed(r).note;
  EXPECT_EQ(Failed(r).change_count, 0.0);
  EXPECT_FALSE(Failed(r).change_pct.has_value());
  EXPECT_EQ(Failed(r).threshold, "count: warn > +0");
  EXPECT_EQ(r.overall, GateVerdict::kPass);
  EXPECT_EQ(GateExitCode(r), 0);
}

TEST(GateCount, OneMoreFailedRequestWarnsAndSaysHowToFail) {
  auto r = CompareToBaseline(VllmBaseline(0), Now(1), Clock(), NoEnv());
  EXPECT_EQ(Failed(r).verdict, GateVerdict::kWarn);
  EXPECT_EQ(Failed(r).note,
            "0 -> 1: a count of 0 warns on any increase; to fail past N more, give --fail-count "
            "N");
  EXPECT_EQ(*Failed(r).change_count, 1.0);
  EXPECT_EQ(r.overall, GateVerdict::kWarn);
  EXPECT_EQ(GateExitCode(r), 0);
  // The text and JSON say the change as a count.
  EXPECT_NE(RenderGateText(r).find("+1 (count)"), std::string::npos) << RenderGateText(r);
  auto j = nlohmann::json::parse(RenderGateJson(r));
  EXPECT_EQ(j["rows"][1]["change_count"], 1.0);
  EXPECT_TRUE(j["rows"][1]["change_pct"].is_null());
}

GateReport Gate(const Baseline& b, double now, std::optional<double> fail_count) {
  return CompareToBaseline(b, Now(now), Clock(), NoEnv(), std::nullopt, GateOptions{fail_count});
}

TEST(GateCount, BeyondTheCountThresholdFails) {
  auto at = [](double now) { return Gate(VllmBaseline(0), now, 2); };
  EXPECT_EQ(Failed(at(2)).verdict, GateVerdict::kWarn);  // not beyond 2
  EXPECT_EQ(Failed(at(2)).note, "0 -> 2: a count of 0 warns on any increase; it fails beyond 2");
  auto r = at(3);
  EXPECT_EQ(Failed(r).verdict, GateVerdict::kFail);
  EXPECT_EQ(Failed(r).note, "0 -> 3: beyond the count threshold of 2");
  EXPECT_EQ(Failed(r).threshold, "count: warn > +0, fail > +2");
  EXPECT_EQ(GateExitCode(r), 1);
}

TEST(GateCount, ANonZeroBaselineKeepsPercentAndTheCountThreshold) {
  // 4 -> 5 is +25 %: past the 5 % warn; fail_count 2 is not passed.
  auto r = Gate(VllmBaseline(4), 5, 2);
  EXPECT_EQ(Failed(r).verdict, GateVerdict::kWarn);
  EXPECT_NEAR(*Failed(r).change_pct, 25.0, 1e-9);
  EXPECT_EQ(Failed(r).threshold, "warn > +5%, fail > +2 (count)");
  EXPECT_EQ(r.rows[0].threshold, "fail < -2.91% (1/1.03)");  // not a count: no count threshold
  r = Gate(VllmBaseline(4), 7, 2);
  EXPECT_EQ(Failed(r).verdict, GateVerdict::kFail);
  EXPECT_EQ(Failed(r).note, "4 -> 7: beyond the count threshold of 2");
}

TEST(GateCount, FewerFailuresAndACountWithoutThresholdPass) {
  auto r = CompareToBaseline(VllmBaseline(3), Now(0), Clock(), NoEnv());
  EXPECT_EQ(Failed(r).verdict, GateVerdict::kPass);
  Baseline b = VllmBaseline(0);
  b.metrics[1].warn_pct.reset();
  r = CompareToBaseline(b, Now(5), Clock(), NoEnv());
  EXPECT_EQ(Failed(r).verdict, GateVerdict::kPass);
  EXPECT_EQ(Failed(r).threshold, "none");
}

TEST(GateCount, AZeroBaselineOfAnotherMetricIsStillAnError) {
  Baseline b = VllmBaseline(0);
  b.metrics[1].unit = "ms";
  b.metrics[1].fail_pct = 5.0;  // one that can fail (a warn-only one pinned at 0 is skipped)
  auto r = CompareToBaseline(b, {{"output_throughput", {124.5, "tok/s"}}, {"failed", {0, "ms"}}},
                             Clock(), NoEnv());
  EXPECT_EQ(Failed(r).verdict, GateVerdict::kError);
  b.metrics[1].fail_pct.reset();
  auto warn_only = CompareToBaseline(
      b, {{"output_throughput", {124.5, "tok/s"}}, {"failed", {0, "ms"}}}, Clock(), NoEnv());
  EXPECT_EQ(Failed(warn_only).verdict, GateVerdict::kSkipped);
  EXPECT_EQ(GateExitCode(warn_only), 0);
}

}  // namespace
}  // namespace vouch
