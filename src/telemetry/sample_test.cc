#include "telemetry/sample.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "telemetry/sample_parse.h"

namespace vouch {
namespace {

std::string TempFile(const std::string& name, const std::string& content) {
  auto p = std::filesystem::temp_directory_path() / ("vouch_sample_test_" + name);
  std::ofstream(p) << content;
  return p.string();
}

TEST(SampleStream, ReadsTheFixture) {
  auto r = ReadSampleStream(VOUCH_FIXTURES_DIR "/nvml_h200_scenario.jsonl");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->size(), 4000u);
  EXPECT_EQ(*r->front().sm_mhz, 1980);
  EXPECT_EQ(*r->front().power_mw, 126369);
  EXPECT_EQ(*r->front().reasons, 1u);
}

TEST(SampleStream, EmptyIsAnError) {
  auto r = ReadSampleStream(TempFile("empty", ""));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("holds no samples"), std::string::npos);
}

TEST(SampleStream, MalformedLineNamesFileAndLine) {
  auto path = TempFile("malformed", "{\"t_s\":0,\"sm_mhz\":1980}\nnot json\n{\"t_s\":0.02}\n");
  auto r = ReadSampleStream(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(path + ":2"), std::string::npos) << r.error().message;
}

TEST(SampleStream, TruncatedLastLineIsSaid) {
  auto path = TempFile("trunc", "{\"t_s\":0,\"sm_mhz\":1980}\n{\"t_s\":0.01,\"sm_mh");
  auto r = ReadSampleStream(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("truncated"), std::string::npos) << r.error().message;
}

TEST(SampleStream, WrongTypesAndBackwardsTimeAreErrors) {
  auto r = ReadSampleStream(TempFile("types", "{\"t_s\":0,\"sm_mhz\":\"fast\"}\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("'sm_mhz' must be an integer"), std::string::npos)
      << r.error().message;
  auto b = ReadSampleStream(TempFile("back", "{\"t_s\":1}\n{\"t_s\":0.5}\n"));
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("backwards"), std::string::npos);
  auto m = ReadSampleStream(TempFile("missing", "{\"sm_mhz\":1}\n"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("t_s"), std::string::npos);
}

TEST(SampleStream, ValuesPast32BitsAreRefusedNotCut) {
  // 2^32 + 1980 MHz used to be read as 1980; 2^32 + 6 % utilization as 6.
  auto r = ReadSampleStream(TempFile("big_sm", "{\"t_s\":0,\"sm_mhz\":4294969276}\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(":1: 'sm_mhz' must be an integer in [0, 100000] or null "
                                   "(got 4294969276)"),
            std::string::npos)
      << r.error().message;
  auto u = ReadSampleStream(TempFile("big_util", "{\"t_s\":0,\"util_gpu_pct\":4294967302}\n"));
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.error().message.find("'util_gpu_pct' must be an integer in [0, 100]"),
            std::string::npos);
  auto g = ReadSampleStream(TempFile("big_gpu", "{\"t_s\":0,\"gpu\":4294967296}\n"));
  ASSERT_FALSE(g.ok());
  auto t = ReadSampleStream(TempFile("big_t", "{\"t_s\":1e300}\n"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("'t_s' must be a number in"), std::string::npos);
}

// The direct read of a flat line gives what the JSON tree and its schema give, and leaves
// every line it does not take (odd or refused) to them.
TEST(SampleStream, FlatLinesReadDirectlyAsTheSchemaReadsThem) {
  auto same = [](const std::string& line) {
    Sample fast;
    const bool took = ParseFlatSampleLine(line, &fast);
    auto tree = SampleFromJsonTree(line, "x");
    if (!took) return;  // the tree's answer stands, whatever it is
    ASSERT_TRUE(tree.ok()) << line << ": the direct read took a line the schema refuses";
    EXPECT_EQ(fast.gpu, tree->gpu) << line;
    EXPECT_EQ(fast.t_s, tree->t_s) << line;
    EXPECT_EQ(fast.unix_s, tree->unix_s) << line;
    EXPECT_EQ(fast.sm_mhz, tree->sm_mhz) << line;
    EXPECT_EQ(fast.mem_mhz, tree->mem_mhz) << line;
    EXPECT_EQ(fast.power_mw, tree->power_mw) << line;
    EXPECT_EQ(fast.util_gpu_pct, tree->util_gpu_pct) << line;
    EXPECT_EQ(fast.util_mem_pct, tree->util_mem_pct) << line;
    EXPECT_EQ(fast.reasons, tree->reasons) << line;
    EXPECT_EQ(fast.mem_used_bytes, tree->mem_used_bytes) << line;
    EXPECT_EQ(fast.temp_c, tree->temp_c) << line;
  };
  std::ifstream in(VOUCH_FIXTURES_DIR "/nvml_h200_scenario.jsonl");
  int taken = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.find("processes") != std::string::npos) continue;
    Sample x;
    taken += ParseFlatSampleLine(line, &x);
    same(line);
  }
  EXPECT_GT(taken, 10);
  const std::vector<std::string> odd = {
      R"({"t_s":0.5})",
      R"( { "t_s" : 1e-3 , "gpu" : 3 , "sm_mhz" : null , "reasons" : 18446744073709551615 } )",
      R"({"t_s":0.5,"sm_mhz":1980.0})",
      R"({"t_s":0.5,"sm_mhz":01980})",
      R"({"t_s":0.5,"sm_mhz":-1})",
      R"({"t_s":0.5,"sm_mhz":100001})",
      R"({"t_s":0.5,"reasons":18446744073709551616})",
      R"({"t_s":0.5,"mem_used_bytes":1125899906842625})",
      R"({"t_s":0.5,"power_mw":4294969276})",
      R"({"t_s":0.5,"t_s":0.6})",
      R"({"t_s":0.5,"other":1})",
      R"({"t_\u0073":0.5})",
      R"({"t_s":"0.5"})",
      R"({"t_s":.5})",
      R"({"t_s":+5})",
      R"({"t_s":5.})",
      R"({"t_s":1e999})",
      R"({"t_s":0.5,"gpu":null})",
      R"({"t_s":0.5,"temp_c":-273,"util_gpu_pct":100,"util_mem_pct":0})",
      R"({"t_s":0.5,"temp_c":-274})",
      R"({"t_s":0.5,})",
      R"({"t_s":0.5} x)",
      R"({"gpu":1})",
      R"({})",
      R"([1])",
      R"({"t_s":12345678901234567890,"unix_s":1800000000.123456789})",
  };
  for (const auto& line : odd) same(line);
  Sample x;
  EXPECT_TRUE(ParseFlatSampleLine(odd[1], &x));
  EXPECT_EQ(x.gpu, 3);
  EXPECT_FALSE(x.sm_mhz);
  EXPECT_FALSE(ParseFlatSampleLine(odd[4], &x));  // refused values go to the schema's error
  EXPECT_FALSE(ParseFlatSampleLine(odd[9], &x));
}

TEST(Reasons, Names) {
  EXPECT_EQ(ReasonNames(0x5), (std::vector<std::string>{"gpu_idle", "sw_power_cap"}));
  EXPECT_EQ(ReasonName(0x1000), "reason_0x1000");
}

}  // namespace
}  // namespace vouch
