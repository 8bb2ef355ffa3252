// Hostile files through the real binary (issue 21, classes 2 and 4): patterns are RE2 (a long
// name crashed std::regex), SQLite files are read as tables under a bound (a recursive view ran
// for ever), and two ncu exports appended into one file are refused, not merged. Every command
// runs under `timeout`: a hang is exit status 124, and fails.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

namespace vouch {
namespace {

using nlohmann::json;
using testing_util::Has;
using Res = testing_util::ShellResult;

constexpr const char* kRecursive =
    "WITH RECURSIVE r(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM r)";

class ForgeFilesCli : public testing_util::ScratchDirTest {
 protected:
  Res Vouch(const std::string& args) const {
    return testing_util::Shell(fmt::format("cd {} && VOUCH_LOCK_FILE={}/lock timeout 30 {} {}", D(),
                                           D(), VOUCH_BINARY, args));
  }
  // Runs SQL on the SQLite file REL (created when missing) with the C API.
  void Sql(const std::string& rel, const std::string& sql) const {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(D(rel).c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    const std::string message = err ? err : "";
    sqlite3_free(err);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << message;
  }
  // An ncu raw page: header, units row and one row per launch ID 0..N-1.
  static std::string RawPage(const std::string& stall, int n) {
    std::string o =
        "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"Device\","
        "\"gpu__time_duration.sum\",\"smsp__average_warps_issue_stalled_" +
        stall + "_per_issue_active.ratio\"\n\"\",\"\",\"\",\"\",\"\",\"usecond\",\"ratio\"\n";
    for (int i = 0; i < n; ++i)
      o += fmt::format("\"{}\",\"kernel_{}\",\"(128, 1, 1)\",\"(8, 1, 1)\",\"0\",\"{}\",\"1.5\"\n",
                       i, i, 10 * (i + 1));
    return o;
  }
};

TEST_F(ForgeFilesCli, NcuReadsAStallNameOfHalfAMegabyte) {
  // std::regex recursed once per character of the name and crashed `vouch ncu` (SIGSEGV).
  const std::string reason(512 << 10, 'x');
  std::ofstream(D("long.csv")) << RawPage(reason, 2);
  auto r = Vouch("ncu long.csv --json");
  ASSERT_EQ(r.rc, 0) << r.out.substr(0, 2000);
  auto j = json::parse(r.out);
  ASSERT_EQ(j["kernels"].size(), 2u);
  ASSERT_EQ(j["kernels"][1]["top_scheduler_stalls"].size(), 1u);
  EXPECT_EQ(j["kernels"][1]["top_scheduler_stalls"][0]["reason"].get<std::string>().size(),
            512u << 10);
  EXPECT_EQ(j["kernels"][1]["duration_ns"], 20000.0);
}

TEST_F(ForgeFilesCli, NcuRefusesTwoExportsAppendedIntoOneFile) {
  // Line 1 profiler output, 2 header, 3 units, 4-6 rows, 7 profiler output, 8 second header.
  const std::string one = RawPage("wait", 3);
  std::ofstream(D("twice.csv")) << "==PROF== Connected to process 7\n"
                                << one << "==PROF== Connected to process 8\n"
                                << one;
  auto r = Vouch("ncu twice.csv");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "twice.csv:8: a second CSV header (the first is on line 2): two Nsight "
                  "Compute exports appended into one file?"))
      << r.out;
  // Without the second header the repeated launch IDs are caught: kernel 0 is not overwritten.
  std::ofstream(D("ids.csv")) << one << one.substr(one.find("\"0\",\"kernel_0\""));
  auto ids = Vouch("ncu ids.csv --json");
  EXPECT_EQ(ids.rc, 1) << ids.out;
  EXPECT_TRUE(Has(ids.out, "ids.csv:6: launch ID 0 again (its first row is on line 3)")) << ids.out;
}

TEST_F(ForgeFilesCli, TraceRulesAreLinearAndRe2RejectionsNameTheFile) {
  // A kernel name of 1 MiB against (a|b)*: std::regex recursed once per character.
  const std::string name = "gemm_" + std::string(1 << 20, 'a') + "c";
  std::ofstream(D("trace.json"))
      << R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": ")" << name
      << R"(", "pid": 0, "tid": 7, "ts": 1000, "dur": 60, "args": {"correlation": 1, "stream": 7, "device": 0}}]})";
  std::ofstream(D("rules.txt")) << "gemm = ^gemm_(a|b)*c$\n";
  auto r = Vouch("trace summarize trace.json --rules rules.txt --json");
  ASSERT_EQ(r.rc, 0) << r.out.substr(0, 2000);
  auto j = json::parse(r.out);
  EXPECT_TRUE(j["components"].contains("gemm")) << j["components"].dump();
  EXPECT_FALSE(j["components"].contains("other")) << j["components"].dump();
  // Lookahead is ECMAScript, not RE2: refused, naming the file, the component and the pattern.
  std::ofstream(D("look.txt")) << "attn = flash(?=_fwd)\n";
  auto bad = Vouch("trace summarize trace.json --rules look.txt");
  EXPECT_EQ(bad.rc, 1) << bad.out;
  EXPECT_TRUE(Has(bad.out,
                  "look.txt: the pattern of component 'attn' is not a valid regular "
                  "expression (RE2: "))
      << bad.out;
  EXPECT_TRUE(Has(bad.out, "): flash(?=_fwd)")) << bad.out;
}

TEST_F(ForgeFilesCli, AnNsysExportWhoseKernelTableIsARecursiveViewIsRefused) {
  Sql("view.sqlite",
      "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
      "INSERT INTO StringIds VALUES (1, 'gemm');"
      "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS " +
          std::string(kRecursive) +
          " SELECT n AS start, n + 1 AS end, 0 AS deviceId, 7 AS streamId, n AS correlationId, "
          "0 AS globalPid, 1 AS demangledName FROM r;");
  auto r = Vouch("trace summarize view.sqlite");
  EXPECT_EQ(r.rc, 1) << r.out;  // was 124: it ran for ever
  EXPECT_TRUE(Has(r.out, "view.sqlite: CUPTI_ACTIVITY_KIND_KERNEL is a view, not a table"))
      << r.out;
}

TEST_F(ForgeFilesCli, AStoreWhoseRunsTableIsARecursiveViewIsRefused) {
  auto a =
      Vouch(fmt::format("history add --store h.sqlite {}/tests/data/store/run", VOUCH_SOURCE_DIR));
  ASSERT_EQ(a.rc, 0) << a.out;
  Sql("h.sqlite", "ALTER TABLE runs RENAME TO runs_real; CREATE VIEW runs AS " +
                      std::string(kRecursive) + " SELECT runs_real.* FROM runs_real, r;");
  auto l = Vouch("history list --store h.sqlite");
  EXPECT_EQ(l.rc, 1) << l.out;  // was 124: it ran for ever
  EXPECT_TRUE(Has(l.out,
                  "h.sqlite: it holds a view named 'runs', and a vouch store has plain "
                  "tables and columns only: not a vouch store, or a tampered one; refused"))
      << l.out;
}

}  // namespace
}  // namespace vouch
