// A history store that fights back (issue 36, class 2), through the real binary: a read
// changes nothing (a store in rollback-journal mode stayed so; an empty file stays empty), a
// store whose tables compute what a read returns (a GENERATED column) is refused like a view,
// every statement runs under the statement budget, a stored document of the wrong types or
// nested too deep is an error naming its row (not "internal error", not SIGSEGV), and values
// near DBL_MAX still give the step. Each failed on 3cc89e2.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
using testing_util::Has;
const std::string kRunDir = VOUCH_SOURCE_DIR "/tests/data/store/run";

class ForgeStoreCli : public testing_util::ScratchDirTest {
 protected:
  testing_util::ShellResult Vouch(const std::string& args, const std::string& env = "") const {
    return testing_util::Shell(fmt::format("cd {} && VOUCH_STORE= {} timeout 120 {} {} 2>&1", D(),
                                           env, VOUCH_BINARY, args));
  }
  // sqlite3's answer to SQL on h.sqlite.
  std::string Sql(const std::string& sql) const {
    return testing_util::Shell(fmt::format("sqlite3 {} \"{}\" 2>&1", D("h.sqlite"), sql)).out;
  }
  std::string Bytes(const std::string& rel) const {
    std::ifstream in(D(rel), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // The fixture run stored in h.sqlite; its run key.
  std::string Stored() const {
    auto a = Vouch(fmt::format("history add --store h.sqlite {}", kRunDir));
    EXPECT_EQ(a.rc, 0) << a.out;
    auto j = nlohmann::json::parse(Vouch("history list --store h.sqlite --json").out);
    return j.at(0).at("run_key").get<std::string>();
  }
  // Run N of a history whose tok_s median is VALUE.
  std::string Copy(int n, double value) const {
    std::string dir = D(fmt::format("r{:02d}", n));
    fs::create_directories(dir);
    fs::copy(kRunDir, dir, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    std::ifstream in(kRunDir + "/record.json");
    auto r = nlohmann::json::parse(in);
    r["started_unix_s"] = 1796000000.0 + n * 600;
    for (auto& s : r["summary"]["run"])
      if (s["name"] == "tok_s") s["median"] = value;
    std::ofstream(dir + "/record.json") << r.dump(1);
    return dir;
  }
};

TEST_F(ForgeStoreCli, AReadChangesNothing) {
  const std::string key = Stored();
  // A store in rollback-journal mode (another tool's, or an older vouch's).
  ASSERT_EQ(Sql("PRAGMA journal_mode=DELETE;"), "delete\n");
  const std::string before = Bytes("h.sqlite");
  ASSERT_EQ(before[18], 1);  // the header's write version: 1 rollback journal, 2 WAL
  for (const std::string& read : {std::string("history list --store h.sqlite"),
                                  "history show --store h.sqlite " + key.substr(0, 8),
                                  std::string("history trend --store h.sqlite tok_s")}) {
    auto r = Vouch(read);
    EXPECT_EQ(r.rc, 0) << read << ": " << r.out;
  }
  EXPECT_TRUE(Bytes("h.sqlite") == before) << "a read changed the store";
  EXPECT_EQ(Sql("PRAGMA journal_mode;"), "delete\n");
  EXPECT_FALSE(fs::exists(D("h.sqlite-wal")));
  // An empty file: a read says so and leaves it empty (no SQLite header written into it).
  std::ofstream(D("empty.sqlite")).flush();
  auto e = Vouch("history list --store empty.sqlite");
  EXPECT_EQ(e.rc, 0) << e.out;
  EXPECT_TRUE(Has(e.out, "history store empty.sqlite is empty: nothing was added to it yet"))
      << e.out;
  EXPECT_EQ(fs::file_size(D("empty.sqlite")), 0u);
  EXPECT_FALSE(fs::exists(D("empty.sqlite-wal")));
}

TEST_F(ForgeStoreCli, GeneratedColumnsAreRefusedLikeViews) {
  Stored();
  ASSERT_EQ(Sql("ALTER TABLE runs ADD COLUMN slow INTEGER GENERATED ALWAYS AS "
                "(length(hex(zeroblob(1000)))) VIRTUAL;"),
            "");
  for (const std::string& cmd : {std::string("history list --store h.sqlite"),
                                 std::string("history trend --store h.sqlite tok_s"),
                                 fmt::format("history add --store h.sqlite {}", kRunDir)}) {
    auto r = Vouch(cmd);
    EXPECT_EQ(r.rc, 1) << cmd << ": " << r.out;
    EXPECT_TRUE(Has(r.out,
                    "history store h.sqlite: it holds a generated column named 'slow' of "
                    "table 'runs'"))
        << cmd << ": " << r.out;
  }
}

TEST_F(ForgeStoreCli, EveryStatementRunsUnderTheBudget) {
  // 24 runs: listing them takes SQLite more than a progress period (1,000 instructions).
  std::string dirs;
  for (int i = 0; i < 24; ++i) dirs += " " + Copy(i, 1000);
  ASSERT_EQ(Vouch("history add --store h.sqlite" + dirs).rc, 0);
  EXPECT_EQ(Vouch("history list --store h.sqlite").rc, 0);
  auto r = Vouch("history list --store h.sqlite", "VOUCH_STORE_STATEMENT_BUDGET_S=0.000001");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "a statement ran past the store's statement budget of 1e-06 s and was "
                  "stopped"))
      << r.out;
  EXPECT_FALSE(Has(r.out, "internal error")) << r.out;
}

TEST_F(ForgeStoreCli, StoredDocumentsOfTheWrongShapeAreNamedByRow) {
  const std::string key = Stored();
  const std::string show = "history show --store h.sqlite " + key.substr(0, 8);
  ASSERT_EQ(Vouch(show).rc, 0);
  // A gate whose verdict is a number: "internal error" on 3cc89e2.
  Sql(
      fmt::format("INSERT INTO gates (gate_key, run_key, overall, clock_attributed, "
                  "baseline_path, gate_json, ingested_unix_s) VALUES ('g1', '{}', 'fail', 1, "
                  "'b.json', '{{\\\"schema\\\":\\\"vouch.gate\\\",\\\"overall\\\":5}}', 1);",
                  key));
  auto r = Vouch(show);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(
      Has(r.out, fmt::format("history store h.sqlite: a gates row of run {} (gate_json)", key)))
      << r.out;
  EXPECT_TRUE(Has(r.out, "'overall' must be a string")) << r.out;
  EXPECT_FALSE(Has(r.out, "internal error")) << r.out;
  Sql("DELETE FROM gates;");
  // A leg's series of the wrong types.
  Sql("UPDATE windows SET series_json = '{\\\"t0_unix_s\\\":\\\"x\\\",\\\"t_s\\\":[1],"
      "\\\"sm_mhz\\\":[1],\\\"power_w\\\":[1]}';");
  r = Vouch(show);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, fmt::format("history store h.sqlite: windows row (run {}, leg ", key)))
      << r.out;
  EXPECT_TRUE(Has(r.out, "'t0_unix_s' must be a finite number")) << r.out;
  // A series nested 100,000 deep: `report --run` died of SIGSEGV on 3cc89e2.
  std::ofstream(D("deep.sql")) << "UPDATE windows SET series_json = '{\"t0_unix_s\":1,\"t_s\":"
                               << std::string(100000, '[') << std::string(100000, ']')
                               << ",\"sm_mhz\":[],\"power_w\":[]}';\n";
  ASSERT_EQ(
      testing_util::Shell(fmt::format("sqlite3 {} < {} 2>&1", D("h.sqlite"), D("deep.sql"))).out,
      "");
  for (const std::string& cmd :
       {show, "report --store h.sqlite --run " + key.substr(0, 8) + " -o r.html"}) {
    r = Vouch(cmd);
    EXPECT_EQ(r.rc, 1) << cmd << ": " << r.out;
    EXPECT_TRUE(Has(r.out, "(series_json): nested deeper than 8 levels")) << cmd << ": " << r.out;
  }
}

TEST_F(ForgeStoreCli, ValuesNearDblMaxStillGiveTheStep) {
  // The same history twice: tok_s at 1000 then 970, and at 1.7e308 then 0.97 x 1.7e308.
  for (double scale : {1000.0, 1.7e308}) {
    std::string dirs;
    for (int i = 0; i < 16; ++i)
      dirs += " " + Copy(i, scale * (i < 9 ? 1 : 0.97) * (1 + 0.0005 * ((i * 5) % 3 - 1)));
    fs::remove(D("h.sqlite"));
    ASSERT_EQ(Vouch("history add --store h.sqlite" + dirs).rc, 0);
    auto t = Vouch("history trend --store h.sqlite tok_s --by run --json");
    auto j = nlohmann::json::parse(t.out.substr(t.out.find('{')));
    ASSERT_EQ(j["steps"].size(), 1u) << scale << ": " << t.out;
    EXPECT_EQ(j["steps"][0]["index"], 9) << scale << ": " << j["steps"].dump();
    EXPECT_NEAR(j["steps"][0]["size_pct"].get<double>(), -3, 0.2) << scale;
  }
}

}  // namespace
}  // namespace vouch
