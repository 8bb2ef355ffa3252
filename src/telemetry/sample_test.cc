#include "telemetry/sample.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "telemetry/fixed6.h"
#include "telemetry/sample_parse.h"
#include "util/json_io.h"

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

TEST(SampleStream, ProcessLinesAreSkippedAndNeverReadAsSamples) {
  // The stream tries the flat reader first and looks for "processes" only in a line it
  // refuses: a process snapshot as the sampler writes it must be refused by it, whatever
  // its processes (none included).
  std::string text = "{\"gpu\":0,\"t_s\":0.5,\"sm_mhz\":1980}\n";
  for (int n = 0; n < 3; ++n) {
    ProcessSnapshot p;
    p.t_s = 0.5 + 0.01 * n;
    p.unix_s = 1795946969.5;
    for (int k = 0; k < n; ++k) p.processes.push_back(GpuProcess{});
    std::string line;
    AppendJsonLine(p, &line);
    Sample x;
    EXPECT_FALSE(ParseFlatSampleLine(line.substr(0, line.size() - 1), &x)) << line;
    text += line;
  }
  text += "{\"gpu\":0,\"t_s\":0.7,\"sm_mhz\":1410}\n";
  auto r = ReadSampleStream(TempFile("procs", text));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u) << text;
  EXPECT_EQ((*r)[0].sm_mhz, 1980);
  EXPECT_EQ((*r)[1].sm_mhz, 1410);
  EXPECT_EQ((*r)[1].t_s, 0.7);
}

TEST(Reasons, Names) {
  EXPECT_EQ(ReasonNames(0x5), (std::vector<std::string>{"gpu_idle", "sw_power_cap"}));
  EXPECT_EQ(ReasonName(0x1000), "reason_0x1000");
}

std::string Fixed6(double x) {
  std::string out;
  FormatFixed6(std::back_inserter(out), x);
  return out;
}

// The sampler's times are written as fmt's "{:.6f}" writes them, byte for byte.
TEST(FormatFixed6, IsFmtsSixDecimalsOnRandomAndEdgeValues) {
  std::mt19937_64 rng(20261204);
  std::uniform_real_distribution<double> unix_s(0, 4e9), t_s(0, 1e5), unit(0, 1);
  std::uniform_int_distribution<std::uint64_t> bits(0, 0x426D1A94A2000000ull);  // [0, 1e12)
  int checked = 0;
  auto same = [&](double x) {
    ASSERT_EQ(Fixed6(x), fmt::format("{:.6f}", x)) << fmt::format("{:a}", x);
    ++checked;
  };
  for (int i = 0; i < 100000; ++i) {
    same(unix_s(rng));
    same(t_s(rng));
    same(unit(rng));
    std::uint64_t b = bits(rng);
    double x;
    std::memcpy(&x, &b, sizeof x);
    same(x);
  }
  // Halves of a microsecond, exact (x.0078125 = 1/128) and nearly so, and the roll-over to
  // the next second.
  for (double whole : {0.0, 1.0, 17.0, 1795946969.0, 4e9, 999999999999.0}) {
    for (int k = 0; k < 128; ++k) same(whole + k / 128.0);
    for (int us = 0; us < 2000; ++us) {
      double x = whole + (us + 0.5) * 1e-6;
      same(x);
      same(std::nextafter(x, 0));
      same(std::nextafter(x, 1e13));
    }
    same(whole + 0.9999995);
    same(whole + 0.99999949999);
    same(whole + 0.9999999999);
  }
  for (double x :
       {0.0, -0.0, -1.5, -0.0000004, 1e12, 1e13, 1e300, 5e-324,
        std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN()})
    same(x);
  EXPECT_GT(checked, 430000);
}

// A process snapshot's line is the tree's compact dump, byte for byte: names with quotes,
// control codes, markup, UTF-8 and invalid UTF-8, no used bytes, no processes, odd times.
TEST(SampleStream, AProcessSnapshotLineIsItsTreesDump) {
  std::mt19937_64 rng(7);
  const std::vector<std::string> names = {"python3",       "",
                                          "a\"b\\c",       "tab\there\nnl\x01\x1f",
                                          "<script>&amp;", "caf\xc3\xa9",
                                          "bad\xff\xfe",   std::string("nul\0in", 6)};
  const std::vector<double> times = {0,
                                     0.01,
                                     1795946969.123456,
                                     1e-7,
                                     123456789.5,
                                     -0.0,
                                     std::numeric_limits<double>::infinity(),
                                     std::numeric_limits<double>::quiet_NaN()};
  for (int k = 0; k < 2000; ++k) {
    ProcessSnapshot p;
    p.gpu = static_cast<int>(rng() % 9) - 1;
    p.t_s = times[rng() % times.size()] + (k % 3 ? static_cast<double>(rng() % 100000) / 997 : 0);
    p.unix_s = times[rng() % times.size()];
    for (std::size_t n = rng() % 4; n > 0; --n) {
      GpuProcess q;
      q.pid = static_cast<std::uint32_t>(rng());
      q.name = names[rng() % names.size()];
      if (rng() % 2) q.used_bytes = rng();
      p.processes.push_back(q);
    }
    std::string line;
    AppendJsonLine(p, &line);
    ASSERT_EQ(line, DumpJson(ToJson(p)) + "\n") << k;
  }
}

}  // namespace
}  // namespace vouch
