#include "trace/kineto_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include "trace/test_util.h"

namespace vouch::trace {
namespace {

using testing::DataPath;
using testing::Slurp;
using testing::Spit;
using testing::TempPath;

const std::string kFixture = std::string(VOUCH_FIXTURES_DIR) + "/kineto_lm_small.json.gz";

std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return out;
}

std::int64_t Count(const Trace& t, GpuOpKind k) {
  std::int64_t n = 0;
  for (const auto& o : t.ops) n += o.kind == k;
  return n;
}

TEST(ParseMicrosToNs, ExactForSixteenDigits) {
  std::int64_t ns = 0;
  ASSERT_TRUE(ParseMicrosToNs("5090020294577.553", &ns));
  EXPECT_EQ(ns, 5090020294577553);
  ASSERT_TRUE(ParseMicrosToNs("2.272", &ns));
  EXPECT_EQ(ns, 2272);
  ASSERT_TRUE(ParseMicrosToNs("7 ", &ns));
  EXPECT_EQ(ns, 7000);
  ASSERT_TRUE(ParseMicrosToNs("1.2345", &ns));  // the fourth decimal rounds
  EXPECT_EQ(ns, 1235);
  ASSERT_TRUE(ParseMicrosToNs("0.5", &ns));
  EXPECT_EQ(ns, 500);
  ASSERT_TRUE(ParseMicrosToNs("1e3", &ns));
  EXPECT_EQ(ns, 1000000);
  ASSERT_TRUE(ParseMicrosToNs("-3.5", &ns));
  EXPECT_EQ(ns, -3500);
  EXPECT_FALSE(ParseMicrosToNs("\"12\"", &ns));
  EXPECT_FALSE(ParseMicrosToNs("", &ns));
}

TEST(KinetoReader, ReadsTheH200Fixture) {
  auto t = ReadKinetoTrace(kFixture);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->format, "kineto");
  EXPECT_EQ(Count(*t, GpuOpKind::kKernel), 2209);
  EXPECT_EQ(Count(*t, GpuOpKind::kMemcpy), 1);
  EXPECT_EQ(Count(*t, GpuOpKind::kMemset), 8);
  EXPECT_EQ(t->api.size(), 2312u + 821u);
  EXPECT_EQ(t->ranges.size(), 66u);
  EXPECT_EQ(t->skipped_by_category.at("cpu_op"), 13634);
  EXPECT_EQ(t->skipped_by_category.at("ac2g"), 3128 + 2223);
  EXPECT_TRUE(t->unknown_categories.empty());
  ASSERT_FALSE(t->devices.empty());
  EXPECT_EQ(t->devices[0], "NVIDIA H200");
  // The first kernel, exactly: ts 5090020296962.511 us, dur 2.272 us, correlation 12.
  const GpuOp* first = nullptr;
  for (const auto& o : t->ops)
    if (o.kind == GpuOpKind::kKernel && (!first || o.start_ns < first->start_ns)) first = &o;
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->start_ns, 5090020296962511);
  EXPECT_EQ(first->end_ns - first->start_ns, 2272);
  EXPECT_EQ(first->correlation, 12);
  EXPECT_EQ(first->stream, 7);
  EXPECT_EQ(first->device, 0);
}

TEST(KinetoReader, PlainAndGzipAndTinyBlocksAgree) {
  std::string json = Gunzip(kFixture);
  ASSERT_GT(json.size(), 1000000u);
  auto whole = ParseKinetoJson(json, "mem");
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  // 4 KiB blocks: most events straddle a block boundary at some point.
  auto tiny = ParseKinetoJson(json, "mem", 4096);
  ASSERT_TRUE(tiny.ok()) << tiny.error().message;
  EXPECT_EQ(whole->ops.size(), tiny->ops.size());
  EXPECT_EQ(whole->api.size(), tiny->api.size());
  EXPECT_EQ(whole->event_count, tiny->event_count);
  EXPECT_EQ(whole->first_ns, tiny->first_ns);
  EXPECT_EQ(whole->last_ns, tiny->last_ns);
  std::string plain = TempPath("plain.json");
  Spit(plain, json);
  auto fromfile = ReadKinetoTrace(plain);
  ASSERT_TRUE(fromfile.ok()) << fromfile.error().message;
  EXPECT_EQ(fromfile->ops.size(), whole->ops.size());
  std::remove(plain.c_str());
}

TEST(KinetoReader, TrickyStringsUnknownCategoriesAndNesting) {
  for (std::size_t block : {std::size_t{0}, std::size_t{7}, std::size_t{64}}) {
    auto t = ParseKinetoJson(Slurp(DataPath("small.json")), "small.json", block);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(Count(*t, GpuOpKind::kKernel), 6) << block;
    EXPECT_EQ(t->unknown_categories.at("brand_new_category"), 2);
    EXPECT_EQ(t->skipped_by_category.at("ac2g"), 1);
    EXPECT_EQ(t->skipped_by_category.at("(metadata)"), 1);
    bool quoted = false;
    for (const auto& n : t->names) quoted = quoted || n == "norm \"quoted\" \\ kernel";
    EXPECT_TRUE(quoted);
  }
}

TEST(KinetoReader, TruncatedFilesAreErrorsNamingTheFile) {
  std::string json = Slurp(DataPath("small.json"));
  for (std::size_t cut : {json.size() / 3, json.size() / 2, json.size() - 3}) {
    auto t = ParseKinetoJson(json.substr(0, cut), "cut.json");
    ASSERT_FALSE(t.ok()) << cut;
    EXPECT_NE(t.error().message.find("cut.json"), std::string::npos);
    EXPECT_NE(t.error().message.find("truncated"), std::string::npos) << t.error().message;
  }
  // A truncated gzip stream.
  std::string gz = Slurp(kFixture);
  std::string path = TempPath("cut.json.gz");
  Spit(path, gz.substr(0, gz.size() / 2));
  auto t = ReadKinetoTrace(path);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find(path), std::string::npos);
  EXPECT_NE(t.error().message.find("truncated"), std::string::npos) << t.error().message;
  std::remove(path.c_str());
}

TEST(KinetoReader, MalformedAndEmptyInputs) {
  auto empty = ParseKinetoJson("", "empty.json");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("empty"), std::string::npos);
  auto text = ParseKinetoJson("hello world", "text.json");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("not JSON"), std::string::npos);
  auto noevents = ParseKinetoJson("{\"schemaVersion\": 1}", "x.json");
  ASSERT_FALSE(noevents.ok());
  EXPECT_NE(noevents.error().message.find("no traceEvents"), std::string::npos);
  auto bad = ParseKinetoJson("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": tru}]}", "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("bad.json"), std::string::npos);
  auto notobj = ParseKinetoJson("{\"traceEvents\": [1, 2]}", "n.json");
  ASSERT_FALSE(notobj.ok());
  auto missing = ReadKinetoTrace("/nonexistent/trace.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/trace.json"), std::string::npos);
  // A bare array of events is a valid Chrome trace too.
  auto bare = ParseKinetoJson(
      "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":1,\"dur\":2}]",
      "bare.json");
  ASSERT_TRUE(bare.ok()) << bare.error().message;
  EXPECT_EQ(bare->ops.size(), 1u);
}

}  // namespace
}  // namespace vouch::trace
