// vouch history add/list/show/trend and --store, driving the real binary on a SQLite store.
// (The store's engines, SQLite and PostgreSQL, are tested in src/store/store_test.cc.)
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
using testing_util::Has;
const auto& Sh = testing_util::Shell;
const std::string kRunDir = VOUCH_SOURCE_DIR "/tests/data/store/run";
const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";

class HistoryCli : public testing_util::ScratchDirTest {
 protected:
  testing_util::ShellResult Vouch(const std::string& args) const {
    return Sh(fmt::format("cd {} && VOUCH_STORE= VOUCH_LOCK_FILE={}/lock {} {}", D(), D(),
                          VOUCH_BINARY, args));
  }
  // A copy of the fixture run as run N of a history on COMMIT with the headline at TOK_S.
  std::string Copy(int n, const std::string& commit, double tok_s, int version = 1) const {
    std::string dir = D(fmt::format("r{:02d}", n));
    fs::create_directories(dir);
    fs::copy(kRunDir, dir, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    std::ifstream in(kRunDir + "/record.json");
    auto r = nlohmann::json::parse(in);
    r["schema_version"] = version;
    r["started_unix_s"] = 1796000000.0 + n * 600;
    r["revisions"] = nlohmann::json::array({{{"path", "/src"},
                                             {"git", true},
                                             {"commit", commit},
                                             {"dirty", false},
                                             {"branch", "main"}}});
    for (auto& s : r["summary"]["run"])
      if (s["name"] == "tok_s") s["median"] = tok_s;
    std::ofstream(dir + "/record.json") << r.dump(1);
    return dir;
  }
};

TEST_F(HistoryCli, AddIsIdempotentAndListShowsTheRun) {
  auto a = Vouch(fmt::format("history add --store h.sqlite {} {}", kRunDir, kRunDir));
  EXPECT_EQ(a.rc, 0) << a.out;
  EXPECT_TRUE(Has(a.out, "h.sqlite: 1 added, 1 unchanged, 0 replaced, 0 refused")) << a.out;
  auto l = Vouch("history list --store h.sqlite");
  EXPECT_EQ(l.rc, 0) << l.out;
  EXPECT_TRUE(Has(l.out, "(1 runs shown)")) << l.out;
  EXPECT_TRUE(Has(l.out, "NVIDIA H200 (simulated)")) << l.out;
  auto j = nlohmann::json::parse(Vouch("history list --store h.sqlite --json").out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["valid_legs"], 2);
  std::string key = j[0]["run_key"].get<std::string>().substr(0, 8);
  auto s = Vouch("history show --store h.sqlite " + key);
  EXPECT_EQ(s.rc, 0) << s.out;
  EXPECT_TRUE(Has(s.out, "run complete started")) << s.out;
  auto bad = Vouch("history show --store h.sqlite 0000000000");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_TRUE(Has(bad.out, "no such run")) << bad.out;
}

// A stop signal (Ctrl-C's SIGINT, SIGTERM; SIGTERM here: a background job of a shell script
// ignores SIGINT) during a long `history add` ends it after the record being committed: every
// record committed is printed and counted (killed outright, the lines buffered for a pipe were
// lost), the rest are named as not added, and the exit is the signal's. (If the machine is so
// fast that the adding ends before the signal, the counts must still agree.)
TEST_F(HistoryCli, AStopSignalEndsItAfterACommittedRecordAndEveryOneCommittedIsPrinted) {
  std::string list;
  for (int n = 0; n < 60; ++n) {
    Copy(n, fmt::format("{:040x}", n), 1000 + n);
    list += fmt::format(" r{:02d}", n);
  }
  std::string all;
  for (int k = 0; k < 30; ++k) all += list;  // 1,800 entries: 60 added, the rest unchanged
  // SIGTERM once three runs are stored (SQLite's WAL lets the poll read while vouch writes).
  Script("add.sh",
         fmt::format("cd {0} || exit 9\n"
                     "VOUCH_STORE= VOUCH_LOCK_FILE={0}/lock {1} history add --store h.sqlite {2} "
                     ">out.txt 2>err.txt &\nvp=$!\n"
                     "for i in $(seq 1 2000); do\n"
                     "  n=$(sqlite3 -readonly h.sqlite 'select count(*) from runs' 2>/dev/null)\n"
                     "  [ \"${{n:-0}}\" -ge 3 ] && break; sleep 0.005\ndone\n"
                     "kill -TERM $vp\nwait $vp\necho rc=$?\n",
                     D(), VOUCH_BINARY, all));
  auto r = Sh(D("add.sh"));
  auto slurp = [&](const char* name) {
    std::ifstream in(D(name));
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string out = slurp("out.txt");
  const std::string err = slurp("err.txt");
  std::size_t lines = 0, added = 0;
  for (std::size_t at = 0; (at = out.find('\n', at)) != std::string::npos; ++at) ++lines;
  for (std::size_t at = 0; (at = out.find("\nadded ", at)) != std::string::npos; ++at) ++added;
  if (out.rfind("added ", 0) == 0) ++added;
  auto stored = Sh(fmt::format("sqlite3 {} 'select count(*) from runs'", D("h.sqlite")));
  ASSERT_EQ(stored.rc, 0) << stored.out;
  EXPECT_EQ(std::to_string(added) + "\n", stored.out) << out << err;
  ASSERT_GE(lines, 1u) << r.out << err;
  const std::size_t records = lines - 1;  // and the summary line
  EXPECT_TRUE(Has(out, fmt::format("h.sqlite: {} added, {} unchanged, 0 replaced, 0 refused", added,
                                   records - added)))
      << out;
  if (Has(r.out, "rc=0")) {
    EXPECT_EQ(records, 1800u) << out;
  } else {
    EXPECT_TRUE(Has(r.out, "rc=143")) << r.out << err;
    EXPECT_TRUE(
        Has(err, fmt::format("interrupted by SIGTERM after {} of 1800 records; the other {} "
                             "were not added",
                             records, 1800 - records)))
        << err;
    EXPECT_LT(records, 1800u);
  }
}

TEST_F(HistoryCli, ANewerRecordIsRefusedByNameAndTheRestStored) {
  std::string newer = Copy(1, "c1", 100, 2), ok = Copy(2, "c2", 100);
  auto a = Vouch(fmt::format("history add --store h.sqlite {} {}", newer, ok));
  EXPECT_EQ(a.rc, 1) << a.out;
  EXPECT_TRUE(Has(a.out, "record schema version 2 is not one this vouch reads")) << a.out;
  EXPECT_TRUE(Has(a.out, newer)) << a.out;
  EXPECT_TRUE(Has(a.out, "1 added, 0 unchanged, 0 replaced, 1 refused")) << a.out;
  // A path that is not there stops the add before anything is written (issue 37).
  auto missing = Vouch(fmt::format("history add --store h2.sqlite {} nowhere", ok));
  EXPECT_EQ(missing.rc, 1) << missing.out;
  EXPECT_TRUE(Has(missing.out, "nowhere: no such file or folder")) << missing.out;
  EXPECT_FALSE(std::filesystem::exists(D("h2.sqlite")));
}

TEST_F(HistoryCli, TwoWritersAtOnceStoreEveryRecordOnce) {
  std::string dirs;
  for (int i = 0; i < 8; ++i) dirs += " " + Copy(i, fmt::format("c{}", i), 100);
  auto r = Sh(fmt::format(
      "cd {0} && ({1} history add --store h.sqlite {2} > a.txt 2>&1 & {1} history add --store "
      "h.sqlite {2} > b.txt 2>&1 & wait) && cat a.txt b.txt",
      D(), VOUCH_BINARY, dirs));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_FALSE(Has(r.out, "refused\n") && !Has(r.out, " 0 refused")) << r.out;
  auto j = nlohmann::json::parse(Vouch("history list --store h.sqlite --json").out);
  EXPECT_EQ(j.size(), 8u);
}

TEST_F(HistoryCli, TrendFindsThePlantedStepBetweenItsCommits) {
  std::string dirs;
  for (int i = 0; i < 16; ++i)
    dirs += " " + Copy(i, fmt::format("commit{:02d}", i),
                       1000 * (i < 9 ? 1 : 0.97) * (1 + 0.0005 * ((i * 5) % 3 - 1)));
  ASSERT_EQ(Vouch("history add --store h.sqlite" + dirs).rc, 0);
  auto t = Vouch("history trend --store h.sqlite tok_s");
  EXPECT_EQ(t.rc, 0) << t.out;
  EXPECT_TRUE(Has(t.out, "per commit, arm run: 16 points")) << t.out;
  EXPECT_TRUE(Has(t.out, "step between commit08 and commit09")) << t.out;
  EXPECT_TRUE(Has(t.out, "worse")) << t.out;
  auto j = nlohmann::json::parse(Vouch("history trend --store h.sqlite tok_s --json").out);
  ASSERT_EQ(j["steps"].size(), 1u);
  EXPECT_EQ(j["steps"][0]["after"], "commit09");
  EXPECT_NEAR(j["steps"][0]["size_pct"].get<double>(), -3, 0.2);
  auto m = Vouch("history trend --store h.sqlite tok_s --markdown");
  EXPECT_TRUE(Has(m.out, "| `commit08` .. `commit09` |")) << m.out;
  auto none = Vouch("history trend --store h.sqlite tok_s --gpu H100");
  EXPECT_TRUE(Has(none.out, "no stored run has this metric")) << none.out;
}

TEST_F(HistoryCli, StoreOnRunAddsTheRecordWhenWritten) {
  Script("leg.sh",
         "sleep 0.5\necho '{\"name\":\"tok_s\",\"value\":5,\"unit\":\"tok/s\","
         "\"better\":\"higher\"}' >> \"$VOUCH_METRICS\"\n");
  auto r = Sh(fmt::format(
      "cd {} && VOUCH_LOCK_FILE={}/lock VOUCH_SIM={} VOUCH_STORE={}/env.sqlite {} run --store "
      "--warmup 0 --reps 1 --min-busy-readings 3 --out r1 -- ./leg.sh",
      D(), D(), kBusy, D(), VOUCH_BINARY));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "vouch run: history store " + D() + "/env.sqlite: run ")) << r.out;
  EXPECT_TRUE(Has(r.out, " added")) << r.out;
  auto j = nlohmann::json::parse(Vouch("history list --store env.sqlite --json").out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["kind"], "run");
  auto bad = Sh(fmt::format(
      "cd {} && VOUCH_LOCK_FILE={}/lock VOUCH_SIM={} {} run --store /proc/nope/x.sqlite "
      "--warmup 0 --reps 1 --min-busy-readings 3 --out r2 -- ./leg.sh",
      D(), D(), kBusy, VOUCH_BINARY));
  EXPECT_EQ(bad.rc, 1) << bad.out;
  EXPECT_TRUE(Has(bad.out, "/proc/nope")) << bad.out;
}

}  // namespace
}  // namespace vouch

namespace vouch {
namespace {

TEST_F(HistoryCli, ReportIsOneSelfContainedPageOrSaysWhyNot) {
  auto r = Vouch(fmt::format("report {} -o r.html", kRunDir));
  if (Has(r.out, "built without the report's chart library")) {
    EXPECT_EQ(r.rc, 1);
    EXPECT_TRUE(Has(r.out, "run scripts/setup.sh")) << r.out;
  } else {
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_TRUE(Has(r.out, "report written to r.html (")) << r.out;
    std::ifstream in(D("r.html"));
    std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(Has(html, "uPlot")) << "the chart library is inlined";
    EXPECT_FALSE(Has(html, "<script src")) << "nothing is fetched";
    EXPECT_FALSE(Has(html, "<link")) << "nothing is fetched";
    EXPECT_TRUE(Has(html, "2 of 2 measured legs valid"));
  }
  EXPECT_EQ(Vouch("report").rc, 64);
  EXPECT_EQ(Vouch(fmt::format("report {} --trend x", kRunDir)).rc, 64);
  // No store at that path: said so (a read creates none), not "no such run".
  auto none = Vouch("report --store h.sqlite --run 00000000");
  EXPECT_EQ(none.rc, 1);
  EXPECT_TRUE(Has(none.out, "history store h.sqlite does not exist")) << none.out;
  EXPECT_FALSE(std::filesystem::exists(D("h.sqlite")));
  auto bad = Vouch("report /nonexistent/dir -o x.html");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_TRUE(Has(bad.out, "/nonexistent/dir")) << bad.out;
}

}  // namespace
}  // namespace vouch
