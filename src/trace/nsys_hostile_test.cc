// Hostile "nsys exports" (issue 21): a kernel table that is a recursive VIEW ran for ever. Only
// plain tables are read, the file is opened read-only and immutable, and every statement runs
// under an instruction budget whose end is an error naming the file.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <string>

#include "trace/nsys_reader.h"
#include "trace/sqlite_test_util.h"
#include "trace/test_util.h"

namespace vouch::trace {
namespace {

using testing::TempPath;

// A fresh SQLite file at PATH made of SQL.
void MakeDb(const std::string& path, const std::string& sql) { testing::MakeSqliteDb(path, sql); }

constexpr const char* kStrings =
    "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, 'cudaLaunchKernel');"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100, 150, 1, 1, 2);";

TEST(NsysHostile, AKernelTableThatIsARecursiveViewIsRefused) {
  const std::string path = TempPath("recursive_view.sqlite");
  MakeDb(path, std::string(kStrings) +
                   "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE r(n) AS (SELECT 0 "
                   "UNION ALL SELECT n + 1 FROM r) SELECT n AS start, n + 1 AS end, 0 AS "
                   "deviceId, 7 AS streamId, n AS correlationId, 0 AS globalPid, 1 AS "
                   "demangledName FROM r;");
  auto t = ReadNsysSqlite(path);
  ASSERT_FALSE(t.ok()) << t->ops.size() << " kernels";
  EXPECT_EQ(t.error().message,
            path +
                ": CUPTI_ACTIVITY_KIND_KERNEL is a view, not a table: vouch reads the tables of an "
                "nsys export only (not an nsys export, or a hostile one)");
  std::remove(path.c_str());
}

TEST(NsysHostile, AVirtualTableIsRefused) {
  const std::string path = TempPath("virtual.sqlite");
  MakeDb(path, std::string(kStrings) + "CREATE VIRTUAL TABLE NVTX_EVENTS USING fts5(text);");
  auto t = ReadNsysSqlite(path);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find(path + ": NVTX_EVENTS is a virtual table, not a table"),
            std::string::npos)
      << t.error().message;
  std::remove(path.c_str());
}

TEST(NsysHostile, EveryStatementRunsUnderTheInstructionBudget) {
  // A name SQLite's URI syntax would cut ('?', '#', '%') is read as the file it names.
  const std::string path = TempPath("odd ?name#50%.sqlite");
  std::string rows;
  for (int i = 0; i < 2000; ++i)
    rows += (i ? "," : "") + fmt::format("({}, {}, 1, {}, 2)", 1000 + i * 10, 1005 + i * 10, i);
  MakeDb(path,
         std::string(kStrings) + "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES " + rows + ";");
  auto fine = ReadNsysSqlite(path);
  ASSERT_TRUE(fine.ok()) << fine.error().message;
  EXPECT_EQ(fine->api.size(), 2001u);
  auto starved = ReadNsysSqlite(path, NsysLimits{.budget_fixed = 5000, .budget_per_byte = 0});
  ASSERT_FALSE(starved.ok()) << starved->api.size() << " calls";
  EXPECT_EQ(starved.error().message,
            path +
                ": reading it took more than 5000 SQLite instructions (the bound for a file of "
                "its size): not an nsys export, or a hostile one (a recursive query?)");
  std::remove(path.c_str());
}

// The folded whole-trace summary reads the runtime table on a second connection in a thread of
// its own: the two count against one budget, not one each. The least budget that reads 3,000
// kernels and 3,000 launches is about twice what 3,000 kernels alone need (with a budget per
// connection it would be the same).
TEST(NsysHostile, TheFoldedSummarysTwoConnectionsShareOneBudget) {
  auto least_budget = [](const std::string& path, std::int64_t kernel_count,
                         std::int64_t launch_count) -> std::uint64_t {
    auto with = [&](std::uint64_t budget) {
      return SummarizeNsysSqlite(path, SummaryOptions{},
                                 NsysLimits{.budget_fixed = budget, .budget_per_byte = 0});
    };
    std::uint64_t lo = 1000, hi = 10'000'000;  // bisection, to 2 %
    EXPECT_TRUE(with(hi).ok());
    while (hi - lo > hi / 50) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      (with(mid).ok() ? hi : lo) = mid;
    }
    auto read = with(hi);
    EXPECT_TRUE(read.ok() && read->total.kernel_count == kernel_count &&
                read->total.launch_api_count == launch_count);
    auto starved = with(lo);
    EXPECT_TRUE(!starved.ok() &&
                starved.error().message.starts_with(path + ": reading it took more than"));
    return hi;
  };
  auto make = [](const std::string& path, int launches) {
    std::string kernels, calls;
    for (int i = 0; i < 3000; ++i)
      kernels += (i ? "," : "") + fmt::format("({}, {}, 1)", 1000 + i * 10, 1005 + i * 10);
    for (int i = 0; i < launches; ++i)
      calls += fmt::format(",({}, {}, 1, {}, 2)", 990 + i * 10, 995 + i * 10, i);
    MakeDb(path, std::string(kStrings) +
                     "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end "
                     "INTEGER NOT NULL, demangledName INTEGER);"
                     "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES " +
                     kernels + "; INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1, 2, 1, 0, 2)" +
                     calls + ";");
  };
  const std::string kernels_only = TempPath("kernels-only.sqlite");
  const std::string both = TempPath("kernels-and-launches.sqlite");
  make(kernels_only, 0);
  make(both, 3000);
  const std::uint64_t alone = least_budget(kernels_only, 3000, 2);
  const std::uint64_t together = least_budget(both, 3000, 3002);
  EXPECT_GT(together, alone * 3 / 2) << alone << " and " << together << " instructions";
  std::remove(kernels_only.c_str());
  std::remove(both.c_str());
}

// Tables are reserved for by their rowid span (two lookups, not a second read of every page):
// a span of 2^62 in a file of a few pages reserves no more than the file could hold, and both
// reads (kept and folded) give the rows there are.
TEST(NsysHostile, ARowidSpanOfTwoToTheSixtyTwoReservesNoMoreThanTheFileHolds) {
  const std::string path = TempPath("rowid-span.sqlite");
  MakeDb(path, std::string(kStrings) +
                   "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER "
                   "NOT NULL, demangledName INTEGER);"
                   "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (_rowid_, start, end, demangledName) "
                   "VALUES (1, 100, 110, 1), (4611686018427387904, 200, 230, 1);"
                   "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (_rowid_, start, end, globalTid, "
                   "correlationId, nameId) VALUES (-9223372036854775807, 90, 95, 1, 2, 2);");
  auto t = ReadNsysSqlite(path);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->ops.size(), 2u);
  EXPECT_EQ(t->api.size(), 2u);
  EXPECT_LT(t->ops.capacity(), 4096u);  // 4x a file of a few pages, in 64-byte ops
  EXPECT_LT(t->api.capacity(), 4096u);
  auto s = SummarizeNsysSqlite(path, SummaryOptions{});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->total.kernel_count, 2);
  EXPECT_EQ(s->total.kernel_sum_ns, 40);
  EXPECT_EQ(s->total.launch_api_count, 2);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace vouch::trace
