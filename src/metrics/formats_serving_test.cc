#include "metrics/formats_serving.h"

#include <gtest/gtest.h>

#include "metrics/formats.h"
#include "util/fs.h"

namespace vouch {
namespace {

std::string Serving(const std::string& name) {
  auto t = ReadFile(std::string(VOUCH_SOURCE_DIR "/tests/data/serving/") + name);
  EXPECT_TRUE(t) << name;
  return t ? *t : std::string();
}

const Metric& Named(const std::vector<Metric>& ms, const std::string& name) {
  const Metric* m = FindMetric(ms, name);
  EXPECT_NE(m, nullptr) << name;
  static const Metric none;
  return m ? *m : none;
}

// --save-detailed: the per-request times (seconds in the file) give the slowest request of
// each, in ms, with no direction: numpy's p99 of 50 is not the slowest request.
TEST(VllmRequests, DetailedResultGivesTheSlowestRequests) {
  auto r = ParseVllmBenchServe(Serving("vllm_serve_50_detailed.json"), "r.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_DOUBLE_EQ(Named(*r, "p99_ttft_ms").value, 126.67309796463141);
  const Metric& slowest = Named(*r, "max_ttft_ms");
  EXPECT_DOUBLE_EQ(slowest.value, 131.02945093834217);
  EXPECT_EQ(slowest.unit, "ms");
  EXPECT_EQ(slowest.better, Better::kNone);
  EXPECT_DOUBLE_EQ(Named(*r, "max_e2el_ms").value, 3969.5135995708524);
  EXPECT_NEAR(Named(*r, "max_tpot_ms").value, 30.555, 5e-4);
  EXPECT_EQ(FindMetric(*r, "max_itl_ms"), nullptr);  // over tokens, not requests
  EXPECT_EQ(Named(*r, "completed").value, 50);
  EXPECT_EQ(Named(*r, "failed").value, 0);
  auto times =
      ReadVllmRequestTimes(nlohmann::json::parse(Serving("vllm_serve_50_detailed.json")), "r.json");
  ASSERT_TRUE(times) << times.error().message;
  ASSERT_EQ(times->ttft_ms.size(), 50u);
  EXPECT_DOUBLE_EQ(times->ttft_ms.front(), 44.78390499762511);
  EXPECT_EQ(times->tpot_ms.size(), 50u);
}

TEST(VllmRequests, FailedRequestsAreNotTimes) {
  auto r = ParseVllmBenchServe(Serving("vllm_serve_failed_detailed.json"), "r.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(Named(*r, "completed").value, 195);
  EXPECT_EQ(Named(*r, "failed").value, 5);
  EXPECT_DOUBLE_EQ(Named(*r, "max_ttft_ms").value, 147.40357629950793);
  auto times = ReadVllmRequestTimes(
      nlohmann::json::parse(Serving("vllm_serve_failed_detailed.json")), "r.json");
  ASSERT_TRUE(times) << times.error().message;
  ASSERT_EQ(times->ttft_ms.size(), 195u);  // the 5 with an error are left out (their ttft is 0)
  EXPECT_DOUBLE_EQ(times->ttft_ms.front(), 34.1325816681811);
}

// Without --save-detailed vllm still saves "latencies": a failed request is one left at 0.
TEST(VllmRequests, LatenciesWithoutDetailAndMetricPercentiles) {
  auto r = ParseVllmBenchServe(Serving("vllm_serve_1000_percentiles.json"), "r.json");
  ASSERT_TRUE(r) << r.error().message;
  for (const char* k : {"p50_ttft_ms", "p90_tpot_ms", "p99_itl_ms", "p99.9_e2el_ms"})
    EXPECT_NE(FindMetric(*r, k), nullptr) << k;
  EXPECT_DOUBLE_EQ(Named(*r, "p99.9_e2el_ms").value, 1122.6338373376866);
  EXPECT_DOUBLE_EQ(Named(*r, "max_e2el_ms").value, 1122.6724007832743);
  EXPECT_EQ(FindMetric(*r, "max_ttft_ms"), nullptr);  // no "ttfts" without detail
  EXPECT_DOUBLE_EQ(Named(*r, "request_goodput").value, 13.165464368709372);
  auto times =
      ReadVllmRequestTimes(nlohmann::json::parse(R"({"latencies": [0.5, 0.0, 0.25]})"), "r.json");
  ASSERT_TRUE(times) << times.error().message;
  EXPECT_EQ(times->e2el_ms, (std::vector<double>{250, 500}));
}

TEST(VllmRequests, MalformedPerRequestArraysAreRefused) {
  auto bad = [](const char* text) {
    return ParseVllmBenchServe(std::string(R"({"request_throughput": 1, )") + text + "}", "r.json");
  };
  auto r = bad(R"("ttfts": [0.1, "x"])");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "r.json: per-request results: \"ttfts\"[1] is not a finite number (got \"x\")");
  r = bad(R"("ttfts": [0.1, 0.2], "latencies": [1.0])");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "r.json: \"latencies\" holds 1 values where another per-request array holds 2");
  r = bad(R"("latencies": [1.0, 2.0], "errors": [""])");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "r.json: \"errors\" is not an array of one entry per request (2)");
  r = bad(R"("latencies": {"a": 1})");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "r.json: per-request results: \"latencies\" is not an array");
}

}  // namespace
}  // namespace vouch
