#include "gate/baseline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "util/fs.h"

namespace vouch {
namespace {

std::string Data(const std::string& name) {
  return std::string(VOUCH_SOURCE_DIR) + "/tests/data/gate/" + name;
}

ClockState Clock() { return {"GPU-1", "boot-1", "570.86.15", 1980.0, 1975.5, true}; }

TEST(BaselineTest, MedianOddEvenEmpty) {
  EXPECT_EQ(*Median({5, 1, 3}), 3);
  EXPECT_EQ(*Median({4, 1, 3, 2}), 2.5);
  EXPECT_FALSE(Median({}).has_value());
}

TEST(BaselineTest, VramDetection) {
  EXPECT_TRUE(IsVramMetric("own_peak_VRAM_mb", "MiB"));
  EXPECT_TRUE(IsVramMetric("device_mem_used", "count"));
  EXPECT_TRUE(IsVramMetric("peak_alloc", "bytes"));
  EXPECT_FALSE(IsVramMetric("peak_tok_s", "tok/s"));
  EXPECT_FALSE(IsVramMetric("alloc_bytes", "bytes"));  // not a peak
}

TEST(BaselineTest, MakeBaselineSeedDefaults) {
  std::vector<BaselineInput> in = {
      {"decode_tok_s", "tok/s", Better::kHigher, {101, 99, 100, 98, 102}},
      {"prefill_tok_s", "tok/s", Better::kHigher, {5000, 4000, 6000, 5100, 4900}},
      {"own_peak_vram_bytes", "bytes", Better::kLower, {7, 7, 7, 7, 7}},
  };
  BaselineOptions opt;
  opt.record_path = "runs/r1/record.json";
  opt.created_utc = "2026-11-29T10:00:00Z";
  auto b = MakeBaseline(in, "decode_tok_s", Clock(), opt);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->trials, 5);
  EXPECT_EQ(b->headline, "decode_tok_s");
  ASSERT_EQ(b->metrics.size(), 3u);
  const auto& d = b->metrics[0];
  EXPECT_EQ(d.value, 100);
  EXPECT_EQ(d.fail_pct, 3.0);
  EXPECT_FALSE(d.warn_pct.has_value());
  const auto& p = b->metrics[1];
  EXPECT_EQ(p.value, 5000);
  EXPECT_FALSE(p.fail_pct.has_value());
  EXPECT_EQ(p.warn_pct, 5.0);
  const auto& v = b->metrics[2];
  EXPECT_EQ(v.fail_pct, 10.0);
  EXPECT_EQ(v.skip_env, "VOUCH_SKIP_VRAM");
  EXPECT_EQ(v.better, Better::kLower);
}

TEST(BaselineTest, MakeBaselineOverrides) {
  std::vector<BaselineInput> in = {{"a", "ms", Better::kLower, {1, 2, 3}},
                                   {"b", "ms", Better::kLower, {1}}};
  BaselineOptions opt;
  opt.overrides["b"].fail_pct = 7.5;
  opt.overrides["b"].clear_warn = true;
  opt.overrides["b"].skip_env = "SKIP_B";
  auto b = MakeBaseline(in, "a", Clock(), opt);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->metrics[1].fail_pct, 7.5);
  EXPECT_FALSE(b->metrics[1].warn_pct.has_value());
  EXPECT_EQ(b->metrics[1].skip_env, "SKIP_B");
  EXPECT_EQ(b->trials, 3);
  EXPECT_FALSE(b->created_utc.empty());  // filled with now
}

TEST(BaselineTest, MakeBaselineRefusesBadInputs) {
  auto err = [](std::vector<BaselineInput> in, std::string headline, BaselineOptions o = {}) {
    auto b = MakeBaseline(in, headline, ClockState{}, o);
    EXPECT_FALSE(b.ok());
    return b.ok() ? std::string() : b.error().message;
  };
  EXPECT_NE(err({}, "x").find("no metrics"), std::string::npos);
  EXPECT_NE(err({{"a", "ms", Better::kLower, {}}}, "a").find("'a' has no values"),
            std::string::npos);
  EXPECT_NE(err({{"a", "ms", Better::kLower, {1, NAN}}}, "a").find("non-finite"),
            std::string::npos);
  EXPECT_NE(err({{"a", "ms", Better::kLower, {1}}, {"a", "ms", Better::kLower, {1}}}, "a")
                .find("appears twice"),
            std::string::npos);
  EXPECT_NE(err({{"a", "ms", Better::kLower, {1}}}, "decode").find("headline metric 'decode'"),
            std::string::npos);
  BaselineOptions o;
  o.overrides["nope"].fail_pct = 1;
  EXPECT_NE(err({{"a", "ms", Better::kLower, {1}}}, "a", o).find("'nope'"), std::string::npos);
}

TEST(BaselineTest, WriteReadRoundTrip) {
  std::vector<BaselineInput> in = {{"decode_tok_s", "tok/s", Better::kHigher, {1.5, 2.5}},
                                   {"own_peak_vram_bytes", "bytes", Better::kLower, {3e9}}};
  BaselineOptions opt;
  opt.record_path = "r/record.json";
  opt.created_utc = "2026-11-29T10:00:00Z";
  auto b = MakeBaseline(in, "decode_tok_s", Clock(), opt);
  ASSERT_TRUE(b.ok());
  std::string path =
      ::testing::TempDir() + "/vouch_baseline_rt_" + std::to_string(::getpid()) + ".json";
  ASSERT_TRUE(WriteBaseline(path, *b).ok());
  auto r = ReadBaseline(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(BaselineToJson(*r), BaselineToJson(*b));
  EXPECT_EQ(r->metrics[0].value, 2.0);
  EXPECT_EQ(r->clock.sm_mean_mhz, 1975.5);
  EXPECT_EQ(r->clock.boot_id, "boot-1");
  EXPECT_EQ(r->record_path, "r/record.json");
  EXPECT_EQ(r->trials, 2);
  std::filesystem::remove(path);
}

// A grown baseline keeps its first stage (Stein): written, read back, and refused when it is
// not a count between 2 and the trials.
TEST(BaselineTest, FirstStageTrialsRoundTripAndRefusals) {
  std::vector<BaselineInput> in = {{"tok_s", "tok/s", Better::kHigher, {1, 2, 3, 4, 5, 6, 7}}};
  BaselineOptions opt;
  opt.created_utc = "2026-11-29T10:00:00Z";
  auto b = MakeBaseline(in, "tok_s", Clock(), opt);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(BaselineToJson(*b).find("first_stage_trials"), std::string::npos);
  b->first_stage_trials = 5;
  const std::string text = BaselineToJson(*b);
  EXPECT_NE(text.find("\"first_stage_trials\": 5"), std::string::npos) << text;
  auto r = ParseBaseline(text, "grown.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->first_stage_trials, 5);
  for (const char* bad : {"1", "8", "-3", "\"5\"", "5.5", "1e300"}) {
    const std::string key = "\"first_stage_trials\": ";
    std::string t = text;
    t.replace(t.find(key + "5"), key.size() + 1, key + bad);
    auto e = ParseBaseline(t, "grown.json");
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.error().message.find("grown.json"), std::string::npos) << e.error().message;
    EXPECT_NE(e.error().message.find("first_stage_trials"), std::string::npos) << e.error().message;
  }
}

// The --metric sources the trials were read with (issue 37): written, read back, and a
// malformed list refused with the file's name.
TEST(BaselineTest, MetricSourcesRoundTripAndRefusals) {
  std::vector<BaselineInput> in = {{"tok_s", "tok/s", Better::kHigher, {1, 2, 3}}};
  BaselineOptions opt;
  opt.created_utc = "2026-11-29T10:00:00Z";
  auto b = MakeBaseline(in, "tok_s", Clock(), opt);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(BaselineToJson(*b).find("metric_sources"), std::string::npos);
  b->metric_sources = {"json:tok_s:tok/s:higher:/tok_s", "regex:x:ms:lower:x=(\\d+)"};
  const std::string text = BaselineToJson(*b);
  auto r = ParseBaseline(text, "src.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->metric_sources, b->metric_sources);
  std::string t = text;
  const std::string key = "\"metric_sources\": [";
  t.replace(t.find(key), key.size(), key + "3, ");
  auto e = ParseBaseline(t, "src.json");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("src.json: field 'metric_sources[0]': expected a string"),
            std::string::npos)
      << e.error().message;
}

TEST(BaselineTest, ReadsGoodFile) {
  auto b = ReadBaseline(Data("good.json"));
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->metrics.size(), 3u);
  EXPECT_EQ(b->metrics[2].skip_env, "VOUCH_SKIP_VRAM");
  EXPECT_EQ(b->metrics[1].warn_pct, 5.0);
  EXPECT_FALSE(b->metrics[1].fail_pct.has_value());
  EXPECT_TRUE(b->clock.valid);
}

// Each hostile file gives an error that names the file and the problem.
struct BadCase {
  const char* file;
  const char* expect;
};

class BaselineBadFileTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BaselineBadFileTest, RefusedWithClearError) {
  const BadCase& c = GetParam();
  auto b = ReadBaseline(Data(c.file));
  ASSERT_FALSE(b.ok()) << c.file;
  EXPECT_NE(b.error().message.find(c.file), std::string::npos) << b.error().message;
  EXPECT_NE(b.error().message.find(c.expect), std::string::npos) << b.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    Hostile, BaselineBadFileTest,
    ::testing::Values(
        BadCase{"truncated.json", "not valid JSON"}, BadCase{"empty.json", "the file is empty"},
        BadCase{"newer_version.json", "field 'schema_version': version 2 was written by a newer"},
        BadCase{"wrong_schema.json", "field 'schema': \"vouch.record\" is not \"vouch.baseline\""},
        BadCase{"wrong_type_value.json", "field 'metrics[1].value': expected a number, got string"},
        BadCase{"wrong_type_trials.json", "field 'trials': expected an integer, got 5.5"},
        BadCase{"missing_unit.json", "field 'metrics[2].unit': missing"},
        BadCase{"bad_better.json", "field 'metrics[0].better': expected \"higher\" or \"lower\""},
        BadCase{"no_metrics.json", "field 'metrics': empty"},
        BadCase{"duplicate_metric.json", "'decode_tok_s' appears twice"},
        BadCase{"not_object.json", "expected a JSON object at the top, got array"},
        BadCase{"does_not_exist.json", "cannot open"}));

TEST(BaselineTest, ParseRejectsNegativeThresholdAndInvalidClock) {
  auto text = ReadFile(Data("good.json"));
  ASSERT_TRUE(text.ok());
  std::string s = *text;
  std::string neg = s;
  neg.replace(neg.find("\"fail_pct\": 3"), 13, "\"fail_pct\": -3");
  auto b = ParseBaseline(neg, "neg.json");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("metrics[0].fail_pct': negative"), std::string::npos)
      << b.error().message;
  std::string clk = s;
  clk.replace(clk.find("\"sm_mean_mhz\": 1975.5"), 21, "\"sm_mean_mhz\": \"fast\"");
  b = ParseBaseline(clk, "clk.json");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("field 'clock.sm_mean_mhz': expected a number, got string"),
            std::string::npos)
      << b.error().message;
}

TEST(BaselineTest, EveryTruncationIsAnErrorNotACrash) {
  auto text = ReadFile(Data("good.json"));
  ASSERT_TRUE(text.ok());
  // Every prefix of a good file must be refused cleanly (the last byte is a newline,
  // so the full file minus it still parses: stop before the closing brace).
  size_t end = text->rfind('}');
  for (size_t n = 0; n < end; ++n) {
    auto b = ParseBaseline(std::string_view(*text).substr(0, n), "cut.json");
    EXPECT_FALSE(b.ok()) << n;
  }
}

}  // namespace
}  // namespace vouch
