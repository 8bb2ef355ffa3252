#include "metrics/headline.h"

#include <gtest/gtest.h>

#include "metrics/formats.h"
#include "metrics/metrics_test_util.h"

namespace vouch {
namespace {

using metrics_test::ReadData;

// nvbench lists CPU time before GPU time: the first metric with a direction was CPU time.
TEST(Headline, NvbenchIsGpuTime) {
  auto ms = ParseNvbench(ReadData("nvbench.json"), "nv.json");
  ASSERT_TRUE(ms.ok());
  auto h = ChooseHeadline(*ms);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->name, "simple[Device=0].nv/cold/time/gpu/mean");
  EXPECT_TRUE(h->by_tool);
  EXPECT_NE(h->reason.find("GPU time"), std::string::npos) << h->reason;
}

TEST(Headline, GbenchIsRealTimeOfTheFirstBenchmark) {
  auto ms = ParseGoogleBenchmark(ReadData("gbench.json"), "gb.json");
  ASSERT_TRUE(ms.ok());
  auto h = ChooseHeadline(*ms);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->name, "BM_StringCopy/64/repeats:3.real_time");
  EXPECT_NE(h->reason.find("real time per iteration"), std::string::npos);
  // Only aggregates (--benchmark_report_aggregates_only): the median.
  auto agg = ParseGoogleBenchmark(
      R"({"benchmarks":[{"name":"BM_A_mean","aggregate_name":"mean","real_time":2,"cpu_time":1,
      "time_unit":"ns"},{"name":"BM_A_median","aggregate_name":"median","real_time":3,
      "cpu_time":1,"time_unit":"ns"}]})",
      "g");
  ASSERT_TRUE(agg.ok()) << agg.error().message;
  EXPECT_EQ(ChooseHeadline(*agg)->name, "BM_A_median.real_time");
}

TEST(Headline, LlamaBenchIsTokenGeneration) {
  auto ms = ParseLlamaBench(ReadData("llama_bench.json"), "lb.json");
  ASSERT_TRUE(ms.ok());
  auto h = ChooseHeadline(*ms);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->name.substr(0, 5), "tg128");
  EXPECT_EQ(h->name.substr(h->name.size() - 13), ".tokens_per_s");
  EXPECT_NE(h->reason.find("decode"), std::string::npos);
}

TEST(Headline, VllmIsOutputThroughput) {
  auto ms = ParseVllmBenchServe(ReadData("vllm_bench_serve.json"), "v.json");
  ASSERT_TRUE(ms.ok());
  EXPECT_EQ(ChooseHeadline(*ms)->name, "output_throughput");
}

TEST(Headline, OtherwiseTheFirstWithADirectionAndNeverVouchOwn) {
  std::vector<Metric> ms = {
      {"vouch.wall_s", 1, "s", Better::kLower, "vouch", {}, std::nullopt},
      {"checksum", 0, "", Better::kNone, "channel line 1", {}, std::string("abc")},
      {"count", 3, "", Better::kNone, "channel line 2", {}, std::nullopt},
      {"step_ms", 3, "ms", Better::kLower, "channel line 3", {}, std::nullopt}};
  auto h = ChooseHeadline(ms);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->name, "step_ms");
  EXPECT_FALSE(h->by_tool);
  EXPECT_NE(h->reason.find("the first metric with a direction"), std::string::npos);
  ms.pop_back();
  EXPECT_FALSE(ChooseHeadline(ms).has_value());
}

}  // namespace
}  // namespace vouch
