// Hostile ncu CSV exports (issue 21): a stall metric name of hundreds of KB (std::regex
// recursed per character and crashed), and two exports appended into one file (merged into
// wrong rows: the second header read as a kernel, repeated launch IDs overwriting the first).
#include <gtest/gtest.h>

#include <string>

#include "ncu/ncu_csv.h"

namespace vouch::ncu {
namespace {

const std::string kStallHead = "smsp__average_warps_issue_stalled_";
const std::string kStallTail = "_per_issue_active.ratio";

// A raw page: header, units row, one row per launch ID in IDS.
std::string RawPage(const std::string& stall_reason, const std::vector<int>& ids) {
  std::string o =
      "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"Device\",\"gpu__time_duration.sum\","
      "\"" +
      kStallHead + stall_reason + kStallTail +
      "\"\n\"\",\"\",\"\",\"\",\"\",\"nsecond\",\"ratio\"\n";
  for (int id : ids)
    o += "\"" + std::to_string(id) + "\",\"k" + std::to_string(id) +
         "\",\"(128, 1, 1)\",\"(4, 1, 1)\",\"0\",\"" + std::to_string(1000 * (id + 1)) +
         "\",\"2.5\"\n";
  return o;
}

// A details page: three metric rows per launch ID in IDS, in that order.
std::string DetailsPage(const std::vector<int>& ids) {
  std::string o =
      "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
  for (int id : ids) {
    const std::string head = "\"" + std::to_string(id) + "\",\"k" + std::to_string(id) + "\",";
    o += head + "\"GPU Speed Of Light Throughput\",\"Duration\",\"nsecond\",\"" +
         std::to_string(1000 * (id + 1)) + "\"\n";
    o += head + "\"GPU Speed Of Light Throughput\",\"Memory Throughput\",\"%\",\"50\"\n";
    o += head + "\"Launch Statistics\",\"Registers Per Thread\",\"register/thread\",\"32\"\n";
  }
  return o;
}

TEST(NcuHostile, AStallNameOfHalfAMegabyteIsAStallReason) {
  const std::string reason(512 << 10, 'w');
  auto r = ParseNcuCsv(RawPage(reason, {0, 1}), "long.csv");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->kernels.size(), 2u);
  ASSERT_EQ(r->kernels[0].top_stalls.size(), 1u);
  EXPECT_EQ(r->kernels[0].top_stalls[0].reason, reason);
  EXPECT_EQ(r->kernels[0].top_stalls[0].warps_per_issue_active, 2.5);
  EXPECT_EQ(r->kernels[1].duration_ns, 2000);
  // The bare prefix and suffix name no reason.
  auto bare = ParseNcuCsv(RawPage("", {0}), "bare.csv");
  ASSERT_TRUE(bare.ok()) << bare.error().message;
  EXPECT_TRUE(bare->kernels[0].top_stalls.empty());
}

TEST(NcuHostile, TwoRawExportsAppendedAreRefusedAtTheSecondHeader) {
  // Line 1 program output, 2 header, 3 units, 4-5 rows, 6 profiler line, 7 the second header.
  const std::string one = RawPage("wait", {0, 1});
  auto r = ParseNcuCsv("==PROF== Connected to process 1\n" + one + "==PROF== Disconnected\n" + one,
                       "twice.csv");
  ASSERT_FALSE(r.ok()) << "merged " << r->kernels.size() << " kernels";
  EXPECT_NE(r.error().message.find("twice.csv:7: a second CSV header (the first is on line 2)"),
            std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("two Nsight Compute exports appended"), std::string::npos)
      << r.error().message;
}

TEST(NcuHostile, ARepeatedLaunchIdOnTheRawPageIsRefused) {
  auto r = ParseNcuCsv(RawPage("wait", {0, 1, 0}), "ids.csv");
  ASSERT_FALSE(r.ok()) << "kernel 0 duration " << r->kernels[0].duration_ns.value_or(-1);
  EXPECT_NE(r.error().message.find("ids.csv:5: launch ID 0 again (its first row is on line 3)"),
            std::string::npos)
      << r.error().message;
  // A second units row (the second export's header line lost) is refused too.
  std::string two_units = RawPage("wait", {0});
  two_units += "\"\",\"\",\"\",\"\",\"\",\"usecond\",\"ratio\"\n";
  auto u = ParseNcuCsv(two_units, "units.csv");
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.error().message.find("units.csv:4: a second units row (the first is on line 2)"),
            std::string::npos)
      << u.error().message;
}

TEST(NcuHostile, TwoDetailsExportsAppendedAreRefused) {
  const std::string one = DetailsPage({0, 1});
  auto r = ParseNcuCsv(one + one, "details_twice.csv");
  ASSERT_FALSE(r.ok()) << "merged " << r->kernels.size() << " kernels";
  EXPECT_NE(r.error().message.find("details_twice.csv:8: a second CSV header"), std::string::npos)
      << r.error().message;
  // Without the second header: kernel 0's rows come back after kernel 1's.
  auto ids = ParseNcuCsv(DetailsPage({0, 1, 0}), "details_ids.csv");
  ASSERT_FALSE(ids.ok());
  EXPECT_NE(
      ids.error().message.find("details_ids.csv:8: launch ID 0 again (its first row is on line 2)"),
      std::string::npos)
      << ids.error().message;
  // One kernel's rows, one after the other, are one kernel.
  auto fine = ParseNcuCsv(DetailsPage({0, 1}), "details.csv");
  ASSERT_TRUE(fine.ok()) << fine.error().message;
  EXPECT_EQ(fine->kernels.size(), 2u);
  EXPECT_EQ(fine->kernels[1].duration_ns, 2000);
}

}  // namespace
}  // namespace vouch::ncu
