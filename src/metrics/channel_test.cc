#include "metrics/channel.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <vouch/metrics.h>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "metrics/metrics_test_util.h"
#include "util/fs.h"

namespace vouch {
namespace {

using metrics_test::TempDir;

TEST(Channel, ParsesMetricsTextAndEvents) {
  const char* text =
      "{\"event\":\"begin\",\"unix_s\":1764412345.5}\n"
      "{\"name\":\"tok_s\",\"value\":131.5,\"unit\":\"tok/s\",\"better\":\"higher\"}\n"
      "\n"
      "{\"name\":\"video_sha256\",\"text\":\"c62d23a4\"}\n"
      "{\"event\":\"end\"}\n";
  auto r = ParseMetricsChannel(text, "m.jsonl");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->metrics.size(), 2u);
  EXPECT_EQ(r->metrics[0].name, "tok_s");
  EXPECT_DOUBLE_EQ(r->metrics[0].value, 131.5);
  EXPECT_EQ(r->metrics[0].unit, "tok/s");
  EXPECT_EQ(r->metrics[0].better, Better::kHigher);
  EXPECT_EQ(r->metrics[0].source, "channel m.jsonl:2");
  EXPECT_FALSE(r->metrics[0].is_text());
  ASSERT_TRUE(r->metrics[1].is_text());
  EXPECT_EQ(*r->metrics[1].text, "c62d23a4");
  EXPECT_EQ(r->metrics[1].better, Better::kNone);
  ASSERT_EQ(r->events.size(), 2u);
  EXPECT_EQ(r->events[0].kind, ChannelEvent::Kind::kBegin);
  ASSERT_TRUE(r->events[0].unix_s.has_value());
  EXPECT_DOUBLE_EQ(*r->events[0].unix_s, 1764412345.5);
  EXPECT_EQ(r->events[1].kind, ChannelEvent::Kind::kEnd);
  EXPECT_FALSE(r->events[1].unix_s.has_value());  // the caller uses arrival time
  EXPECT_EQ(r->events[1].line, 5);
  EXPECT_FALSE(r->region_open);
}

TEST(Channel, EmptyIsNoMetrics) {
  auto r = ParseMetricsChannel("", "m.jsonl");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->metrics.empty());
  EXPECT_TRUE(r->events.empty());
}

TEST(Channel, TruncatedLastLineIsReported) {
  auto r = ParseMetricsChannel("{\"name\":\"a\",\"value\":1}\n{\"name\":\"b\",\"val", "m.jsonl");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("m.jsonl:2: the last line is truncated"), std::string::npos)
      << r.error().message;
}

TEST(Channel, LastLineWithoutNewlineButCompleteIsTaken) {
  auto r = ParseMetricsChannel("{\"name\":\"a\",\"value\":1}", "m.jsonl");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->metrics.size(), 1u);
}

TEST(Channel, MalformedMiddleLineNamesFileAndLine) {
  auto r = ParseMetricsChannel("{\"name\":\"a\",\"value\":1}\nnot json\n{\"event\":\"begin\"}\n",
                               "/tmp/leg3/metrics.jsonl");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/tmp/leg3/metrics.jsonl:2: not valid JSON"), std::string::npos)
      << r.error().message;
}

TEST(Channel, NanAndNullAreRefused) {
  auto nan = ParseMetricsChannel("{\"name\":\"a\",\"value\":NaN}\n", "m.jsonl");
  ASSERT_FALSE(nan);
  EXPECT_NE(nan.error().message.find("NaN and Infinity"), std::string::npos) << nan.error().message;
  auto null = ParseMetricsChannel("{\"name\":\"a\",\"value\":null}\n", "m.jsonl");
  ASSERT_FALSE(null);
  EXPECT_NE(null.error().message.find("must be a finite number"), std::string::npos);
  auto huge = ParseMetricsChannel("{\"name\":\"a\",\"value\":1e999}\n", "m.jsonl");
  ASSERT_FALSE(huge);  // overflows to inf
  auto str = ParseMetricsChannel("{\"name\":\"a\",\"value\":\"12\"}\n", "m.jsonl");
  ASSERT_FALSE(str);
}

TEST(Channel, RefusesBadShapes) {
  struct Case {
    const char* text;
    const char* error;
  } cases[] = {
      {"[1,2]\n", "expected a JSON object per line"},
      {"{\"value\":1}\n", "non-empty string \"name\""},
      {"{\"name\":\"a\"}\n", "has no \"value\""},
      {"{\"name\":\"a\",\"value\":1,\"text\":\"x\"}\n", "both \"value\" and \"text\""},
      {"{\"name\":\"a\",\"value\":1,\"better\":\"up\"}\n", "'up' is not a direction"},
      {"{\"name\":\"a\",\"value\":1}\n{\"name\":\"a\",\"value\":2}\n",
       "already reported on line 1"},
      {"{\"event\":\"end\"}\n", "\"end\" without a \"begin\""},
      {"{\"event\":\"begin\"}\n{\"event\":\"begin\"}\n", "a second \"begin\""},
      {"{\"event\":\"pause\"}\n", "unknown event"},
      {"{\"event\":\"begin\",\"unix_s\":\"now\"}\n", "\"unix_s\" must be a finite number"},
      {"{\"event\":\"begin\",\"unix_s\":10}\n{\"event\":\"end\",\"unix_s\":9}\n",
       "earlier than its \"begin\""},
  };
  for (const auto& c : cases) {
    auto r = ParseMetricsChannel(c.text, "m.jsonl");
    ASSERT_FALSE(r) << c.text;
    EXPECT_NE(r.error().message.find(c.error), std::string::npos)
        << c.text << " -> " << r.error().message;
    EXPECT_NE(r.error().message.find("m.jsonl:"), std::string::npos) << r.error().message;
  }
}

TEST(Channel, DeepNestingIsAnErrorNotACrash) {
  std::string deep =
      "{\"name\":\"a\",\"value\":" + std::string(100000, '[') + std::string(100000, ']') + "}\n";
  auto r = ParseMetricsChannel(deep, "m.jsonl");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("nested deeper than 128 levels"), std::string::npos)
      << r.error().message;
}

TEST(Channel, MetricsPastTheCapAreRefusedAndTheDuplicateCheckIsLinear) {
  std::string text;
  for (std::size_t i = 0; i <= kMaxMetricsPerLeg; ++i)
    text += "{\"name\":\"m" + std::to_string(i) + "\",\"value\":1}\n";
  auto r = ParseMetricsChannel(text, "m.jsonl");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "m.jsonl:100001: more than 100000 metrics from one leg; a leg may report at most "
            "100000");
  auto dup = ParseMetricsChannel(
      "{\"name\":\"a\",\"value\":1}\n{\"name\":\"b\",\"value\":1}\n{\"name\":\"a\",\"value\":2}\n",
      "m.jsonl");
  ASSERT_FALSE(dup);
  EXPECT_NE(dup.error().message.find("m.jsonl:3: metric 'a' was already reported on line 1"),
            std::string::npos);
}

TEST(Channel, OpenRegionIsFlagged) {
  auto r = ParseMetricsChannel("{\"event\":\"begin\"}\n{\"name\":\"a\",\"value\":1}\n", "m.jsonl");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->region_open);
}

TEST(Channel, MissingFileIsEmpty) {
  TempDir dir;
  auto r = ReadMetricsChannel(dir.path() + "/never_written.jsonl");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->metrics.empty());
}

// The shipped header writes what the parser reads, including the time and escaping.
TEST(Channel, HeaderHelperRoundTrips) {
  TempDir dir;
  std::string path = dir.path() + "/metrics.jsonl";
  ASSERT_EQ(::setenv("VOUCH_METRICS", path.c_str(), 1), 0);
  vouch::begin();
  vouch::report("decode.tokens_per_s", 131.25, "tok/s", "higher");
  vouch::report("weird \"name\" \\ x", 0.1, "ms", "lower");
  vouch::report_text("video_sha256", "c62d23a42972eab9");
  vouch::end();
  ::unsetenv("VOUCH_METRICS");
  vouch::report("ignored", 1.0);  // unset: a no-op

  auto r = ReadMetricsChannel(path);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->metrics.size(), 3u);
  EXPECT_EQ(r->metrics[0].name, "decode.tokens_per_s");
  EXPECT_DOUBLE_EQ(r->metrics[0].value, 131.25);
  EXPECT_EQ(r->metrics[0].unit, "tok/s");
  EXPECT_EQ(r->metrics[0].better, Better::kHigher);
  EXPECT_EQ(r->metrics[1].name, "weird \"name\" \\ x");
  EXPECT_EQ(r->metrics[1].value, 0.1);  // %.17g reads back exactly
  EXPECT_EQ(*r->metrics[2].text, "c62d23a42972eab9");
  ASSERT_EQ(r->events.size(), 2u);
  ASSERT_TRUE(r->events[0].unix_s && r->events[1].unix_s);
  EXPECT_GT(*r->events[0].unix_s, 1.6e9);
  EXPECT_LE(*r->events[0].unix_s, *r->events[1].unix_s);
}

TEST(Channel, HeaderHelperNanBecomesAnError) {
  TempDir dir;
  std::string path = dir.path() + "/metrics.jsonl";
  ASSERT_EQ(::setenv("VOUCH_METRICS", path.c_str(), 1), 0);
  vouch::report("bad", std::numeric_limits<double>::quiet_NaN(), "s", "lower");
  ::unsetenv("VOUCH_METRICS");
  auto r = ReadMetricsChannel(path);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("metric 'bad'"), std::string::npos) << r.error().message;
}

// The Python two-liner in docs/metrics.md, run as printed there, writes what we parse.
TEST(Channel, DocumentedPythonHelperRoundTrips) {
  auto doc = ReadFile(std::string(VOUCH_SOURCE_DIR) + "/docs/metrics.md");
  ASSERT_TRUE(doc) << doc.error().message;
  size_t start = doc->find("```python\n");
  ASSERT_NE(start, std::string::npos);
  start += 10;
  size_t stop = doc->find("```", start);
  std::string helper = doc->substr(start, stop - start);
  TempDir dir;
  std::string script = helper +
                       "vouch(event='begin')\n"
                       "vouch(name='tok_s', value=131.5, unit='tok/s', better='higher')\n"
                       "vouch(name='sha', text='abc')\n"
                       "vouch(event='end')\n";
  std::string py = dir.Write("helper.py", script);
  std::string path = dir.path() + "/metrics.jsonl";
  std::string cmd = "VOUCH_METRICS='" + path + "' python3 '" + py + "'";
  int rc = std::system(cmd.c_str());
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 127) GTEST_SKIP() << "no python3";
  ASSERT_EQ(rc, 0) << script;
  auto r = ReadMetricsChannel(path);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->metrics.size(), 2u);
  EXPECT_EQ(r->metrics[0].value, 131.5);
  EXPECT_EQ(r->metrics[0].better, Better::kHigher);
  EXPECT_EQ(*r->metrics[1].text, "abc");
  ASSERT_EQ(r->events.size(), 2u);
  EXPECT_TRUE(r->events[0].unix_s.has_value());
}

TEST(Channel, KeepsIntegersExactAndMarkersInRange) {
  auto r = ParseMetricsChannel(
      "{\"name\":\"ops\",\"value\":9007199254740993}\n{\"name\":\"x\",\"value\":1.5}\n", "m");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_TRUE(r->metrics[0].integer);
  EXPECT_EQ(*r->metrics[0].integer, 9007199254740993);
  EXPECT_FALSE(r->metrics[1].integer);
  // 1e300 s is finite but has no nanoseconds: refused with the line, never cast.
  auto far = ParseMetricsChannel(
      "{\"event\":\"begin\",\"unix_s\":1}\n{\"event\":\"end\",\"unix_s\":1e300}\n", "m");
  ASSERT_FALSE(far);
  EXPECT_EQ(far.error().message,
            "m:2: \"unix_s\": 1e+300 s is beyond +-2^62 ns (146 years): not a real time");
  auto ok = ParseMetricsChannel(
      "{\"event\":\"begin\",\"unix_s\":100.5}\n{\"event\":\"end\",\"unix_s\":101}\n", "m");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_TRUE(CheckMarkersInLeg(*ok, "m", "leg 1", 100'000'000'000, 101'000'000'000));
  auto out = CheckMarkersInLeg(*ok, "m", "leg 2 (b measured)", 100'600'000'000, 101'000'000'000);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().message,
            "leg 2 (b measured): m:1: the \"begin\" marker at unix_s 100.500000 is outside the "
            "leg's own time span (100.600000 to 101.000000): a region must lie inside the leg that "
            "marks it");
}

}  // namespace
}  // namespace vouch
