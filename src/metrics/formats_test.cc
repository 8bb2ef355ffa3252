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

// A -b sweep in another order names each configuration the same way (it used to be tg128 and
// tg128[2] by position, so a gate compared batch 256 with batch 512).
TEST(LlamaBench, SweepIsKeyedByConfigurationNotPosition) {
  auto a = ParseLlamaBench(ReadData("llama_bench_b_sweep_256_512.jsonl"), "a.jsonl");
  auto b = ParseLlamaBench(ReadData("llama_bench_b_sweep_512_256.jsonl"), "b.jsonl");
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_TRUE(b) << b.error().message;
  ASSERT_EQ(a->size(), 8u);
  for (const char* name : {"tg128[n_batch=256].tokens_per_s", "tg128[n_batch=512].tokens_per_s",
                           "pp512[n_batch=256].tokens_per_s", "pp512[n_batch=512].duration_ns"})
    EXPECT_EQ(Get(*a, name).value, Get(*b, name).value) << name;
  EXPECT_DOUBLE_EQ(Get(*a, "tg128[n_batch=256].tokens_per_s").value, 118.881588);
  const Metric& tg = Get(*a, "tg128[n_batch=512].tokens_per_s");
  EXPECT_EQ(tg.config.at("n_batch"), "512");
  EXPECT_EQ(tg.config.at("n_ubatch"), "512");
  EXPECT_EQ(tg.config.at("model_type"), "qwen2 7B Q4_K - Medium");
  EXPECT_EQ(tg.config.at("flash_attn"), "-1");
  EXPECT_EQ(tg.config.at("type_k"), "f16");
  EXPECT_EQ(tg.config.at("n_gpu_layers"), "-1");
  EXPECT_EQ(tg.config.at("n_threads"), "8");
  EXPECT_EQ(tg.config.count("n_prompt"), 0u);  // in the test name
  // One configuration alone: the plain name, the configuration still attached.
  auto one = ParseLlamaBench(ReadData("llama_bench_b512.jsonl"), "c.jsonl");
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(Get(*one, "tg128.tokens_per_s").config.at("n_batch"), "512");
}

TEST(LlamaBench, TwoModelsDoNotCollide) {
  auto r = ParseLlamaBench(ReadData("llama_bench_two_models.jsonl"), "m.jsonl");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 8u);
  EXPECT_DOUBLE_EQ(
      Get(*r,
          "tg128[model_filename=models/Qwen2.5-7B-Instruct-Q4_K_M.gguf,model_type=qwen2 7B "
          "Q4_K - Medium].tokens_per_s")
          .value,
      118.881588);
  EXPECT_DOUBLE_EQ(
      Get(*r,
          "tg128[model_filename=models/Llama-3.1-8B-Instruct-Q4_K_M.gguf,model_type=llama 8B "
          "Q4_K - Medium].tokens_per_s")
          .value,
      101.5);
}

// The default Markdown table, the CSV output, and the Vulkan banner before the JSON.
TEST(LlamaBench, OtherOutputsSayWhatToDoAndABannerIsSkipped) {
  ExpectError(ParseLlamaBench(ReadData("llama_bench_vulkan_markdown.txt"), "out.txt"),
              "out.txt:3: this is llama-bench's Markdown table (its default output, -o md); vouch "
              "reads its JSON: run llama-bench with -o json (or -o jsonl)");
  ExpectError(ParseLlamaBench(ReadData("llama_bench.csv"), "out.csv"),
              "out.csv:1: this is llama-bench's CSV output (-o csv); vouch reads its JSON: run "
              "llama-bench with -o json");
  ExpectError(ParseLlamaBench("CREATE TABLE IF NOT EXISTS llama_bench (\n", "o.sql"),
              "SQL output (-o sql)");
  ExpectError(ParseLlamaBench("ggml_vulkan: Found 1 Vulkan devices:\nmain: error\n", "o"),
              "o: no llama-bench JSON in the output (2 lines of other text): run llama-bench "
              "with -o json");
  auto banner = ParseLlamaBench(ReadData("llama_bench_vulkan_banner.json"), "v.json");
  ASSERT_TRUE(banner) << banner.error().message;
  auto plain = ParseLlamaBench(ReadData("llama_bench.json"), "p.json");
  ASSERT_TRUE(plain);
  ASSERT_EQ(banner->size(), plain->size());
  EXPECT_EQ(Get(*banner, "tg128.tokens_per_s").value, 118.881588);
  // A truncated JSONL after a banner names the line in the whole output.
  std::string jsonl = "ggml_vulkan: Found 1 Vulkan devices:\n" + ReadData("llama_bench.jsonl");
  ExpectError(ParseLlamaBench(jsonl.substr(0, jsonl.size() - 40), "o.jsonl"),
              "o.jsonl:3: the last line is truncated");
}

TEST(LlamaBench, HostileInputs) {
  std::string json = ReadData("llama_bench.json");
  ExpectError(ParseLlamaBench("", "out.txt"), "out.txt: empty");
  ExpectError(ParseLlamaBench(json.substr(0, json.size() / 2), "out.txt"),
              "out.txt: not valid llama-bench JSON");
  std::string jsonl = ReadData("llama_bench.jsonl");
  ExpectError(ParseLlamaBench(jsonl.substr(0, jsonl.size() - 40), "out.jsonl"),
              "out.jsonl:2: the last line is truncated");
  ExpectError(ParseLlamaBench("| model | size |\n", "md.txt"),
              "md.txt:1: this is llama-bench's Markdown table");
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

// benchmark_serving.py wrote "request_goodput:" (with a colon) before vllm fixed the key.
TEST(Vllm, GoodputWithTheHistoricalColonIsRead) {
  auto r = ParseVllmBenchServe(ReadData("vllm_bench_serve_goodput_colon.json"), "res.json");
  ASSERT_TRUE(r) << r.error().message;
  const Metric& g = Get(*r, "request_goodput");
  EXPECT_DOUBLE_EQ(g.value, 7.9);
  EXPECT_EQ(g.unit, "req/s");
  EXPECT_EQ(g.better, Better::kHigher);
  EXPECT_EQ(FindMetric(*r, "request_goodput:"), nullptr);
  // Both spellings: the fixed key wins.
  auto both = ParseVllmBenchServe(
      "{\"request_throughput\":2,\"request_goodput:\":1,\"request_goodput\":1.5}", "r");
  ASSERT_TRUE(both) << both.error().message;
  EXPECT_EQ(Get(*both, "request_goodput").value, 1.5);
  EXPECT_EQ(both->size(), 2u);
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

// Its CSV and console outputs are named, with the flag that gives JSON, not parser jargon.
TEST(Gbench, CsvAndConsoleOutputsSayToUseJson) {
  auto csv = ParseGoogleBenchmark(ReadData("gbench.csv"), "out.txt");
  ASSERT_FALSE(csv);
  EXPECT_EQ(csv.error().message,
            "out.txt:1: this is Google Benchmark's CSV output (--benchmark_format=csv); vouch "
            "reads its JSON: run the benchmark with --benchmark_format=json (or write a file "
            "with --benchmark_out=FILE --benchmark_out_format=json)");
  auto console = ParseGoogleBenchmark(ReadData("gbench_console.txt"), "out.txt");
  ASSERT_FALSE(console);
  EXPECT_EQ(console.error().message.rfind(
                "out.txt:2: this is Google Benchmark's console output (its default table); vouch "
                "reads its JSON: run the benchmark with --benchmark_format=json",
                0),
            0u)
      << console.error().message;
  // JSON after a banner line is still JSON (and other text is still the parser's error).
  EXPECT_TRUE(ParseGoogleBenchmark(ReadData("gbench.json"), "out.json"));
  auto other = ParseGoogleBenchmark("hello\n", "out.txt");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("not valid Google Benchmark JSON"), std::string::npos);
}

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

TEST(Gbench, CountersAreKeptAndAnErroredBenchmarkFailsTheLeg) {
  auto ok = ParseGoogleBenchmark(
      "{\"benchmarks\":[{\"name\":\"BM_Ok\",\"real_time\":2,\"cpu_time\":1,"
      "\"time_unit\":\"us\",\"hits\":42}]}",
      "g");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(Get(*ok, "BM_Ok.real_time").unit, "us");
  EXPECT_EQ(Get(*ok, "BM_Ok.hits").value, 42);
  EXPECT_EQ(Get(*ok, "BM_Ok.hits").better, Better::kNone);
  // SkipWithError: the benchmark's numbers are zeros, not results. It used to vanish and the
  // leg exited 0 with the other benchmarks' numbers.
  ExpectError(ParseGoogleBenchmark(ReadData("gbench_skip_with_error.json"), "gb.json"),
              "gb.json: 1 benchmark failed (SkipWithError): BM_Copy/1073741824 (cudaMalloc "
              "failed: out of memory)");
}

// SkipWithMessage (error_occurred false, a message): the benchmark chose not to run; the
// others are results.
TEST(Gbench, SkippedWithMessageGivesNoMetrics) {
  std::string text = ReadData("gbench_skip_with_error.json");
  text.replace(text.find("\"error_occurred\": true"), 22, "\"error_occurred\": false");
  auto r = ParseGoogleBenchmark(text, "gb.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(FindMetric(*r, "BM_Fp8Gemm.real_time"), nullptr);
  EXPECT_EQ(FindMetric(*r, "BM_Copy/1073741824.real_time"), nullptr);
  EXPECT_EQ(Get(*r, "BM_Copy/1048576.real_time").value, 12.5);
}

// The stddev and cv of a rate are not rates that are better when higher.
TEST(Gbench, SpreadAggregatesHaveTheirTrueUnitAndDirection) {
  auto r = ParseGoogleBenchmark(ReadData("gbench_rate_aggregates.json"), "gb.json");
  ASSERT_TRUE(r) << r.error().message;
  const Metric& mean = Get(*r, "BM_Copy/1048576/manual_time_mean.bytes_per_second");
  EXPECT_EQ(mean.unit, "B/s");
  EXPECT_EQ(mean.better, Better::kHigher);
  const Metric& sd = Get(*r, "BM_Copy/1048576/manual_time_stddev.bytes_per_second");
  EXPECT_EQ(sd.unit, "B/s");
  EXPECT_EQ(sd.better, Better::kLower);
  const Metric& sd_t = Get(*r, "BM_Copy/1048576/manual_time_stddev.real_time");
  EXPECT_EQ(sd_t.unit, "us");
  EXPECT_EQ(sd_t.better, Better::kLower);
  const Metric& cv = Get(*r, "BM_Copy/1048576/manual_time_cv.bytes_per_second");
  EXPECT_EQ(cv.unit, "fraction");
  EXPECT_EQ(cv.better, Better::kLower);
  EXPECT_DOUBLE_EQ(cv.value, 0.02);
  const Metric& cv_t = Get(*r, "BM_Copy/1048576/manual_time_cv.cpu_time");
  EXPECT_EQ(cv_t.unit, "fraction");
  EXPECT_EQ(cv_t.better, Better::kLower);
  // The documented example's cv aggregate.
  auto doc = ParseGoogleBenchmark(ReadData("gbench.json"), "gb.json");
  ASSERT_TRUE(doc);
  EXPECT_EQ(Get(*doc, "BM_StringCopy/64/repeats:3_stddev.items_per_second").better, Better::kLower);
  EXPECT_EQ(Get(*doc, "BM_StringCopy/64/repeats:3_stddev.items_per_second").unit, "items/s");
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
              "nv.json: b[s].t 'nan' is not a finite number");
  ExpectError(ParseNvbench(R"({"benchmarks":[{"name":"b","states":[{"name":"s","summaries":[
      {"tag":"t","data":[{"name":"value","type":"float64","value":"12abc"}]}]}]}]})",
                           "nv.json"),
              "nv.json: b[s].t '12abc' is not a number");
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
