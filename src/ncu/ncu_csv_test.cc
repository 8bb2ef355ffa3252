#include "ncu/ncu_csv.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace vouch::ncu {
namespace {

const std::string kRaw = std::string(VOUCH_FIXTURES_DIR) + "/ncu_raw.csv";
const std::string kDetails = std::string(VOUCH_FIXTURES_DIR) + "/ncu_details.csv";
const std::string kStalls = std::string(VOUCH_SOURCE_DIR) + "/tests/data/ncu/raw_with_stalls.csv";

std::string Slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(NcuCsv, RawPageFixture) {
  auto r = ReadNcuCsv(kRaw);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->layout, "raw");
  EXPECT_EQ(r->skipped_lines, 4);
  ASSERT_EQ(r->kernels.size(), 6u);
  const auto& k = r->kernels[0];
  EXPECT_EQ(k.id, "0");
  EXPECT_EQ(k.name, "nvjet_sm90_tst_128x64_64x8_4x1_v_bz_TNT");
  EXPECT_EQ(k.grid_size, "(4, 24, 1)");
  EXPECT_EQ(k.block_size, "(384, 1, 1)");
  EXPECT_DOUBLE_EQ(*k.duration_ns, 29088);
  EXPECT_DOUBLE_EQ(*k.registers_per_thread, 168);
  EXPECT_DOUBLE_EQ(*k.achieved_occupancy_percent, 14.03);
  EXPECT_DOUBLE_EQ(*k.issue_active_percent, 6.49);
  EXPECT_DOUBLE_EQ(*k.sm_throughput_percent, 22.83);
  EXPECT_DOUBLE_EQ(*k.memory_throughput_percent, 74.12);
  EXPECT_FALSE(k.l2_hit_rate_percent.has_value());  // not collected in this export
  EXPECT_EQ(k.metrics.at("gpu__time_duration.sum").unit, "ns");
  EXPECT_EQ(r->kernels[5].name, "nvjet_sm90_tst_256x8_64x6_2x1_v_bz_TNT");
}

TEST(NcuCsv, DetailsPageFixture) {
  auto r = ReadNcuCsv(kDetails);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->layout, "details");
  EXPECT_EQ(r->skipped_lines, 4);
  EXPECT_EQ(r->skipped_rows, 0);
  ASSERT_EQ(r->kernels.size(), 6u);
  const auto& k = r->kernels[0];
  EXPECT_EQ(k.name, "nvjet_sm90_tst_128x64_64x8_4x1_v_bz_TNT");
  EXPECT_DOUBLE_EQ(*k.duration_ns, 28448);
  EXPECT_DOUBLE_EQ(*k.registers_per_thread, 168);
  EXPECT_DOUBLE_EQ(*k.achieved_occupancy_percent, 14.03);
  EXPECT_DOUBLE_EQ(*k.sm_throughput_percent, 23.39);
  EXPECT_DOUBLE_EQ(*k.memory_throughput_percent, 75.86);  // the % one, not bytes/s
  EXPECT_EQ(k.metrics.at("Duration").section, "GPU Speed Of Light Throughput");
}

TEST(NcuCsv, StallsHitRateSpillsQuotedNamesAndInterleavedProfLines) {
  auto r = ReadNcuCsv(kStalls);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->skipped_lines, 3);
  ASSERT_EQ(r->kernels.size(), 2u);
  const auto& a = r->kernels[0];
  EXPECT_EQ(a.name, "void attn<128, 64>(signed char *, float, \"quoted\")");
  EXPECT_DOUBLE_EQ(*a.duration_ns, 258996000.0);  // usecond -> ns
  EXPECT_DOUBLE_EQ(*a.l2_hit_rate_percent, 98.85);
  EXPECT_DOUBLE_EQ(*a.local_spilling_requests, 1458688);
  EXPECT_DOUBLE_EQ(*a.issue_active_percent, 36.49);
  ASSERT_EQ(a.top_stalls.size(), 5u);
  EXPECT_EQ(a.top_stalls[0].reason, "wait");
  EXPECT_DOUBLE_EQ(a.top_stalls[0].warps_per_issue_active, 2.01);
  EXPECT_EQ(a.top_stalls[1].reason, "math_pipe_throttle");
  EXPECT_EQ(a.top_stalls[2].reason, "selected");
  const auto& b = r->kernels[1];
  EXPECT_DOUBLE_EQ(*b.duration_ns, 26500);
  EXPECT_EQ(b.top_stalls[0].reason, "sleeping");  // "n/a" barrier is left out
  EXPECT_EQ(b.top_stalls.size(), 5u);
  auto j = NcuToJson(*r);
  EXPECT_EQ(j["kernels"][0]["top_scheduler_stalls"][0]["reason"], "wait");
  EXPECT_NE(RenderNcuText(*r).find("top stalls"), std::string::npos);
}

TEST(NcuCsv, HostileInputs) {
  auto none = ParseNcuCsv("just program output\n==PROF== nothing\n", "x.csv");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("x.csv"), std::string::npos);
  EXPECT_NE(none.error().message.find("no Nsight Compute CSV header"), std::string::npos);
  std::string text = Slurp(kRaw);
  auto cut = ParseNcuCsv(text.substr(0, text.size() / 2), "cut.csv");
  EXPECT_FALSE(cut.ok());  // cut inside a quoted field
  auto header_only =
      ParseNcuCsv("\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Value\"\n", "h.csv");
  ASSERT_FALSE(header_only.ok());
  EXPECT_NE(header_only.error().message.find("no kernel rows"), std::string::npos);
  EXPECT_FALSE(ReadNcuCsv("/nonexistent.csv").ok());
  EXPECT_EQ(ParseNcuNumber("1,234.5"), 1234.5);
  EXPECT_FALSE(ParseNcuNumber("n/a").has_value());
  EXPECT_FALSE(ParseNcuNumber("12abc").has_value());
}

TEST(NcuCsv, NanAndNegativeDurationsAreNotFigures) {
  auto r = ParseNcuCsv(
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"launch__registers_per_thread\"\n"
      "\"\",\"\",\"ns\",\"register/thread\"\n"
      "\"0\",\"k0\",\"nan\",\"32\"\n"
      "\"1\",\"k1\",\"-5\",\"-1\"\n"
      "\"2\",\"k2\",\"1,500\",\"inf\"\n",
      "nan.csv");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->kernels.size(), 3u);
  EXPECT_FALSE(r->kernels[0].duration_ns.has_value());
  EXPECT_FALSE(r->kernels[1].duration_ns.has_value());
  EXPECT_FALSE(r->kernels[1].registers_per_thread.has_value());
  EXPECT_FALSE(r->kernels[2].registers_per_thread.has_value());
  EXPECT_DOUBLE_EQ(*r->kernels[2].duration_ns, 1500);
  std::string all;
  for (const auto& w : r->warnings) all += w + "\n";
  EXPECT_NE(all.find("kernel 0: duration 'nan' is not a non-negative number"), std::string::npos)
      << all;
  EXPECT_NE(all.find("kernel 1: duration '-5' is not a non-negative number"), std::string::npos)
      << all;
  EXPECT_NE(all.find("kernel 1: 'launch__registers_per_thread' is negative"), std::string::npos)
      << all;
  const std::string text = RenderNcuText(*r);
  // In a warning, never as a duration in the table.
  EXPECT_EQ(text.find("nan us"), std::string::npos) << text;
  EXPECT_EQ(text.find("-0.0 us"), std::string::npos) << text;
  EXPECT_FALSE(ParseNcuNumber("nan").has_value());
  EXPECT_FALSE(ParseNcuNumber("inf").has_value());
}

TEST(NcuCsv, ADetailsPageCutAtARowBoundaryIsFlagged) {
  std::string text = Slurp(kDetails);
  auto full = ParseNcuCsv(text, "full.csv");
  ASSERT_TRUE(full.ok());
  EXPECT_FALSE(full->suspect_truncated);
  // Cut after the first rows of kernel 1: a clean row boundary, so the CSV still parses.
  auto at = text.find("\n\"1\",");
  ASSERT_NE(at, std::string::npos);
  for (int rows = 0; rows < 10; ++rows) at = text.find('\n', at + 1);
  auto cut = ParseNcuCsv(text.substr(0, at + 1), "cut.csv");
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  EXPECT_EQ(cut->kernels.size(), 2u);
  EXPECT_TRUE(cut->suspect_truncated);
  std::string all;
  for (const auto& w : cut->warnings) all += w + "\n";
  EXPECT_NE(all.find("kernel 1 (the last in the file) has 1 of the 7 sections the other kernels "
                     "have (it ends in 'GPU Speed Of Light Throughput'): the CSV looks truncated"),
            std::string::npos)
      << all;
  // Cut mid-row, at a field boundary: no final newline.
  auto mid = ParseNcuCsv(text.substr(0, text.rfind(",\"")), "mid.csv");
  if (mid.ok()) {
    EXPECT_TRUE(mid->suspect_truncated);
  }
}

}  // namespace
}  // namespace vouch::ncu

namespace vouch::ncu {
namespace {

TEST(NcuCsv, KeepsTheSmFrequencyAndSaysUnattributed) {
  auto d = ReadNcuCsv(std::string(VOUCH_FIXTURES_DIR) + "/ncu_details.csv");
  ASSERT_TRUE(d.ok()) << d.error().message;
  ASSERT_FALSE(d->kernels.empty());
  ASSERT_TRUE(d->kernels[0].sm_frequency_mhz);
  EXPECT_NEAR(*d->kernels[0].sm_frequency_mhz, 1790.345542, 1e-3);  // "hz","1,790,345,542.74"
  auto r = ReadNcuCsv(std::string(VOUCH_FIXTURES_DIR) + "/ncu_raw.csv");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->kernels[0].sm_frequency_mhz);
  EXPECT_NEAR(*r->kernels[0].sm_frequency_mhz, 1793.905562, 1e-3);  // gpc__cycles_elapsed
  std::string text = RenderNcuText(*d);
  EXPECT_NE(text.find("clock: unattributed: an ncu export has no vouch clock window"),
            std::string::npos);
  EXPECT_NE(text.find("SM MHz"), std::string::npos);
  EXPECT_NE(text.find(" 1790 "), std::string::npos) << text.substr(0, 600);
  auto j = NcuToJson(*d);
  EXPECT_EQ(j["clock_window"], kNcuClockWindow);
  EXPECT_NEAR(j["kernels"][0]["sm_frequency_mhz"].get<double>(), 1790.35, 0.01);
}

}  // namespace
}  // namespace vouch::ncu
