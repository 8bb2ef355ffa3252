#include "stats/serving_load.h"

#include <gtest/gtest.h>

namespace vouch {
namespace {

ServingLoad Load(std::optional<double> rate, std::optional<double> cap, double n, double d,
                 std::optional<double> w) {
  ServingLoad l;
  l.offered_rate = rate;
  l.max_concurrency = cap;
  l.sent = l.completed = n;
  l.duration_s = d;
  l.mean_latency_s = w;
  return l;
}

TEST(ServingLoad, EverythingAtOnceIsSaturated) {
  auto a = AssessServingLoad(Load(std::nullopt, std::nullopt, 1000, 50, 20));
  EXPECT_EQ(a.verdict, LoadVerdict::kSaturated);
  EXPECT_EQ(a.reason,
            "request_rate inf without max_concurrency: all 1000 requests were offered at once, "
            "so each latency includes its wait behind the others (achieved 20 req/s)");
}

TEST(ServingLoad, AFiniteRateKeptIsValid) {
  // The project's vllm fixture: 200 requests at 1 req/s in 204.45 s, 4.47 s a request.
  auto a = AssessServingLoad(Load(1.0, std::nullopt, 200, 204.45, 4.47));
  EXPECT_EQ(a.verdict, LoadVerdict::kValid);
  EXPECT_EQ(a.reason, "offered 1 req/s, achieved 0.978 req/s");
}

TEST(ServingLoad, ARunThatOutlastsItsScheduleIsSaturated) {
  // 600 requests offered at 20 req/s take 30 s plus one request's 2 s; they took 75 s.
  auto a = AssessServingLoad(Load(20.0, std::nullopt, 600, 75, 2));
  EXPECT_EQ(a.verdict, LoadVerdict::kSaturated);
  EXPECT_EQ(a.reason,
            "offered 20 req/s, achieved 8 req/s: the run took 75 s where its schedule of 600 "
            "requests and one request's 2 s take 32 s (more than 12 % longer): requests queued");
  // Within the margin: 3 / sqrt(600) = 12.2 % over 32 s is 35.9 s.
  EXPECT_EQ(AssessServingLoad(Load(20.0, std::nullopt, 600, 35.8, 2)).verdict, LoadVerdict::kValid);
  EXPECT_EQ(AssessServingLoad(Load(20.0, std::nullopt, 600, 36.0, 2)).verdict,
            LoadVerdict::kSaturated);
  // Few requests: a wider margin (3 / sqrt(50) = 42 %).
  EXPECT_EQ(AssessServingLoad(Load(10.0, std::nullopt, 50, 8.4, 1)).verdict, LoadVerdict::kValid);
}

TEST(ServingLoad, AClientThatSendsLateIsClientBound) {
  ServingLoad l = Load(20.0, std::nullopt, 600, 62, 2);
  l.send_span_s = 60;  // 599 gaps in 60 s: 9.98 req/s sent of 20 offered
  auto a = AssessServingLoad(l);
  EXPECT_EQ(a.verdict, LoadVerdict::kClientBound);
  EXPECT_EQ(a.reason,
            "offered 20 req/s, but the client sent at 9.98 req/s (first to last send 60 s): the "
            "client could not keep its own schedule (more than 12 % slower)");
  l.send_span_s = 30;
  l.duration_s = 32;
  EXPECT_EQ(AssessServingLoad(l).verdict, LoadVerdict::kValid);
  // A concurrency cap holds the sends back: that is the server's pace, not the client's.
  l.send_span_s = 60;
  l.duration_s = 62;
  l.max_concurrency = 8;
  EXPECT_EQ(AssessServingLoad(l).verdict, LoadVerdict::kSaturated);
}

TEST(ServingLoad, AClosedLoopThatCannotFillItsSlotsIsClientBound) {
  ServingLoad l = Load(std::nullopt, 64.0, 1000, 100, std::nullopt);
  l.mean_in_flight = 12;
  auto a = AssessServingLoad(l);
  EXPECT_EQ(a.verdict, LoadVerdict::kClientBound);
  EXPECT_EQ(a.reason,
            "max_concurrency 64, but 12 requests were in flight on average (achieved 10 req/s): "
            "the client, not the server, set the pace");
  l.mean_in_flight = 50;
  EXPECT_EQ(AssessServingLoad(l).verdict, LoadVerdict::kValid);
  // Little's law when the format gives no in-flight count: 10 req/s x 6 s = 60 in flight.
  l.mean_in_flight.reset();
  l.mean_latency_s = 6;
  EXPECT_EQ(AssessServingLoad(l).reason,
            "max_concurrency 64 (60 in flight on average), achieved 10 req/s");
  // Too few requests to fill the loop twice: not judged.
  l.mean_latency_s = 0.5;
  l.sent = l.completed = 100;
  EXPECT_EQ(AssessServingLoad(l).verdict, LoadVerdict::kValid);
}

TEST(ServingLoad, AnInvalidLoadRefusesTheLegsLatencies) {
  auto a = AssessServingLoad(Load(std::nullopt, std::nullopt, 100, 10, 5));
  std::vector<Metric> ms = {
      Metric{"output_throughput", 500, "tok/s", Better::kHigher, "vllm r.json", {}, std::nullopt},
      Metric{"mean_ttft_ms", 90, "ms", Better::kLower, "vllm r.json", {}, std::nullopt},
      Metric{"p99_e2el_ms", 900, "ms", Better::kLower, "vllm r.json", {}, std::nullopt},
      Metric{"duration", 10, "s", Better::kNone, "vllm r.json", {}, std::nullopt},
      ServingLoadMetric(a, "vllm r.json")};
  auto lines = RefuseLatenciesOfAnInvalidLoad(&ms);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "load saturated: request_rate inf without max_concurrency: all 100 requests were "
            "offered at once, so each latency includes its wait behind the others (achieved 10 "
            "req/s); its latencies are not figures (mean_ttft_ms, p99_e2el_ms)");
  ASSERT_EQ(ms.size(), 3u);
  EXPECT_EQ(ms[0].name, "output_throughput");
  EXPECT_EQ(ms[1].name, "duration");
  EXPECT_EQ(ms[2].name, "serving_load");
  // A valid load leaves the latencies alone.
  std::vector<Metric> ok = {
      Metric{"mean_ttft_ms", 90, "ms", Better::kLower, "vllm r.json", {}, std::nullopt},
      ServingLoadMetric(AssessServingLoad(Load(1.0, std::nullopt, 200, 204.45, 4.47)),
                        "vllm r.json")};
  EXPECT_TRUE(RefuseLatenciesOfAnInvalidLoad(&ok).empty());
  EXPECT_EQ(ok.size(), 2u);
  EXPECT_EQ(*ok[1].text, "valid: offered 1 req/s, achieved 0.978 req/s");
}

}  // namespace
}  // namespace vouch
