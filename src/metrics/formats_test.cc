// Each parser runs on real output of its tool (tests/data/metrics/README.md) and on hostile
// variants of it.
#include "metrics/formats.h"

#include <gtest/gtest.h>

#include "metrics/metrics_test_util.h"

namespace vouch {
namespace {

using metrics_test::ReadData;

const Metric& Get(const std::vector<Metric>& ms, const std::string& name) {
  const Metric* m = FindMetric(ms, name);
  if (!m) {
    std::string names;
    for (const auto& x : ms) names += x.name + "\n";
    ADD_FAILURE() << "no metric " << name << " among\n" << names;
    static Metric none;
    return none;
  }
  return *m;
}

void ExpectError(const Result<std::vector<Metric>>& r, const std::string& needle) {
  ASSERT_FALSE(r) << "expected an error containing: " << needle;
  EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
}

// ---- llama-bench ----

TEST(LlamaBench, JsonFromReadme) {
  auto r = ParseLlamaBench(ReadData("llama_bench.json"), "llama_bench.json");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 4u);
  const Metric& pp = Get(*r, "pp512.tokens_per_s");
  EXPECT_DOUBLE_EQ(pp.value, 7100.002165);
  EXPECT_EQ(pp.unit, "tok/s");
  EXPECT_EQ(pp.better, Better::kHigher);
  ASSERT_EQ(pp.samples.size(), 5u);
  EXPECT_DOUBLE_EQ(pp.samples[0], 6863.1);
  EXPECT_DOUBLE_EQ(pp.samples[4], 7237.21);
  EXPECT_EQ(pp.source, "llama-bench llama_bench.json");
  const Metric& tg = Get(*r, "tg128.tokens_per_s");
  EXPECT_DOUBLE_EQ(tg.value, 118.881588);
  EXPECT_DOUBLE_EQ(tg.samples.back(), 117.464);
  const Metric& tg_ns = Get(*r, "tg128.duration_ns");
  EXPECT_DOUBLE_EQ(tg_ns.value, 1076767880);
  EXPECT_EQ(tg_ns.unit, "ns");
  EXPECT_EQ(tg_ns.better, Better::kLower);
  EXPECT_DOUBLE_EQ(tg_ns.samples[1], 1065089400);
}

TEST(LlamaBench, JsonlGivesTheSameMetrics) {
  auto a = ParseLlamaBench(ReadData("llama_bench.json"), "a");
  auto b = ParseLlamaBench(ReadData("llama_bench.jsonl"), "b");
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) {
    EXPECT_EQ((*a)[i].name, (*b)[i].name);
    EXPECT_EQ((*a)[i].value, (*b)[i].value);
    EXPECT_EQ((*a)[i].samples, (*b)[i].samples);
  }
}

TEST(LlamaBench, NamesDepthCombinedAndRepeatedTests) {
  const char* jsonl =
      "{\"n_prompt\":512,\"n_gen\":0,\"n_depth\":4096,\"avg_ts\":10,\"avg_ns\":5}\n"
      "{\"n_prompt\":512,\"n_gen\":128,\"n_depth\":0,\"avg_ts\":11,\"avg_ns\":6}\n"
      "{\"n_prompt\":512,\"n_gen\":0,\"n_depth\":4096,\"avg_ts\":12,\"avg_ns\":7}\n";
  auto r = ParseLlamaBench(jsonl, "x.jsonl");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(Get(*r, "pp512@d4096.tokens_per_s").value, 10);
  EXPECT_EQ(Get(*r, "pp512+tg128.tokens_per_s").value, 11);
  EXPECT_EQ(Get(*r, "pp512@d4096[2].tokens_per_s").value, 12);
  EXPECT_TRUE(Get(*r, "pp512@d4096.tokens_per_s").samples.empty());  // none reported
}

TEST(LlamaBench, HostileInputs) {
  std::string json = ReadData("llama_bench.json");
  ExpectError(ParseLlamaBench("", "out.txt"), "out.txt: empty");
  ExpectError(ParseLlamaBench(json.substr(0, json.size() / 2), "out.txt"),
              "out.txt: not valid llama-bench JSON");
  std::string jsonl = ReadData("llama_bench.jsonl");
  ExpectError(ParseLlamaBench(jsonl.substr(0, jsonl.size() - 40), "out.jsonl"),
              "out.jsonl:2: the last line is truncated");
  ExpectError(ParseLlamaBench("| model | size |\n", "md.txt"), "md.txt:1: not a llama-bench JSONL");
  ExpectError(ParseLlamaBench("[{\"name\":1}]", "o.json"), "has no \"n_prompt\"");
  ExpectError(ParseLlamaBench("[{\"n_prompt\":1,\"n_gen\":0,\"avg_ts\":null,\"avg_ns\":1}]", "o"),
              "avg_ts is not a number");
  ExpectError(
      ParseLlamaBench("[{\"n_prompt\":1,\"n_gen\":0,\"avg_ts\":NaN,\"avg_ns\":1}]", "o.json"),
      "NaN or Infinity");
  ExpectError(ParseLlamaBench("[]", "o.json"), "holds no results");
}

// ---- vllm bench serve ----

TEST(Vllm, SavedResult) {
  auto r = ParseVllmBenchServe(ReadData("vllm_bench_serve.json"), "res.json");
  ASSERT_TRUE(r) << r.error().message;
  const Metric& rt = Get(*r, "request_throughput");
  EXPECT_DOUBLE_EQ(rt.value, 0.9733236714351853);
  EXPECT_EQ(rt.unit, "req/s");
  EXPECT_EQ(rt.better, Better::kHigher);
  EXPECT_DOUBLE_EQ(Get(*r, "output_throughput").value, 124.58542994370372);
  EXPECT_DOUBLE_EQ(Get(*r, "total_token_throughput").value, 319.2501642307408);
  const Metric& ttft = Get(*r, "mean_ttft_ms");
  EXPECT_DOUBLE_EQ(ttft.value, 97.50969301155726);
  EXPECT_EQ(ttft.unit, "ms");
  EXPECT_EQ(ttft.better, Better::kLower);
  EXPECT_DOUBLE_EQ(Get(*r, "median_tpot_ms").value, 34.45028747967261);
  EXPECT_DOUBLE_EQ(Get(*r, "std_itl_ms").value, 1.2341968366262888);
  EXPECT_DOUBLE_EQ(Get(*r, "p99_itl_ms").value, 38.25465443544089);
  EXPECT_EQ(Get(*r, "failed").value, 1);
  EXPECT_EQ(Get(*r, "completed").value, 199);
  EXPECT_EQ(FindMetric(*r, "request_goodput"), nullptr);  // null: not measured
  EXPECT_EQ(FindMetric(*r, "request_rate"), nullptr);     // a setting, not a result
  EXPECT_EQ(FindMetric(*r, "mean_e2el_ms"), nullptr);     // not requested in that run
}

TEST(Vllm, OlderResultWithExtraKeys) {
  auto r = ParseVllmBenchServe(ReadData("vllm_bench_serve_llmd.json"), "res.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_DOUBLE_EQ(Get(*r, "output_throughput").value, 2249.247363167692);
  EXPECT_DOUBLE_EQ(Get(*r, "p99_ttft_ms").value, 89.76647855975897);
  EXPECT_EQ(FindMetric(*r, "failed"), nullptr);
}

TEST(Vllm, PercentilesAndE2el) {
  auto r = ParseVllmBenchServe(
      "{\"request_throughput\":2,\"p99.9_e2el_ms\":5.5,\"p50_e2el_ms\":1,\"mean_foo_ms\":3,"
      "\"p_ttft_ms\":1,\"p9._ttft_ms\":1,\"px_itl_ms\":1,\"mean_ttft_s\":1}",
      "r");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(Get(*r, "p99.9_e2el_ms").value, 5.5);
  EXPECT_EQ(Get(*r, "p50_e2el_ms").value, 1);
  EXPECT_EQ(FindMetric(*r, "mean_foo_ms"), nullptr);
  EXPECT_EQ(r->size(), 3u);  // none of the malformed keys
}

TEST(Vllm, HostileInputs) {
  ExpectError(ParseVllmBenchServe("  \n", "r.json"), "r.json: empty");
  std::string s = ReadData("vllm_bench_serve.json");
  ExpectError(ParseVllmBenchServe(s.substr(0, 200), "r.json"), "r.json: not valid vllm");
  // Python's json.dump writes NaN when a statistic had no samples.
  ExpectError(ParseVllmBenchServe("{\"request_throughput\":1,\"mean_ttft_ms\":NaN}", "r.json"),
              "NaN or Infinity");
  ExpectError(ParseVllmBenchServe("{\"date\":\"x\"}", "r.json"), "not a vllm bench serve result");
  ExpectError(ParseVllmBenchServe("[1]", "r.json"), "expected a JSON object");
  ExpectError(ParseVllmBenchServe("{\"request_throughput\":\"fast\"}", "r.json"),
              "\"request_throughput\" is not a number");
}

// ---- Google Benchmark ----

TEST(Gbench, DocumentedOutputWithRepetitionsAndAggregates) {
  auto r = ParseGoogleBenchmark(ReadData("gbench.json"), "gb.json");
  ASSERT_TRUE(r) << r.error().message;
  const Metric& rt = Get(*r, "BM_StringCopy/64/repeats:3.real_time");
  EXPECT_EQ(rt.unit, "ns");
  EXPECT_EQ(rt.better, Better::kLower);
  ASSERT_EQ(rt.samples.size(), 3u);
  EXPECT_DOUBLE_EQ(rt.samples[0], 56.214141412345678);
  EXPECT_DOUBLE_EQ(rt.value, 56.102456700000001);  // the median repetition
  const Metric& items = Get(*r, "BM_StringCopy/64/repeats:3.items_per_second");
  EXPECT_EQ(items.unit, "items/s");
  EXPECT_EQ(items.better, Better::kHigher);
  EXPECT_DOUBLE_EQ(items.value, 1.791853e7);
  EXPECT_EQ(Get(*r, "BM_StringCopy/64/repeats:3.bytes_per_second").unit, "B/s");
  EXPECT_DOUBLE_EQ(Get(*r, "BM_StringCopy/64/repeats:3_mean.real_time").value, 56.101407170781896);
  EXPECT_DOUBLE_EQ(Get(*r, "BM_StringCopy/64/repeats:3_stddev.cpu_time").value, 0.0957);
  const Metric& cv = Get(*r, "BM_StringCopy/64/repeats:3_cv.real_time");
  EXPECT_EQ(cv.unit, "fraction");
  EXPECT_DOUBLE_EQ(cv.value, 2.0223456789e-3);
  const Metric& ser = Get(*r, "BM_Serialize.cpu_time");
  EXPECT_DOUBLE_EQ(ser.value, 785);
  EXPECT_TRUE(ser.samples.empty());
  EXPECT_EQ(FindMetric(*r, "BM_Serialize.iterations"), nullptr);
}

TEST(Gbench, CompareToolInput) {
  auto r = ParseGoogleBenchmark(ReadData("gbench_compare_input.json"), "gb.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(Get(*r, "BM_One.cpu_time").value, 100);
  const Metric& two = Get(*r, "BM_Two.real_time");
  EXPECT_EQ(two.value, 8.5);
  EXPECT_EQ(two.samples, (std::vector<double>{9, 8}));
  EXPECT_EQ(Get(*r, "BM_Two_stat.real_time").value, 8);
}

TEST(Gbench, ErroredBenchmarkGivesNoMetricsAndCountersAreKept) {
  auto r = ParseGoogleBenchmark(
      "{\"benchmarks\":[{\"name\":\"BM_Bad\",\"error_occurred\":true,\"error_message\":\"x\","
      "\"real_time\":0,\"time_unit\":\"ns\"},{\"name\":\"BM_Ok\",\"real_time\":2,\"cpu_time\":1,"
      "\"time_unit\":\"us\",\"hits\":42}]}",
      "g");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(FindMetric(*r, "BM_Bad.real_time"), nullptr);
  EXPECT_EQ(Get(*r, "BM_Ok.real_time").unit, "us");
  EXPECT_EQ(Get(*r, "BM_Ok.hits").value, 42);
  EXPECT_EQ(Get(*r, "BM_Ok.hits").better, Better::kNone);
}

TEST(Gbench, HostileInputs) {
  ExpectError(ParseGoogleBenchmark("", "g.json"), "g.json: empty");
  std::string s = ReadData("gbench.json");
  ExpectError(ParseGoogleBenchmark(s.substr(0, s.size() - 100), "g.json"),
              "g.json: not valid Google Benchmark JSON");
  // The library writes bare NaN/Infinity tokens for non-finite doubles.
  ExpectError(
      ParseGoogleBenchmark(
          "{\"benchmarks\":[{\"name\":\"B\",\"real_time\":NaN,\"time_unit\":\"ns\"}]}", "g"),
      "NaN or Infinity");
  ExpectError(ParseGoogleBenchmark(ReadData("llama_bench.json"), "g.json"),
              "no \"benchmarks\" array");
  ExpectError(ParseGoogleBenchmark("{\"benchmarks\":[]}", "g.json"), "no usable results");
}

// ---- nvbench ----

TEST(Nvbench, JsonOutput) {
  auto r = ParseNvbench(ReadData("nvbench.json"), "nv.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->size(), 18u);  // 2 states x 9 summaries
  const Metric& gpu = Get(*r, "simple[Device=0].nv/cold/time/gpu/mean");
  EXPECT_DOUBLE_EQ(gpu.value, 0.0010034715849794225);
  EXPECT_EQ(gpu.unit, "s");
  EXPECT_EQ(gpu.better, Better::kLower);
  EXPECT_DOUBLE_EQ(Get(*r, "simple[Device=1].nv/cold/time/gpu/mean").value, 0.0010027443022431728);
  const Metric& noise = Get(*r, "simple[Device=0].nv/cold/time/gpu/stdev/relative");
  EXPECT_EQ(noise.unit, "fraction");
  EXPECT_EQ(noise.better, Better::kLower);
  const Metric& n = Get(*r, "simple[Device=1].nv/batch/sample_size");
  EXPECT_EQ(n.value, 524);
  EXPECT_EQ(n.unit, "count");
  EXPECT_EQ(Get(*r, "simple[Device=0].nv/cold/walltime").better, Better::kNone);
}

TEST(Nvbench, SkippedStatesAndNullValues) {
  auto r = ParseNvbench(
      R"({"benchmarks":[{"name":"b","states":[
        {"name":"Device=0 T=F32","is_skipped":true,"skip_reason":"x","summaries":null},
        {"name":"Device=0 T=F64","is_skipped":false,"summaries":[
          {"tag":"nv/cold/bw/item_rate","hint":"item_rate","data":[{"name":"value","type":"float64","value":"2.5e9"}]},
          {"tag":"nv/cold/time/gpu/stdev/relative","data":[{"name":"value","type":"float64","value":null}]},
          {"tag":"nv/json/bin:nv/cold/sample_times","data":[{"name":"filename","type":"string","value":"a.bin"}]}]}]}]})",
      "nv.json");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].name, "b[Device=0 T=F64].nv/cold/bw/item_rate");
  EXPECT_EQ((*r)[0].value, 2.5e9);
  EXPECT_EQ((*r)[0].better, Better::kHigher);
}

TEST(Nvbench, HostileInputs) {
  ExpectError(ParseNvbench("", "nv.json"), "nv.json: empty");
  std::string s = ReadData("nvbench.json");
  ExpectError(ParseNvbench(s.substr(0, s.size() / 3), "nv.json"), "nv.json: not valid nvbench");
  ExpectError(ParseNvbench(R"({"benchmarks":[{"name":"b","states":[{"name":"s","summaries":[
      {"tag":"t","data":[{"name":"value","type":"float64","value":"nan"}]}]}]}]})",
                           "nv.json"),
              "not finite");
  ExpectError(ParseNvbench(R"({"benchmarks":[{"name":"b","states":[{"name":"s","summaries":[
      {"tag":"t","data":[{"name":"value","type":"float64","value":"12abc"}]}]}]}]})",
                           "nv.json"),
              "\"12abc\" is not a number");
  ExpectError(ParseNvbench(R"({"benchmarks":[{"name":"b","states":{"Device=0":{}}}]})", "nv.json"),
              "\"states\" is not an array");
  ExpectError(
      ParseNvbench(R"({"meta":{"version":{"json":{"major":2}}},"benchmarks":[]})", "nv.json"),
      "format version 2 is not supported");
  ExpectError(ParseNvbench(R"({"benchmarks":[]})", "nv.json"), "no measured states");
}

// Hostile structure: wrong types where a field is expected and absurd nesting give errors,
// not exceptions or a blown stack.
TEST(Formats, WrongTypesAndDeepNesting) {
  auto g = ParseGoogleBenchmark(
      R"({"benchmarks":[{"name":"B","error_occurred":"yes","real_time":1,"time_unit":7}]})", "g");
  ASSERT_TRUE(g) << g.error().message;  // odd fields are ignored, the timing is still read
  EXPECT_EQ(g->front().unit, "ns");
  auto n = ParseNvbench(R"({"benchmarks":[{"name":"b","states":[{"name":5,"is_skipped":"no",
      "summaries":[{"tag":"t","hint":3,"data":[{"name":"value","type":"int64","value":"7"}]}]}]}]})",
                        "nv");
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(n->front().name, "b[].t");
  auto no_value = ParseNvbench(R"({"benchmarks":[{"name":"b","states":[{"name":"s","summaries":[
      {"tag":"t","data":[{"name":"value","type":"int64"}]}]}]}]})",
                               "nv.json");
  ExpectError(no_value, "no measured states");
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  // Refused before parsing (the validated reader's depth limit), naming the file.
  ExpectError(ParseVllmBenchServe(deep, "deep.json"),
              "deep.json: nested deeper than 128 levels (at byte 128); not vllm bench serve");
  ExpectError(ParseGoogleBenchmark("{\"benchmarks\":[" + deep + "]}", "deep.json"),
              "deep.json: nested deeper than 128 levels (at byte 141); not Google Benchmark");
  ExpectError(ParseVllmBenchServe("{\"request_throughput\":" + deep + "}", "deep.json"),
              "deep.json: nested deeper than 128 levels");
}

}  // namespace
}  // namespace vouch
