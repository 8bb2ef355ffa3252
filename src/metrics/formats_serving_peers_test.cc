// SGLang bench_serving and GuideLLM readers on fixtures in their real shapes
// (tests/data/serving/README.md), every field checked against the file.
#include <gtest/gtest.h>

#include "metrics/formats.h"
#include "metrics/formats_serving.h"
#include "stats/percentiles.h"
#include "stats/serving_load.h"
#include "util/fs.h"

namespace vouch {
namespace {

std::string Data(const std::string& name) {
  auto t = ReadFile(std::string(VOUCH_SOURCE_DIR "/tests/data/serving/") + name);
  EXPECT_TRUE(t) << name;
  return t ? *t : std::string();
}

const Metric& Named(const std::vector<Metric>& ms, const std::string& name) {
  for (const auto& m : ms)
    if (m.name == name) return m;
  ADD_FAILURE() << "no metric " << name;
  static const Metric none;
  return none;
}

bool Has(const std::vector<Metric>& ms, const std::string& name) {
  for (const auto& m : ms)
    if (m.name == name) return true;
  return false;
}

TEST(Sglang, TheLastRunOfTheAppendedFileIsRead) {
  auto r = ParseSglangBenchServing(Data("sglang_bench_serving.jsonl"), "s.jsonl");
  ASSERT_TRUE(r) << r.error().message;
  // The second line (600 requests at 8 req/s), not the first (200 at 4).
  EXPECT_EQ(Named(*r, "completed").value, 600);
  EXPECT_EQ(Named(*r, "completed").unit, "count");
  EXPECT_DOUBLE_EQ(Named(*r, "duration").value, 80.25209231705335);
  const Metric& rt = Named(*r, "request_throughput");
  EXPECT_DOUBLE_EQ(rt.value, 7.476440584621388);
  EXPECT_EQ(rt.unit, "req/s");
  EXPECT_EQ(rt.better, Better::kHigher);
  EXPECT_DOUBLE_EQ(Named(*r, "output_throughput").value, 119.6230493539422);
  EXPECT_EQ(Named(*r, "total_output_tokens_retokenized").value, 9597);
  EXPECT_DOUBLE_EQ(Named(*r, "concurrency").value, 3.9885663366101065);
  EXPECT_DOUBLE_EQ(Named(*r, "mean_e2e_latency_ms").value, 533.4846564305427);
  const Metric& p99 = Named(*r, "p99_ttft_ms");
  EXPECT_DOUBLE_EQ(p99.value, 141.97116029159227);
  EXPECT_EQ(p99.unit, "ms");
  EXPECT_EQ(p99.better, Better::kLower);
  EXPECT_DOUBLE_EQ(Named(*r, "p95_itl_ms").value, 34.16290000354806);
  EXPECT_TRUE(Has(*r, "p99_e2e_latency_ms"));
  EXPECT_TRUE(Has(*r, "std_tpot_ms"));
  EXPECT_FALSE(Has(*r, "accept_length"));     // null: not measured
  EXPECT_FALSE(Has(*r, "random_input_len"));  // a setting
  // --output-details: the per-request TTFTs give the slowest request.
  EXPECT_DOUBLE_EQ(Named(*r, "max_ttft_ms").value, 174.87692859847706);
  EXPECT_EQ(Named(*r, "max_ttft_ms").source, "sglang s.jsonl");
  EXPECT_EQ(*Named(*r, "serving_load").text, "valid: offered 8 req/s, achieved 7.48 req/s");
}

// request_rate inf is Python's bare Infinity in the file: read, and the run is saturated.
TEST(Sglang, InfiniteRateIsReadAndSaturated) {
  auto r = ParseSglangBenchServing(Data("sglang_bench_serving_inf.jsonl"), "s.jsonl");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*Named(*r, "serving_load").text,
            "saturated: request_rate inf without max_concurrency: all 300 requests were offered "
            "at once, so each latency includes its wait behind the others (achieved 56.1 req/s)");
  EXPECT_DOUBLE_EQ(Named(*r, "p99_ttft_ms").value, 4827.560970060193);
  auto lines = RefuseLatenciesOfAnInvalidLoad(&*r);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_FALSE(Has(*r, "p99_ttft_ms"));
  EXPECT_TRUE(Has(*r, "request_throughput"));
  EXPECT_TRUE(Has(*r, "duration"));
}

// --metric vllm:FILE reads its peers' results too, told apart by their keys.
TEST(Sglang, TheVllmSpecReadsPeersByTheirKeys) {
  auto s = ParseVllmBenchServe(Data("sglang_bench_serving.jsonl"), "s.jsonl");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(Named(*s, "concurrency").source, "sglang s.jsonl");
  auto g = ParseVllmBenchServe(Data("guidellm_benchmarks.json"), "g.json");
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(Named(*g, "synchronous/completed").source, "guidellm g.json");
  auto v = ParseVllmBenchServe(Data("vllm_serve_saturated.json"), "v.json");
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(Named(*v, "completed").source, "vllm v.json");
}

TEST(Sglang, HostileInputs) {
  auto e = ParseSglangBenchServing(" \n\n", "s.jsonl");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message,
            "s.jsonl: empty: no SGLang bench_serving results (did it fail or write elsewhere?)");
  e = ParseSglangBenchServing("{\"request_throughput\": 1}\n{\"request_throughput\": 2, \"conc",
                              "s.jsonl");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message.rfind("s.jsonl:2: not valid SGLang bench_serving JSON", 0), 0u)
      << e.error().message;
  e = ParseSglangBenchServing("{\"request_throughput\": 1, \"failed\": 0}\n", "s.jsonl");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message.rfind("s.jsonl:1: not an SGLang bench_serving result", 0), 0u)
      << e.error().message;
  e = ParseSglangBenchServing("{\"request_throughput\": \"x\", \"concurrency\": 1}", "s.jsonl");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message,
            "s.jsonl:1: the result: \"request_throughput\" is not a number (got \"x\")");
  // NaN (a statistic with no samples) is not measured; a string "NaN" stays a string.
  auto nan = ParseSglangBenchServing(
      "{\"request_throughput\": 1, \"concurrency\": 1, \"std_ttft_ms\": NaN, \"backend\": "
      "\"NaN Infinity\"}",
      "s.jsonl");
  ASSERT_TRUE(nan) << nan.error().message;
  EXPECT_FALSE(Has(*nan, "std_ttft_ms"));
  EXPECT_EQ(serving_detail::PythonJsonText("{\"a\": \"x\\\"NaN\", \"b\": -Infinity}"),
            "{\"a\": \"x\\\"NaN\", \"b\": \"-inf\"}");
}

TEST(Guidellm, EachBenchmarkIsNamedByItsStrategy) {
  auto r = ParseGuidellm(Data("guidellm_benchmarks.json"), "g.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(Named(*r, "synchronous/completed").value, 120);
  EXPECT_EQ(Named(*r, "synchronous/failed").value, 0);
  EXPECT_EQ(Named(*r, "synchronous/failed").better, Better::kLower);
  EXPECT_DOUBLE_EQ(Named(*r, "synchronous/requests_per_second").value, 0.5055058872180997);
  EXPECT_EQ(Named(*r, "synchronous/requests_per_second").unit, "req/s");
  EXPECT_DOUBLE_EQ(Named(*r, "synchronous/duration").value, 237.3859593611937);
  EXPECT_EQ(Named(*r, "constant@6.00/completed").value, 600);
  EXPECT_DOUBLE_EQ(Named(*r, "constant@6.00/p99.9_ttft_ms").value, 155.888134885478);
  EXPECT_DOUBLE_EQ(Named(*r, "constant@6.00/max_ttft_ms").value, 157.40618784201908);
  EXPECT_EQ(Named(*r, "constant@6.00/max_ttft_ms").better, Better::kNone);
  // request_latency is in seconds in the file, milliseconds here.
  EXPECT_DOUBLE_EQ(Named(*r, "constant@6.00/p99_e2el_ms").value, 2045.0251550345379);
  EXPECT_TRUE(Has(*r, "constant@6.00/p0.1_tpot_ms"));
  EXPECT_TRUE(Has(*r, "constant@6.00/std_itl_ms"));
  EXPECT_FALSE(Has(*r, "constant@6.00/max_itl_ms"));
  EXPECT_DOUBLE_EQ(Named(*r, "throughput/p99.9_ttft_ms").value, 17855.37690446829);
  EXPECT_EQ(*Named(*r, "synchronous/serving_load").text,
            "valid: max_concurrency 1 (1 in flight on average), achieved 0.506 req/s");
  EXPECT_EQ(Named(*r, "throughput/serving_load").text->rfind("saturated: request_rate inf", 0), 0u);
  EXPECT_EQ(*Named(*r, "constant@6.00/serving_load").text,
            "valid: offered 6 req/s, achieved 5.83 req/s");
  EXPECT_DOUBLE_EQ(*PercentileOfName("constant@6.00/p99.9_ttft_ms"), 0.999);
}

TEST(Guidellm, EachBenchmarkIsJudgedOnItsOwnCountAndLoad) {
  auto r = ParseGuidellm(Data("guidellm_benchmarks.json"), "g.json");
  ASSERT_TRUE(r) << r.error().message;
  auto load = RefuseLatenciesOfAnInvalidLoad(&*r);
  ASSERT_EQ(load.size(), 1u);
  EXPECT_EQ(load[0].rfind("throughput/load saturated: request_rate inf without max_concurrency: "
                          "all 600 requests",
                          0),
            0u)
      << load[0];
  EXPECT_FALSE(Has(*r, "throughput/mean_ttft_ms"));
  EXPECT_TRUE(Has(*r, "throughput/requests_per_second"));
  EXPECT_TRUE(Has(*r, "throughput/duration"));
  EXPECT_TRUE(Has(*r, "constant@6.00/mean_ttft_ms"));
  auto pct = RefuseUnsupportedPercentiles(&*r);
  // 120 synchronous requests support no p99 (459 needed); 600 at 6 req/s do.
  EXPECT_FALSE(Has(*r, "synchronous/p99_ttft_ms"));
  EXPECT_TRUE(Has(*r, "synchronous/p95_ttft_ms"));  // 90 needed
  EXPECT_TRUE(Has(*r, "constant@6.00/p99_ttft_ms"));
  EXPECT_FALSE(Has(*r, "constant@6.00/p99.9_ttft_ms"));  // 4,603 needed
  bool said = false;
  for (const auto& l : pct)
    said = said || (l.rfind("synchronous/p99 of 120 completed requests is not a figure "
                            "(synchronous/p99_ttft_ms, ",
                            0) == 0 &&
                    l.find("a p99 at 99 % confidence needs at least 459 requests; the slowest "
                           "of 120 bounds p96.2 at 99 % (and the p99 at only 70.1 %): ttft <= "
                           "141.87 ms") != std::string::npos);
  EXPECT_TRUE(said) << testing::PrintToString(pct);
}

TEST(Guidellm, HostileInputs) {
  auto e = ParseGuidellm("benchmarks:\n- type_: generative_benchmark\n", "g.yaml");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message,
            "g.yaml: not GuideLLM's JSON report (its YAML, CSV or HTML output?): run guidellm "
            "benchmark with --output-path FILE.json");
  e = ParseGuidellm("{\"args\": {}}", "g.json");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message.rfind("g.json: no \"benchmarks\" array", 0), 0u);
  e = ParseGuidellm(
      "{\"benchmarks\": [{\"config\": {\"strategy\": {\"type_\": \"synchronous\"}}}]}", "g.json");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message, "g.json: benchmark 1 (synchronous) has no \"metrics\" object");
  e = ParseGuidellm(
      "{\"benchmarks\": [{\"metrics\": {\"request_totals\": {\"successful\": 3}, "
      "\"time_to_first_token_ms\": {\"successful\": {\"mean\": \"slow\"}}}}]}",
      "g.json");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message,
            "g.json: benchmark benchmark1: time_to_first_token_ms: mean_ttft_ms is not a finite "
            "number (got \"slow\")");
  e = ParseGuidellm("{\"benchmarks\": []}", "g.json");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message, "g.json: GuideLLM report holds no benchmarks");
}

}  // namespace
}  // namespace vouch
