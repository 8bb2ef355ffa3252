// Records, journals and the history store are cross-checked, never trusted (issue 21, class 5),
// driving the real binary: a leg index twice in legs.jsonl, a journal that disagrees with a
// finished record.json, a stored record document of the wrong shape, a text median in the
// store, a store version past 2^32, and a read that must not wait behind a writer.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "store/sql.h"
#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
using testing_util::Has;
const auto& Sh = testing_util::Shell;
const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
const std::string kRunDir = VOUCH_SOURCE_DIR "/tests/data/store/run";

class ForgeRecordsCli : public testing_util::ScratchDirTest {
 protected:
  testing_util::ShellResult Vouch(const std::string& args) const {
    return Sh(fmt::format("cd {} && VOUCH_STORE= VOUCH_LOCK_FILE={}/lock {} {}", D(), D(),
                          VOUCH_BINARY, args));
  }
  // A finished run of three measured legs in D()/r, its journal beside it.
  void Run() const {
    auto r = Sh(fmt::format(
        "cd {0} && VOUCH_LOCK_FILE={0}/lock VOUCH_SIM={1} {2} run --min-busy-readings 1 "
        "--warmup 0 --reps 3 --out r -- true",
        D(), kBusy, VOUCH_BINARY));
    ASSERT_EQ(Json("r/record.json")["status"], "complete") << r.out;
    ASSERT_EQ(Lines("r/legs.jsonl").size(), 3u) << r.out;
  }
  std::vector<std::string> Lines(const std::string& rel) const {
    std::ifstream in(D(rel));
    std::vector<std::string> out;
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }
  void WriteLines(const std::string& rel, const std::vector<std::string>& lines) const {
    std::ofstream out(D(rel));
    for (const auto& l : lines) out << l << "\n";
  }
  // record.json as PrepareRun writes it at a run's start: running, no legs (a killed run).
  void MakeRunning() const {
    auto rec = Json("r/record.json");
    rec["status"] = "running";
    rec["legs"] = nlohmann::json::array();
    std::ofstream(D("r/record.json")) << rec.dump(2);
  }
  // The fixture run as run N (its own start time, so its own run key).
  std::string Copy(int n) const {
    std::string dir = D(fmt::format("s{:02d}", n));
    fs::create_directories(dir);
    fs::copy(kRunDir, dir, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    std::ifstream in(kRunDir + "/record.json");
    auto r = nlohmann::json::parse(in);
    r["started_unix_s"] = 1796000000.0 + n * 600;
    std::ofstream(dir + "/record.json") << r.dump(1);
    return dir;
  }
  // The run keys in h.sqlite, oldest first.
  std::vector<std::string> Keys() const {
    auto l = Vouch("history list --store h.sqlite --json");
    EXPECT_EQ(l.rc, 0) << l.out;
    std::vector<std::string> out;
    for (const auto& r : nlohmann::json::parse(l.out))
      out.insert(out.begin(), r["run_key"].get<std::string>());
    return out;
  }
  void Sql(const std::string& sql, const std::vector<SqlValue>& params = {}) const {
    auto db = OpenSqliteDb(D("h.sqlite"));
    ASSERT_TRUE(db.ok()) << db.error().message;
    auto r = (*db)->Exec(sql, params);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
};

TEST_F(ForgeRecordsCli, AJournalLineRepeatedIsRefusedNotCountedAsAnotherLeg) {
  Run();
  auto lines = Lines("r/legs.jsonl");
  // A finished run: the journal holds line 2 twice.
  WriteLines("r/legs.jsonl", {lines[0], lines[1], lines[2], lines[1]});
  auto done = Vouch("show r");
  EXPECT_EQ(done.rc, 1) << done.out;
  EXPECT_TRUE(Has(done.out, std::string("r/legs.jsonl") +
                                ": line 4 repeats line 2 (leg index 1) word for "
                                "word"))
      << done.out;
  // A killed run (record.json still "running"): the legs come from the journal, each once.
  MakeRunning();
  auto killed = Vouch("show r");
  EXPECT_EQ(killed.rc, 1) << killed.out;
  EXPECT_TRUE(
      Has(killed.out, std::string("r/legs.jsonl") + ": line 4 repeats line 2 (leg index 1)"))
      << killed.out;
  EXPECT_FALSE(Has(killed.out, "  4 run")) << killed.out;  // no fourth leg
  // Without the repeat the killed run is read back, three legs.
  WriteLines("r/legs.jsonl", lines);
  auto ok = Vouch("show r");
  EXPECT_EQ(ok.rc, 0) << ok.out;
  EXPECT_TRUE(Has(ok.out, "its 3 finished legs are read from the journal")) << ok.out;
}

TEST_F(ForgeRecordsCli, TwoDifferentJournalLinesForOneLegIndexAreRefused) {
  Run();
  MakeRunning();
  auto lines = Lines("r/legs.jsonl");
  auto forged = nlohmann::json::parse(lines[1]);
  forged["result"]["wall_ns"] = 1;
  WriteLines("r/legs.jsonl", {lines[0], lines[1], lines[2], forged.dump()});
  auto r = Vouch("show r");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, std::string("r/legs.jsonl") +
                             ": lines 2 and 4 both hold leg index 1, with "
                             "different contents"))
      << r.out;
}

TEST_F(ForgeRecordsCli, AJournalThatDisagreesWithTheFinishedRecordIsRefused) {
  Run();
  const auto lines = Lines("r/legs.jsonl");
  // A value edited in the journal (or in record.json: the same disagreement).
  auto edited = nlohmann::json::parse(lines[1]);
  edited["result"]["wall_ns"] = edited["result"]["wall_ns"].get<std::int64_t>() + 1;
  WriteLines("r/legs.jsonl", {lines[0], edited.dump(), lines[2]});
  auto r = Vouch("show r");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, std::string("r/legs.jsonl") +
                             ": line 2 (leg index 1) differs from that leg in " +
                             std::string("r/record.json") + " at '/result/wall_ns'"))
      << r.out;
  // A leg in record.json that the journal never had (a leg added by hand).
  WriteLines("r/legs.jsonl", {lines[0], lines[1]});
  auto added = Vouch("show r");
  EXPECT_EQ(added.rc, 1) << added.out;
  EXPECT_TRUE(Has(added.out, std::string("r/record.json") + ": leg index 2 is not in " +
                                 std::string("r/legs.jsonl") + " (2 lines)"))
      << added.out;
  // As written, the two agree.
  WriteLines("r/legs.jsonl", lines);
  EXPECT_EQ(Vouch("show r").rc, 0);
}

TEST_F(ForgeRecordsCli, AStoredRecordOfTheWrongShapeIsRefusedNamingTheRow) {
  auto a = Vouch(fmt::format("history add --store h.sqlite {}", kRunDir));
  ASSERT_EQ(a.rc, 0) << a.out;
  const std::string key = Keys().at(0);
  std::ifstream in(kRunDir + "/record.json");
  auto no_window = nlohmann::json::parse(in);
  no_window["legs"][0].erase("window");
  for (const std::string& doc :
       {std::string(R"({"schema":"vouch.record","schema_version":1,"legs":"x"})"),
        std::string("[]"), no_window.dump()}) {
    Sql("UPDATE runs SET record_json = ? WHERE run_key = ?", {doc, key});
    const std::string row = "history store h.sqlite: runs row " + key + " (record_json)";
    auto show = Vouch("history show --store h.sqlite " + key.substr(0, 10));
    EXPECT_EQ(show.rc, 1) << doc.substr(0, 60) << "\n" << show.out;
    EXPECT_TRUE(Has(show.out, row)) << show.out;
    EXPECT_TRUE(Has(show.out, "nothing is read from it")) << show.out;
    EXPECT_FALSE(Has(show.out, "internal error")) << show.out;
    auto report = Vouch("report --store h.sqlite --run " + key.substr(0, 10) + " -o x.html");
    EXPECT_EQ(report.rc, 1) << report.out;
    EXPECT_TRUE(Has(report.out, row)) << report.out;
  }
  EXPECT_FALSE(fs::exists(D("x.html")));
}

TEST_F(ForgeRecordsCli, ATextMedianInTheStoreIsRefusedNotTrendedAsZero) {
  auto a = Vouch(fmt::format("history add --store h.sqlite {} {} {}", Copy(1), Copy(2), Copy(3)));
  ASSERT_EQ(a.rc, 0) << a.out;
  auto keys = Keys();
  ASSERT_EQ(keys.size(), 3u);
  auto before = Vouch("history trend --store h.sqlite tok_s --json");
  ASSERT_EQ(before.rc, 0) << before.out;
  Sql("UPDATE summaries SET median = 'fast' WHERE name = 'tok_s' AND arm = 'run' AND run_key = ?",
      {keys[1]});
  auto t = Vouch("history trend --store h.sqlite tok_s");
  EXPECT_EQ(t.rc, 1) << t.out;
  EXPECT_TRUE(Has(t.out, "history store h.sqlite: summaries row (run " + keys[1] +
                             ", arm run, metric tok_s): median is text ('fast'), not a finite "
                             "number"))
      << t.out;
}

TEST_F(ForgeRecordsCli, AStoreVersionPast2To32IsRefusedNotReadAsItsLowBits) {
  auto a = Vouch(fmt::format("history add --store h.sqlite {}", kRunDir));
  ASSERT_EQ(a.rc, 0) << a.out;
  // 2^32 + 2: an int cast of it is 2, this vouch's own version.
  Sql("INSERT INTO schema_version (version, description, applied_unix_s) VALUES (?, 'forged', 0)",
      {std::int64_t{4294967298}});
  for (const std::string& cmd : {std::string("history list --store h.sqlite"),
                                 fmt::format("history add --store h.sqlite {}", kRunDir)}) {
    auto r = Vouch(cmd);
    EXPECT_EQ(r.rc, 1) << cmd << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, "history store h.sqlite is at schema version 4294967298")) << r.out;
  }
  // Text is not a version either.
  Sql("UPDATE schema_version SET version = '2x' WHERE description = 'forged'");
  auto text = Vouch("history list --store h.sqlite");
  EXPECT_EQ(text.rc, 1) << text.out;
  EXPECT_TRUE(Has(text.out, "schema_version.version is text ('2x'), not an integer")) << text.out;
}

TEST_F(ForgeRecordsCli, AReadDoesNotWaitBehindAWriter) {
  auto a = Vouch(fmt::format("history add --store h.sqlite {}", kRunDir));
  ASSERT_EQ(a.rc, 0) << a.out;
  const std::string key = Keys().at(0);
  // A writer holds the store's write lock (BEGIN IMMEDIATE, as an ingest takes it) throughout.
  auto writer = OpenSqliteDb(D("h.sqlite"));
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  ASSERT_TRUE((*writer)->Begin().ok());
  ASSERT_TRUE((*writer)->Exec("DELETE FROM gates WHERE run_key = 'none'").ok());
  for (const std::string& cmd :
       {std::string("history list --store h.sqlite"), "history show --store h.sqlite " + key,
        std::string("history trend --store h.sqlite tok_s --no-steps")}) {
    auto start = std::chrono::steady_clock::now();
    // `timeout` is a hang guard only (the busy timeout is 30 s), not a timing assertion.
    auto r = Sh(fmt::format("cd {} && VOUCH_STORE= timeout 25 {} {}", D(), VOUCH_BINARY, cmd));
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.rc, 0) << cmd << "\n" << r.out;
    EXPECT_LT(s, 10.0) << cmd;
  }
  (*writer)->Rollback();
}

}  // namespace
}  // namespace vouch
