// The streamed window summary of an nsys export (SummarizeNsysSqlite with a window, a
// WindowFold) against Summarize over the trace read whole (ReadNsysSqlite): the same summary,
// text and JSON, and the same errors.
#include "trace/window_fold.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "trace/nsys_reader.h"
#include "trace/sqlite_test_util.h"
#include "trace/summary.h"
#include "trace/test_util.h"

namespace vouch::trace {
namespace {

using testing::TempPath;

// Untyped columns: NULL names, unknown string ids and times out of order are allowed.
constexpr const char* kSchema =
    "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
    "INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'decode_step'), (3, 'prefill'),"
    " (4, 'cudaMemcpyAsync'), (5, 'cudaGraphLaunch'), (10, 'gemm_a_kernel'),"
    " (11, 'gemm_b_kernel'), (12, 'norm_kernel'), (13, 'flash_fwd'), (14, 'elementwise');"
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
std::string S(std::int64_t v) { return std::to_string(v); }

// Two processes of two threads each; per launch a call and its kernel, some with a copy or a
// set, some with a second kernel (a graph). Shapes that a window must survive, by SEED: kernels
// and calls out of order, overlapping, ended before they start, nameless, of unknown name ids,
// of the other process, without a correlation, a correlation id twice; decode_step ranges that
// nest, overlap and sit on other threads, some named by text, some never closed, marks.
std::string Rows(int launches, std::uint32_t seed) {
  std::string sql = "BEGIN;";
  auto next = [&] { return seed = seed * 1664525u + 1013904223u, seed >> 8; };
  const std::int64_t gtid[4] = {(std::int64_t{42} << 24) + 43, (std::int64_t{42} << 24) + 44,
                                (std::int64_t{50} << 24) + 51, (std::int64_t{42} << 24) + 43};
  std::int64_t t = 1000;
  for (int i = 0; i < launches; ++i) {
    const std::uint32_t r = next();
    t += static_cast<std::int64_t>(r % 900) - (r % 7 == 0 ? 1500 : 0);  // some go back
    const std::int64_t thread = gtid[next() % 4];
    const std::int64_t pid = thread >> 24;
    const std::int64_t corr = r % 53 == 0 ? i - 1 : i;  // sometimes an id twice
    const std::string corr_op = r % 61 == 0 ? "NULL" : r % 67 == 0 ? "-1" : S(corr);
    const std::int64_t l = t - 300 + static_cast<std::int64_t>(next() % 150);
    const std::string api = r % 5 == 0 ? "4" : r % 9 == 0 ? "77" : r % 11 == 0 ? "5" : "1";
    sql += "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES " +
           Row({S(l), S(l + (r % 13 == 0 ? -3 : static_cast<std::int64_t>(next() % 200))),
                S(thread), S(corr), api}) +
           ";";
    const int kernels = r % 17 == 0 ? 2 : 1;
    for (int k = 0; k < kernels; ++k) {
      const std::int64_t d = r % 19 == 0 ? -5 : static_cast<std::int64_t>(next() % 700);
      const std::uint32_t n = next() % 8;
      const std::string name = n == 6 ? "NULL" : n == 7 ? "999" : S(10 + n % 5);
      const std::string gpid = r % 23 == 0 ? S((pid ^ 1) << 24) : r % 29 == 0 ? "-1" : S(pid << 24);
      sql += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES " +
             Row({S(t + 100 * k), S(t + 100 * k + d), "0", "7", corr_op, gpid, name}) + ";";
    }
    if (r % 10 == 0)
      sql += "INSERT INTO CUPTI_ACTIVITY_KIND_" + std::string(r % 20 ? "MEMCPY" : "MEMSET") +
             " VALUES " + Row({S(t), S(t + 40), "0", "7", S(corr), S(pid << 24), S(r % 4096)}) +
             ";";
    if (i % 12 == 0) {
      const std::uint32_t q = next();
      const std::string end = q % 31 == 0 ? "NULL" : S(t + 2000 + q % 9000);
      const std::string type = q % 37 == 0 ? "34" : q % 2 ? "59" : "60";
      const bool by_text = q % 3 == 0;
      sql += "INSERT INTO NVTX_EVENTS VALUES " +
             Row({S(t - 400), end, type, by_text ? "'decode_step'" : "NULL",
                  by_text      ? "NULL"
                  : q % 5 == 0 ? "3"
                  : q % 7 == 0 ? "888"
                               : "2",
                  S(gtid[q % 4])}) +
             ";";
    }
  }
  return sql + "COMMIT;";
}

std::string Render(const Result<Summary>& s) {
  return s ? SummaryToJson(*s).dump(2) + RenderSummaryText(*s, 1000)
           : "error: " + s.error().message;
}
std::string Streamed(const std::string& path, const std::string& window) {
  SummaryOptions o;
  o.window = window;
  return Render(SummarizeNsysSqlite(path, o));
}
std::string Whole(const std::string& path, const std::string& window) {
  SummaryOptions o;
  o.window = window;
  auto t = ReadNsysSqlite(path);
  if (!t) return "error: " + t.error().message;
  return Render(Summarize(*t, o));
}

TEST(WindowFold, TheSameSummaryAsTheTraceReadWhole) {
  int instances = 0;
  for (std::uint32_t seed : {1u, 7u, 24u, 39u, 100u}) {
    for (int launches : {0, 1, 5, 600}) {
      const std::string path = TempPath("window.sqlite");
      testing::MakeSqliteDb(path, std::string(kSchema) + Rows(launches, seed));
      for (const char* window : {"decode_step", "prefill", "(string 888)"}) {
        const std::string whole = Whole(path, window);
        EXPECT_EQ(Streamed(path, window), whole)
            << "seed " << seed << ", " << launches << " launches, window " << window;
        if (launches == 600 && std::string(window) == "decode_step") {
          EXPECT_EQ(whole.rfind("error", 0), std::string::npos) << whole;
          SummaryOptions o;
          o.window = window;
          auto s = SummarizeNsysSqlite(path, o);
          ASSERT_TRUE(s.ok());
          EXPECT_GT(s->total.kernel_count, 100);
          EXPECT_GT(s->total.gaps.count, 0);
          EXPECT_GT(s->total.launch_api_overlap_ns, 0);
          instances += static_cast<int>(s->instances.size());
        }
      }
      std::remove(path.c_str());
    }
  }
  EXPECT_GT(instances, 100);
}

TEST(WindowFold, KernelsInOrderAreReadOnce) {
  // One thread, ranges one after the other, kernels in order: what the bench generates; the
  // figures by hand for the first instance.
  const std::string path = TempPath("window_ordered.sqlite");
  std::string sql = std::string(kSchema) + "BEGIN;";
  const std::int64_t tid = (std::int64_t{7} << 24) + 8, gpid = std::int64_t{7} << 24;
  for (int i = 0; i < 40; ++i) {
    const std::int64_t t = 1000 * i;
    sql += "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES " +
           Row({S(t), S(t + 100), S(tid), S(i), "1"}) + ";";
    sql += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES " +
           Row({S(t + 50), S(t + 450), "0", "7", S(i), S(gpid), S(10 + i % 3)}) + ";";
    if (i % 4 == 0)
      sql += "INSERT INTO NVTX_EVENTS VALUES " +
             Row({S(t - 10), S(t + 3990), "59", "NULL", "2", S(tid)}) + ";";
  }
  testing::MakeSqliteDb(path, sql + "COMMIT;");
  EXPECT_EQ(Streamed(path, "decode_step"), Whole(path, "decode_step"));
  SummaryOptions o;
  o.window = "decode_step";
  auto s = SummarizeNsysSqlite(path, o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->instances.size(), 10u);
  const Figures& f = s->instances[0].figures;
  EXPECT_EQ(f.elapsed_ns, 4000);
  EXPECT_EQ(f.kernel_count, 4);
  EXPECT_EQ(f.kernel_sum_ns, 1600);
  EXPECT_EQ(f.kernel_union_ns, 1600);
  EXPECT_EQ(f.gpu_span_ns, 3400);  // 50 .. 3450
  EXPECT_EQ(f.gaps.count, 3);      // 450 .. 1050, ...
  EXPECT_EQ(f.gaps.total_ns, 1800);
  EXPECT_EQ(f.launch_api_count, 4);
  EXPECT_EQ(f.launch_api_union_ns, 400);
  EXPECT_EQ(f.launch_api_overlap_ns, 200);  // each call's last 50 ns under its kernel
  EXPECT_EQ(s->total.kernel_count, 40);
  std::remove(path.c_str());
}

TEST(WindowFold, TheSameErrors) {
  const std::string path = TempPath("window_errors.sqlite");
  const std::string huge = S((std::int64_t{1} << 62) - 1);
  const std::string range = "INSERT INTO NVTX_EVENTS VALUES (0, 100, 59, 'decode_step', NULL, 1);";
  for (const std::string& rows : {
           // No range of that name (the names there are listed), no range at all.
           std::string("INSERT INTO NVTX_EVENTS VALUES (0, 100, 59, 'decode', NULL, 1),"
                       " (0, 100, 59, 'prefill', NULL, 1);"),
           std::string("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 20, 0, 7, 1, 0, 10);"),
           // Durations past 2^62 ns in total, of the GPU ops and of the calls.
           range + "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (0, " + huge +
               ", 0, 7, 1, 0, 10), (0, " + huge + ", 0, 7, 1, 0, 10);",
           range + "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (0, " + huge +
               ", 1, 1, 1), (0, " + huge + ", 1, 1, 4);",
           // A text time in the kernels while the range is fine, and a range beyond 2^62 ns
           // (the kernels' error comes first, as in the read whole).
           range + "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 'x', 0, 7, 1, 0, 10);",
           "INSERT INTO NVTX_EVENTS VALUES (0, " + huge + "0, 59, 'decode_step', NULL, 1);" +
               "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 'x', 0, 7, 1, 0, 10);",
           "INSERT INTO NVTX_EVENTS VALUES (0, " + huge + "0, 59, 'decode_step', NULL, 1);",
           // Nested instances whose figures add past 2^63 ns.
           [&] {
             std::string r =
                 "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (10, 20, 1, 1, 1);"
                 "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (0, " +
                 S((std::int64_t{1} << 61) + 5) + ", 0, 7, 1, 0, 10);";
             for (int i = 0; i < 5; ++i)
               r += "INSERT INTO NVTX_EVENTS VALUES (0, 100, 59, 'decode_step', NULL, 1);";
             return r;
           }(),
       }) {
    testing::MakeSqliteDb(path, std::string(kSchema) + rows);
    const std::string whole = Whole(path, "decode_step");
    EXPECT_EQ(whole.rfind("error: " + path, 0), 0u) << whole;
    EXPECT_EQ(Streamed(path, "decode_step"), whole);
  }
  std::remove(path.c_str());
}

TEST(WindowFold, AnUnknownWindowListsTheRangesThere) {
  const std::string path = TempPath("window_unknown.sqlite");
  testing::MakeSqliteDb(path, std::string(kSchema) +
                                  "INSERT INTO NVTX_EVENTS VALUES (0, 100, 59, 'decode_step', "
                                  "NULL, 1), (200, 300, 59, NULL, 3, 1);");
  const std::string streamed = Streamed(path, "decode");
  EXPECT_EQ(streamed, "error: " + path +
                          ": no annotation or NVTX range named 'decode' (did you mean "
                          "'decode_step'?); the trace has: decode_step (1), prefill (1)");
  EXPECT_EQ(streamed, Whole(path, "decode"));
  std::remove(path.c_str());
}

TEST(WindowFold, IntervalListsKeepEachListInOrder) {
  IntervalLists lists;
  std::vector<IntervalLists::List> l(3);
  for (std::int64_t i = 0; i < 100; ++i)
    lists.Append(&l[static_cast<std::size_t>(i % 3)], {i, i + 1});
  for (std::size_t k = 0; k < 3; ++k) {
    auto v = lists.Copy(l[k]);
    ASSERT_EQ(v.size(), k == 0 ? 34u : 33u);
    for (std::size_t i = 0; i < v.size(); ++i)
      EXPECT_EQ(v[i].first, static_cast<std::int64_t>(3 * i + k));
    EXPECT_EQ(lists.Last(l[k]), v.back());
  }
  // Merged where they meet; one longer than 2^32 ns, or far from its chunk's start, in a chunk
  // of 16-byte intervals, or in pieces that touch (the same union).
  IntervalLists::List m;
  const std::int64_t big = std::int64_t{1} << 40, four = std::int64_t{1} << 32;
  lists.Append(&m, {10, 20}, true);
  lists.Append(&m, {15, 30}, true);
  lists.Append(&m, {30, 40}, true);
  lists.Append(&m, {50, big}, true);
  lists.Append(&m, {big - 5, big + four}, true);
  lists.Append(&m, {-big, -big + 1});  // a wide chunk takes any interval
  lists.Append(&m, {-big + 2, -big + 4});
  lists.Append(&m, {-big + 3, -big + four + 9}, true);
  using I = IntervalLists::Interval;
  EXPECT_EQ(
      lists.Copy(m),
      (std::vector<I>{{10, 40}, {50, big + four}, {-big, -big + 1}, {-big + 2, -big + four + 9}}));
  EXPECT_EQ(m.size, 4u);
  EXPECT_EQ(lists.Last(m), (I{-big + 2, -big + four + 9}));
  // Merged past 2^32 ns from a compact chunk's start: the rest a touching piece of its own.
  IntervalLists::List n;
  lists.Append(&n, {-big, -big + 10});
  lists.Append(&n, {-big + 5, -big + four + 9}, true);
  lists.Append(&n, {-big + four + 9, -big + four + 20}, true);
  EXPECT_EQ(lists.Copy(n), (std::vector<I>{{-big, -big + 10},
                                           {-big + 10, -big + four + 9},  // 2^32 - 1 long
                                           {-big + four + 9, -big + four + 20}}));
  IntervalLists::Clear(&m);
  EXPECT_TRUE(lists.Copy(m).empty());
}

}  // namespace
}  // namespace vouch::trace
