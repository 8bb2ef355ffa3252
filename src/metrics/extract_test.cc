#include "metrics/extract.h"

#include <gtest/gtest.h>

#include "metrics/metrics_test_util.h"

namespace vouch {
namespace {

using metrics_test::DataPath;
using metrics_test::TempDir;

MetricSpec Spec(const std::string& s) {
  auto r = ParseMetricSpec(s);
  EXPECT_TRUE(r) << s << ": " << r.error().message;
  return r ? *r : MetricSpec{};
}

std::string SpecError(const std::string& s) {
  auto r = ParseMetricSpec(s);
  EXPECT_FALSE(r) << s;
  return r ? std::string() : r.error().message;
}

TEST(MetricSpec, FormatsAndSources) {
  MetricSpec a = Spec("llama-bench");
  EXPECT_EQ(a.kind, MetricSpec::Kind::kLlamaBench);
  EXPECT_EQ(a.from, "stdout");
  MetricSpec b = Spec("vllm:results/run 1.json");
  EXPECT_EQ(b.kind, MetricSpec::Kind::kVllm);
  EXPECT_EQ(b.from, "results/run 1.json");
  MetricSpec c = Spec("gbench@stderr#BM_A.real_time#BM_B.cpu_time");
  EXPECT_EQ(c.kind, MetricSpec::Kind::kGbench);
  EXPECT_EQ(c.from, "stderr");
  EXPECT_EQ(c.required, (std::vector<std::string>{"BM_A.real_time", "BM_B.cpu_time"}));
  MetricSpec d = Spec("nvbench:/abs/nv.json");
  EXPECT_EQ(d.from, "/abs/nv.json");
  MetricSpec e = Spec("channel#video_sha256");
  EXPECT_EQ(e.kind, MetricSpec::Kind::kChannel);
  EXPECT_EQ(e.required, (std::vector<std::string>{"video_sha256"}));
  EXPECT_EQ(e.text, "channel#video_sha256");
}

TEST(MetricSpec, RegexAndJsonPointer) {
  MetricSpec r = Spec("regex:tok_s:tok/s:higher:eval: ([0-9.]+) tok/s");
  EXPECT_EQ(r.kind, MetricSpec::Kind::kRegex);
  EXPECT_EQ(r.name, "tok_s");
  EXPECT_EQ(r.unit, "tok/s");
  EXPECT_EQ(r.better, Better::kHigher);
  EXPECT_EQ(r.pattern, "eval: ([0-9.]+) tok/s");  // keeps its ':'
  EXPECT_EQ(r.from, "stdout");
  EXPECT_EQ(r.required, (std::vector<std::string>{"tok_s"}));
  MetricSpec j = Spec("json@out/res.json:ttft:ms:lower:/summary/ttft_ms");
  EXPECT_EQ(j.kind, MetricSpec::Kind::kJsonPointer);
  EXPECT_EQ(j.from, "out/res.json");
  EXPECT_EQ(j.pattern, "/summary/ttft_ms");
  EXPECT_EQ(j.better, Better::kLower);
  EXPECT_FALSE(ParseMetricSpec("json:x::none:"));  // a pointer is required
}

TEST(MetricSpec, Errors) {
  EXPECT_NE(SpecError("").find("empty metric spec"), std::string::npos);
  EXPECT_NE(SpecError("gbenh:x.json").find("did you mean 'gbench'"), std::string::npos);
  EXPECT_NE(SpecError("regex:tok_s:tok/s:higher").find("expected regex[@SRC]:NAME:UNIT:BETTER"),
            std::string::npos);
  EXPECT_NE(SpecError("regex:tok_s:tok/s:up:([0-9]+)").find("'up' is not a direction"),
            std::string::npos);
  EXPECT_NE(SpecError("regex:tok_s:tok/s:higher:[0-9]+").find("no capture group"),
            std::string::npos);
  EXPECT_NE(SpecError("regex:tok_s:tok/s:higher:(unclosed").find("is invalid"), std::string::npos);
  EXPECT_NE(SpecError("json:x:ms:lower:no/slash").find("JSON pointer 'no/slash' is invalid"),
            std::string::npos);
  EXPECT_NE(SpecError("channel:file.jsonl").find("always the VOUCH_METRICS file"),
            std::string::npos);
  EXPECT_NE(SpecError("gbench#").find("empty metric name"), std::string::npos);
  EXPECT_NE(SpecError("vllm:").find("empty file name"), std::string::npos);
}

TEST(ExtractMetrics, KnownFormatFromFileInWorkingDir) {
  LegOutputs outs;
  outs.working_dir = std::string(VOUCH_SOURCE_DIR) + "/tests/data/metrics";
  auto r = ExtractMetrics(Spec("vllm:vllm_bench_serve.json#mean_ttft_ms"), outs);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_DOUBLE_EQ(FindMetric(*r, "mean_ttft_ms")->value, 97.50969301155726);
}

TEST(ExtractMetrics, LlamaBenchFromStdout) {
  LegOutputs outs;
  outs.stdout_path = DataPath("llama_bench.jsonl");
  auto r = ExtractMetrics(Spec("llama-bench#tg128.tokens_per_s"), outs);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_DOUBLE_EQ(FindMetric(*r, "tg128.tokens_per_s")->value, 118.881588);
}

TEST(ExtractMetrics, RequiredMetricMissingIsAnErrorNamingIt) {
  LegOutputs outs;
  outs.stdout_path = DataPath("llama_bench.json");
  auto r = ExtractMetrics(Spec("llama-bench#tg129.tokens_per_s"), outs);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("metric 'tg129.tokens_per_s' is missing from"),
            std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("llama_bench.json"), std::string::npos);
  EXPECT_NE(r.error().message.find("did you mean 'tg128.tokens_per_s'"), std::string::npos);
}

TEST(ExtractMetrics, MissingAndEmptyFiles) {
  TempDir dir;
  LegOutputs outs;
  outs.working_dir = dir.path();
  outs.stdout_path = dir.Write("stdout.txt", "");
  auto missing = ExtractMetrics(Spec("gbench:out.json"), outs);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find(dir.path() + "/out.json does not exist"),
            std::string::npos)
      << missing.error().message;
  auto empty = ExtractMetrics(Spec("llama-bench"), outs);
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find(outs.stdout_path + ": empty"), std::string::npos)
      << empty.error().message;
}

TEST(ExtractMetrics, ChannelWithRequiredMetrics) {
  TempDir dir;
  LegOutputs outs;
  outs.metrics_path = dir.Write("metrics.jsonl",
                                "{\"name\":\"fc2.dispatches\",\"value\":600}\n"
                                "{\"name\":\"video_sha256\",\"text\":\"c62d\"}\n");
  auto ok = ExtractMetrics(Spec("channel#fc2.dispatches#video_sha256"), outs);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->size(), 2u);
  auto missing = ExtractMetrics(Spec("channel#audio_sha256"), outs);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("metric 'audio_sha256' is missing"), std::string::npos);
  // A leg that never wrote the channel has no metrics; requiring one is then an error.
  outs.metrics_path = dir.path() + "/none.jsonl";
  auto silent = ExtractMetrics(Spec("channel#fc2.dispatches"), outs);
  ASSERT_FALSE(silent);
  EXPECT_NE(silent.error().message.find("reported no metrics at all"), std::string::npos)
      << silent.error().message;
}

TEST(ExtractMetrics, AllSpecsMergedAndDuplicatesRefused) {
  TempDir dir;
  LegOutputs outs;
  outs.working_dir = dir.path();
  outs.stdout_path = dir.Write("stdout.txt", "decode: 131.5 tok/s\n");
  outs.metrics_path = dir.Write("m.jsonl", "{\"name\":\"sha\",\"text\":\"ab\"}\n");
  auto ok =
      ExtractAllMetrics({Spec("channel"), Spec("regex:tok_s:tok/s:higher:([0-9.]+) tok/s")}, outs);
  ASSERT_TRUE(ok) << ok.error().message;
  ASSERT_EQ(ok->size(), 2u);
  EXPECT_EQ((*ok)[1].value, 131.5);
  auto dup = ExtractAllMetrics(
      {Spec("regex:x::none:([0-9.]+) tok/s"), Spec("regex:x::none:decode: ([0-9]+)")}, outs);
  ASSERT_FALSE(dup);
  EXPECT_NE(dup.error().message.find("metric 'x' comes from both"), std::string::npos);
}

TEST(Regex, LastMatchingLineWins) {
  MetricSpec spec = Spec("regex:tok_s:tok/s:higher:([0-9.]+) tok/s");
  std::string log = "warmup 10.5 tok/s\nnoise\nfinal: 131.25 tok/s\nbye\n";
  auto m = ExtractRegex(spec, log, "stdout.txt");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->value, 131.25);
  EXPECT_EQ(m->unit, "tok/s");
  EXPECT_EQ(m->better, Better::kHigher);
  EXPECT_EQ(m->source, "regex stdout.txt:3");
}

TEST(Regex, Errors) {
  MetricSpec spec = Spec("regex:tok_s:tok/s:higher:rate=(\\S+)");
  auto none = ExtractRegex(spec, "nothing here\n", "out.log");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("metric 'tok_s' is missing: no line of out.log matches"),
            std::string::npos);
  auto word = ExtractRegex(spec, "rate=fast\n", "out.log");
  ASSERT_FALSE(word);
  EXPECT_NE(word.error().message.find("out.log:1: metric 'tok_s': captured 'fast' is not a number"),
            std::string::npos)
      << word.error().message;
  auto nan = ExtractRegex(spec, "rate=nan\n", "out.log");
  ASSERT_FALSE(nan);
  EXPECT_NE(nan.error().message.find("not a finite number"), std::string::npos);
  // A million nines is a number too large to be finite, not a crash.
  std::string flood = "rate=" + std::string(1 << 20, '9') + "\n";
  auto f = ExtractRegex(spec, flood, "out.log");
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message.find("not a finite number"), std::string::npos);
}

TEST(Regex, LongLinesAndHostilePatternsAreMatchedInLinearTime) {
  // RE2 has no per-character recursion: a figure at the end of a 4 MiB line is found (the
  // std::regex extractor skipped lines over 16 KiB).
  MetricSpec spec = Spec("regex:tok_s:tok/s:higher:rate=([0-9.]+)");
  std::string line = std::string(4 << 20, 'x') + " rate=131.5\n";
  auto m = ExtractRegex(spec, line, "out.log");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->value, 131.5);
  EXPECT_EQ(m->source, "regex out.log:1");
  // A pattern that backtracks exponentially in a backtracking engine.
  MetricSpec evil = Spec("regex:n::none:^(?:a+)+b([0-9])");
  auto e = ExtractRegex(evil, std::string(5000, 'a') + "c\n" + "aab7\n", "out.log");
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->value, 7);
  // An optional group that did not take part is not a number.
  auto opt = ExtractRegex(Spec("regex:n::none:x(1)?y"), "xy\n", "out.log");
  ASSERT_FALSE(opt);
  EXPECT_NE(opt.error().message.find("no line of out.log matches"), std::string::npos);
}

TEST(Regex, SyntaxErrorsNameThePattern) {
  EXPECT_NE(SpecError("regex:n::none:(?<=a)([0-9])").find("regex '(?<=a)([0-9])' is invalid"),
            std::string::npos);
}

TEST(Regex, FromNamedFile) {
  TempDir dir;
  LegOutputs outs;
  outs.working_dir = dir.path();
  dir.Write("bench.log", "throughput: 42.5 GB/s\n");
  auto r = ExtractMetrics(Spec("regex@bench.log:bw:GB/s:higher:throughput: ([0-9.]+)"), outs);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ((*r)[0].value, 42.5);
}

TEST(JsonPointer, ReadsNumbers) {
  std::string doc = R"({"summary":{"ttft_ms":12.5,"a/b":3,"list":[1,2,7]},"s":"x"})";
  auto a = ExtractJsonPointer(Spec("json:ttft:ms:lower:/summary/ttft_ms"), doc, "r.json");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->value, 12.5);
  EXPECT_EQ(a->source, "json r.json/summary/ttft_ms");
  auto esc = ExtractJsonPointer(Spec("json:ab::none:/summary/a~1b"), doc, "r.json");
  ASSERT_TRUE(esc) << esc.error().message;
  EXPECT_EQ(esc->value, 3);
  auto idx = ExtractJsonPointer(Spec("json:l::none:/summary/list/2"), doc, "r.json");
  ASSERT_TRUE(idx);
  EXPECT_EQ(idx->value, 7);
}

TEST(JsonPointer, Errors) {
  std::string doc = R"({"a":{"b":"text","n":null},"l":[1]})";
  auto missing = ExtractJsonPointer(Spec("json:x:ms:lower:/a/c"), doc, "r.json");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find(
                "metric 'x' is missing: r.json has nothing at JSON pointer '/a/c'"),
            std::string::npos)
      << missing.error().message;
  auto str = ExtractJsonPointer(Spec("json:x:ms:lower:/a/b"), doc, "r.json");
  ASSERT_FALSE(str);
  EXPECT_NE(str.error().message.find("is not a number (got \"text\")"), std::string::npos);
  auto null = ExtractJsonPointer(Spec("json:x:ms:lower:/a/n"), doc, "r.json");
  ASSERT_FALSE(null);
  auto bad_index = ExtractJsonPointer(Spec("json:x:ms:lower:/l/zz"), doc, "r.json");
  ASSERT_FALSE(bad_index);
  EXPECT_NE(bad_index.error().message.find("is missing"), std::string::npos);
  auto trunc = ExtractJsonPointer(Spec("json:x:ms:lower:/a"), "{\"a\":", "r.json");
  ASSERT_FALSE(trunc);
  EXPECT_NE(trunc.error().message.find("r.json: not valid JSON"), std::string::npos);
  auto empty = ExtractJsonPointer(Spec("json:x:ms:lower:/a"), "", "r.json");
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("r.json: empty"), std::string::npos);
}

}  // namespace
}  // namespace vouch
