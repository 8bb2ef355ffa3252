#include "trace/nsys_reader.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "trace/reader.h"
#include "trace/summary.h"
#include "trace/test_util.h"

namespace vouch::trace {
namespace {

using testing::DataPath;
using testing::Slurp;
using testing::Spit;
using testing::TempPath;

// pid 4242, tid 4243, as nsys serialises them (a hardware id above bit 48 is ignored).
constexpr std::int64_t kGlobalTid = (std::int64_t{1} << 48) + (std::int64_t{4242} << 24) + 4243;
constexpr std::int64_t kGlobalPid = (std::int64_t{1} << 48) + (std::int64_t{4242} << 24);

void Exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
      << (err ? err : "") << "\n"
      << sql;
}

// A small database from the documented schema: two decode_step NVTX ranges, each with two
// launches (cudaLaunchKernel) and their kernels, plus one kernel launched outside them.
std::string MakeDb(const std::string& name, bool with_kernels = true) {
  std::string path = TempPath(name);
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  Exec(db, Slurp(DataPath("nsys_schema.sql")));
  Exec(db,
       "INSERT INTO StringIds VALUES "
       "(1,'cudaLaunchKernel'),(2,'gemm_kernel'),(3,'gemm'),(4,'norm_kernel'),"
       "(5,'norm'),(6,'decode_step'),(7,'cudaMemcpyAsync')");
  Exec(db, "INSERT INTO TARGET_INFO_GPU (vmId, id, name) VALUES (0, 0, 'NVIDIA H200')");
  std::string tid = std::to_string(kGlobalTid), pid = std::to_string(kGlobalPid);
  // NVTX: push/pop ranges (59) by textId and by text; a mark (34) to skip.
  Exec(db,
       "INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid) VALUES (1000, 2000, 59, "
       "6, " +
           tid + ")");
  Exec(db,
       "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (3000, 4000, 59, "
       "'decode_step', " +
           tid + ")");
  Exec(db,
       "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (3500, NULL, 34, "
       "'mark', " +
           tid + ")");
  Exec(db,
       "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES "
       "(1100, 1150, 0, " +
           tid + ", 1, 1, 0, 0), (1200, 1260, 0, " + tid +
           ", 2, 1, 0, 0),"
           "(3100, 3150, 0, " +
           tid + ", 3, 1, 0, 0), (3200, 3250, 0, " + tid +
           ", 4, 1, 0, 0),"
           "(5000, 5050, 0, " +
           tid + ", 5, 1, 0, 0), (3300, 3310, 0, " + tid + ", 6, 7, 0, 0)");
  if (with_kernels) {
    auto k = [&](int s, int e, int corr, int demangled, int shortname) {
      return "(" + std::to_string(s) + "," + std::to_string(e) + ",0,1,NULL,7," +
             std::to_string(corr) + "," + pid + "," + std::to_string(demangled) + "," +
             std::to_string(shortname) + ",NULL,0,0,32,1,1,1,128,1,1,0,0,0,0,1,0,0,0)";
    };
    Exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES " + k(1150, 1400, 1, 2, 3) + "," +
                 k(1450, 1500, 2, 4, 5) + "," + k(3150, 3300, 3, 2, 3) + "," +
                 k(3400, 3440, 4, 4, 5) + "," + k(5100, 5900, 5, 2, 3));
  }
  Exec(db,
       "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
       "correlationId, "
       "globalPid, bytes, copyKind) VALUES (3500, 3520, 0, 1, 7, 6, " +
           pid + ", 4096, 1)");
  sqlite3_close(db);
  return path;
}

TEST(NsysReader, ReadsTheDocumentedSchema) {
  std::string path = MakeDb("ok.sqlite");
  auto t = ReadNsysSqlite(path);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->format, "nsys");
  ASSERT_EQ(t->ops.size(), 6u);
  EXPECT_EQ(t->api.size(), 6u);
  ASSERT_EQ(t->ranges.size(), 2u);
  EXPECT_EQ(t->skipped_by_category.at("NVTX_EVENTS (not a range)"), 1);
  EXPECT_EQ(t->Name(t->ranges[0].name_id), "decode_step");
  EXPECT_EQ(t->Name(t->ranges[1].name_id), "decode_step");
  EXPECT_EQ(t->ranges[0].pid, 4242);
  EXPECT_EQ(t->ranges[0].tid, 4243);
  EXPECT_EQ(t->Name(t->ops[0].name_id), "gemm_kernel");  // demangled name preferred
  EXPECT_EQ(t->ops[0].pid, 4242);
  EXPECT_TRUE(t->api[0].is_launch);
  EXPECT_FALSE(t->api[5].is_launch);
  ASSERT_EQ(t->devices.size(), 1u);
  EXPECT_EQ(t->devices[0], "NVIDIA H200");
  // ReadTrace recognises SQLite by content.
  auto sniffed = ReadTrace(path);
  ASSERT_TRUE(sniffed.ok());
  EXPECT_EQ(sniffed->format, "nsys");
  std::remove(path.c_str());
}

TEST(NsysReader, NvtxWindowAttributesByCorrelation) {
  std::string path = MakeDb("window.sqlite");
  auto t = ReadNsysSqlite(path);
  ASSERT_TRUE(t.ok());
  SummaryOptions opt;
  opt.window = "decode_step";
  auto s = Summarize(*t, opt);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_NE(s->attribution.find("correlation"), std::string::npos);
  ASSERT_EQ(s->instances.size(), 2u);
  // Instance 1: kernels 1150-1400 and 1450-1500 (launched at 1100 and 1200).
  const auto& f1 = s->instances[0].figures;
  EXPECT_EQ(f1.kernel_count, 2);
  EXPECT_EQ(f1.kernel_sum_ns, 300);
  EXPECT_EQ(f1.gpu_span_ns, 350);
  EXPECT_EQ(f1.gaps.total_ns, 50);
  EXPECT_EQ(f1.elapsed_ns, 1000);
  EXPECT_EQ(f1.launch_api_union_ns, 110);
  EXPECT_EQ(f1.launch_api_overlap_ns, 60);  // 1200-1260 is inside the first kernel
  // Instance 2: two kernels and the copy (correlation 6); the kernel at 5100 is outside.
  const auto& f2 = s->instances[1].figures;
  EXPECT_EQ(f2.kernel_count, 2);
  EXPECT_EQ(f2.memcpy_count, 1);
  EXPECT_EQ(f2.memcpy_bytes, 4096u);
  EXPECT_EQ(s->total.kernel_sum_ns, 300 + 190);
  std::remove(path.c_str());
}

TEST(NsysReader, MissingTablesAndNonSqlite) {
  // No CUDA tables at all: an error that says what to do.
  std::string path = TempPath("empty.sqlite");
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  Exec(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)");
  sqlite3_close(db);
  auto t = ReadNsysSqlite(path);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find(path), std::string::npos);
  EXPECT_NE(t.error().message.find("CUPTI_ACTIVITY_KIND_KERNEL"), std::string::npos);
  EXPECT_NE(t.error().message.find("--trace=cuda"), std::string::npos);
  std::remove(path.c_str());

  // Only NVTX and runtime, no kernel table: a clearly empty summary.
  std::string nok = MakeDb("nokernels.sqlite", false);
  db = nullptr;
  ASSERT_EQ(sqlite3_open(nok.c_str(), &db), SQLITE_OK);
  Exec(db, "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY");
  sqlite3_close(db);
  auto t2 = ReadNsysSqlite(nok);
  ASSERT_TRUE(t2.ok()) << t2.error().message;
  auto s = Summarize(*t2, SummaryOptions{});
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->empty());
  std::remove(nok.c_str());

  // A kernel table without its time columns (a newer or broken schema).
  std::string odd = TempPath("odd.sqlite");
  std::remove(odd.c_str());
  ASSERT_EQ(sqlite3_open(odd.c_str(), &db), SQLITE_OK);
  Exec(db, "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (begin_ns INTEGER, finish_ns INTEGER)");
  sqlite3_close(db);
  auto t3 = ReadNsysSqlite(odd);
  ASSERT_FALSE(t3.ok());
  EXPECT_NE(t3.error().message.find("has no 'start' column"), std::string::npos)
      << t3.error().message;
  std::remove(odd.c_str());

  // Not SQLite at all, and a truncated SQLite file.
  std::string junk = TempPath("junk.sqlite");
  Spit(junk, "this is not a database, just text that is long enough to have a header.......\n");
  auto t4 = ReadNsysSqlite(junk);
  ASSERT_FALSE(t4.ok());
  EXPECT_NE(t4.error().message.find("not an SQLite database"), std::string::npos)
      << t4.error().message;
  std::remove(junk.c_str());
  std::string full = MakeDb("full.sqlite");
  std::string bytes = Slurp(full);
  std::string cut = TempPath("cut.sqlite");
  Spit(cut, bytes.substr(0, bytes.size() / 2));
  auto t5 = ReadTrace(cut);
  EXPECT_FALSE(t5.ok());
  if (!t5.ok()) {
    EXPECT_NE(t5.error().message.find(cut), std::string::npos);
  }
  std::remove(full.c_str());
  std::remove(cut.c_str());
}

// A time that is not an integer inside +-2^62 ns is refused, naming the file, table, row and
// column: an end of 1e300 (stored as REAL) used to be clamped to INT64_MAX and printed as
// "kernel time -9223372036854.736 ms" with exit 0, and TEXT was read as 0.
TEST(NsysReader, ATimeThatIsNotAnIntegerInRangeIsRefusedNamingTheRow) {
  struct Case {
    std::string set, says;
  } cases[] = {
      {"end = 1e300", "table CUPTI_ACTIVITY_KIND_KERNEL row 3: 'end' is REAL '1.0e+300'"},
      {"start = 'soon'", "table CUPTI_ACTIVITY_KIND_KERNEL row 3: 'start' is TEXT 'soon'"},
      {"end = 9223372036854775807",
       "table CUPTI_ACTIVITY_KIND_KERNEL row 3: 'end' = 9223372036854775807 ns is out of range"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.set);
    std::string path = MakeDb("badtime.sqlite");
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    Exec(db, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET " + c.set + " WHERE correlationId = 3");
    sqlite3_close(db);
    auto t = ReadNsysSqlite(path);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().message.find(path), std::string::npos) << t.error().message;
    EXPECT_NE(t.error().message.find(c.says), std::string::npos) << t.error().message;
    std::remove(path.c_str());
  }
  // The same in the runtime and NVTX tables.
  std::string path = MakeDb("badtime2.sqlite");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  Exec(db, "UPDATE NVTX_EVENTS SET start = 'x' WHERE start = 3000");
  sqlite3_close(db);
  auto t = ReadNsysSqlite(path);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("table NVTX_EVENTS row 2: 'start' is TEXT 'x'"),
            std::string::npos)
      << t.error().message;
  std::remove(path.c_str());
}

// In range one by one, but adding up to centuries: refused, not wrapped to a negative sum.
TEST(NsysReader, DurationsThatAddUpPast64BitsAreRefused) {
  std::string path = MakeDb("longsum.sqlite");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  Exec(db, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 0, end = 4611686018427387903");
  sqlite3_close(db);
  auto t = ReadNsysSqlite(path);
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto s = Summarize(*t, SummaryOptions{});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("durations add up to 2^62 ns"), std::string::npos)
      << s.error().message;
  EXPECT_NE(s.error().message.find(path), std::string::npos) << s.error().message;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace vouch::trace
