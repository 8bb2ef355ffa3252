// The folded whole-trace summary of an nsys export (SummarizeNsysSqlite) against Summarize over
// the trace read whole (ReadNsysSqlite): the same summary, text and JSON, and the same errors.
#include "trace/whole_fold.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "trace/nsys_reader.h"
#include "trace/reader.h"
#include "trace/sqlite_test_util.h"
#include "trace/summary.h"
#include "trace/test_util.h"

namespace vouch::trace {
namespace {

using testing::TempPath;

void MakeDb(const std::string& path, const std::string& sql) {
  testing::MakeSqliteDb(path, "BEGIN;" + sql + "COMMIT;");  // one transaction: no sync per row
}

// Untyped columns: NULL names, unknown string ids and times out of order are allowed.
constexpr const char* kSchema =
    "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
    "INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'decode_step'), (3, 'prefill'),"
    " (4, 'cudaMemcpyAsync'), (10, 'gemm_a_kernel'), (11, 'gemm_b_kernel'), (12, 'norm_kernel'),"
    " (13, 'flash_fwd'), (14, 'elementwise');"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId,"
    " globalPid, demangledName);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, streamId, correlationId,"
    " globalPid, bytes);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, streamId, correlationId,"
    " globalPid, bytes);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId);"
    "CREATE TABLE NVTX_EVENTS (start, end, eventType, text, textId, globalTid);";

std::string Row(std::initializer_list<std::string> values) {
  std::string r = "(";
  for (const auto& v : values) r += (r.size() > 1 ? "," : "") + v;
  return r + ")";
}

// KERNELS pseudo-random kernels (seeded): in start order, overlapping, out of order, ended
// before they start, nameless, with unknown name ids; launches likewise; copies and sets.
std::string Rows(int kernels, std::uint32_t seed) {
  std::string sql;
  auto next = [&] { return seed = seed * 1664525u + 1013904223u, seed >> 8; };
  std::int64_t t = 1000;
  for (int i = 0; i < kernels; ++i) {
    const std::uint32_t r = next();
    t += static_cast<std::int64_t>(r % 900) - (r % 7 == 0 ? 1500 : 0);  // some go back
    const std::int64_t d = r % 11 == 0 ? -5 : static_cast<std::int64_t>(next() % 700);
    const std::uint32_t n = next() % 8;
    const std::string name = n == 6 ? "NULL" : n == 7 ? "999" : std::to_string(10 + n % 5);
    sql +=
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES " +
        Row({std::to_string(t), std::to_string(t + d), "0", "7", std::to_string(i), "4242", name}) +
        ";";
    const std::int64_t l = t - 200 + static_cast<std::int64_t>(next() % 150);
    const std::string api = next() % 5 == 0 ? "4" : next() % 9 == 0 ? "77" : "1";
    sql += "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES " +
           Row({std::to_string(l), std::to_string(l + (r % 13 == 0 ? -3 : 60)), "4243",
                std::to_string(i), api}) +
           ";";
    if (r % 10 == 0)
      sql += "INSERT INTO CUPTI_ACTIVITY_KIND_" + std::string(r % 20 ? "MEMCPY" : "MEMSET") +
             " VALUES " +
             Row({std::to_string(t), std::to_string(t + 40), "0", "7", std::to_string(i), "4242",
                  std::to_string(r % 4096)}) +
             ";";
    if (i % 16 == 0)
      sql += "INSERT INTO NVTX_EVENTS VALUES " +
             Row({std::to_string(t - 10), std::to_string(t + 5000), "59", "NULL",
                  i % 32 ? "2" : "3", "4243"}) +
             ";";
  }
  return sql;
}

// The summary both ways, rendered; an error's message where one fails.
std::string Folded(const std::string& path) {
  auto s = SummarizeNsysSqlite(path, SummaryOptions{});
  return s ? SummaryToJson(*s).dump(2) + RenderSummaryText(*s, 1000)
           : "error: " + s.error().message;
}
std::string Whole(const std::string& path) {
  auto t = ReadNsysSqlite(path);
  if (!t) return "error: " + t.error().message;
  auto s = Summarize(*t, SummaryOptions{});
  return s ? SummaryToJson(*s).dump(2) + RenderSummaryText(*s, 1000)
           : "error: " + s.error().message;
}

TEST(WholeFold, TheSameSummaryAsTheTraceReadWhole) {
  for (std::uint32_t seed : {1u, 7u, 24u}) {
    for (int kernels : {0, 1, 3, 400}) {
      const std::string path = TempPath("fold.sqlite");
      MakeDb(path, std::string(kSchema) + Rows(kernels, seed));
      const std::string folded = Folded(path);
      EXPECT_EQ(folded.rfind("error", 0), std::string::npos) << folded;
      EXPECT_EQ(folded, Whole(path)) << "seed " << seed << ", " << kernels << " kernels";
      // Through the format-sniffing entry point too, and with a window (not folded).
      auto s = SummarizeTrace(path, SummaryOptions{});
      ASSERT_TRUE(s.ok()) << s.error().message;
      EXPECT_EQ(SummaryToJson(*s).dump(2) + RenderSummaryText(*s, 1000), folded);
      SummaryOptions window;  // not folded: the trace read whole
      window.window = "decode_step";
      auto w = SummarizeNsysSqlite(path, window);
      auto t = ReadNsysSqlite(path);
      ASSERT_TRUE(t.ok());
      auto want = Summarize(*t, window);
      ASSERT_EQ(w.ok(), want.ok());
      EXPECT_EQ(w ? SummaryToJson(*w).dump(2) : w.error().message,
                want ? SummaryToJson(*want).dump(2) : want.error().message);
      std::remove(path.c_str());
    }
  }
}

TEST(WholeFold, TopKernelTiesAreBrokenAsBefore) {
  // Equal totals in one component: the name-table order decides, as in Summarize.
  const std::string path = TempPath("fold_ties.sqlite");
  std::string sql = kSchema;
  for (int i = 0; i < 6; ++i)
    sql += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES " +
           Row({std::to_string(100 * i), std::to_string(100 * i + 50), "0", "7", "0", "0",
                std::to_string(10 + (i * 5) % 3)}) +
           ";";
  MakeDb(path, sql);
  EXPECT_EQ(Folded(path), Whole(path));
  std::remove(path.c_str());
}

TEST(WholeFold, TablesWithOnlyTheColumnsThatMustBeThere) {
  // No device, stream, correlation, pid, bytes nor name column: the read whole puts defaults.
  const std::string path = TempPath("fold_minimal.sqlite");
  MakeDb(path,
         "CREATE TABLE StringIds (id, value); INSERT INTO StringIds VALUES (1, 'cuLaunchKernel');"
         "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end);"
         "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 20), (15, 40), (60, 70);"
         "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start, end);"
         "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (45, 50);"
         "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId);"
         "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (5, 12, 1, 1, 1), (50, 55, 1, 2, 1);");
  const std::string folded = Folded(path);
  EXPECT_EQ(folded.rfind("error", 0), std::string::npos) << folded;
  EXPECT_EQ(folded, Whole(path));
  std::remove(path.c_str());
}

TEST(WholeFold, TheSameErrors) {
  const std::string path = TempPath("fold_errors.sqlite");
  const std::string huge = std::to_string((std::int64_t{1} << 62) - 1);
  for (const std::string& rows : {
           // A GPU op's and an API call's durations past 2^62 ns in total.
           "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (0, " + huge + ", 0, 7, 1, 0, 10), (0, " +
               huge + ", 0, 7, 1, 0, 10);",
           "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (0, " + huge + ", 1, 1, 1), (0, " +
               huge + ", 1, 1, 4);",
           // A time that is text; a time out of range.
           std::string("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 'x', 0, 7, 1, 0, 10);"),
           "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (0, " + huge + "0, 1, 1, 1);",
           // An NVTX range beyond 2^62 ns.
           "INSERT INTO NVTX_EVENTS VALUES (0, " + huge + "0, 59, 'r', NULL, 1);",
       }) {
    MakeDb(path, std::string(kSchema) + rows);
    const std::string folded = Folded(path);
    EXPECT_EQ(folded.rfind("error: " + path, 0), 0u) << folded;
    EXPECT_EQ(folded, Whole(path));
  }
  std::remove(path.c_str());
}

// The API half (written by the nsys reader's second thread) shares no cache line with the op
// half nor with whatever lies after the fold.
TEST(WholeFold, TheTwoHalvesShareNoCacheLine) {
  static_assert(alignof(WholeFold) >= 64);
  static_assert(sizeof(WholeFold) % 64 == 0);
  WholeFold f;
  auto line = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) / 64; };
  const char* op_first = reinterpret_cast<const char*>(&f.ops);
  const char* op_last = reinterpret_cast<const char*>(&f.kernel_names + 1) - 1;
  const char* api_first = reinterpret_cast<const char*>(&f.api);
  const char* api_last = reinterpret_cast<const char*>(&f.launches + 1) - 1;
  EXPECT_LE(op_first, op_last);
  EXPECT_LT(line(op_last), line(api_first));
  EXPECT_LT(line(api_last), line(reinterpret_cast<const char*>(&f + 1)));
  // Each half's counters: Api moves only the API half's.
  f.Api(10, 30, true);
  f.Api(40, 45, false);
  EXPECT_EQ(f.api, 2);
  EXPECT_EQ(f.launch_api_count, 1);
  EXPECT_EQ(f.figures.launch_api_count, 0);
  EXPECT_EQ(f.ops, 0);
  EXPECT_EQ(f.api_total, 25);
}

}  // namespace
}  // namespace vouch::trace
