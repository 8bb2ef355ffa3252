// The history store on both engines: every test runs on SQLite and on PostgreSQL (the server
// scripts/services.sh starts in CI; VOUCH_TEST_PG is its URL). A PostgreSQL test without a
// server fails when VOUCH_REQUIRE_PG is set (CI sets it) and is skipped otherwise.
#include "store/store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

#include "record/record.h"
#include "store/store_doc.h"

namespace vouch {
namespace {

const std::string kRunDir = VOUCH_SOURCE_DIR "/tests/data/store/run";

nlohmann::json Fixture() {
  auto r = ReadRecordJson(kRunDir);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : nlohmann::json();
}

// The fixture as run N of a history: its own start time, commit and headline median.
nlohmann::json RunOf(int n, const std::string& commit, double tok_s,
                     const std::string& branch = "main") {
  auto r = Fixture();
  r["started_unix_s"] = 1796000000.0 + n * 600;
  r["revisions"] = nlohmann::json::array({{{"path", "/src"},
                                           {"git", true},
                                           {"commit", commit},
                                           {"dirty", false},
                                           {"branch", branch}}});
  for (auto& s : r["summary"]["run"])
    if (s["name"] == "tok_s") s["median"] = tok_s;
  return r;
}

class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    std::string tag = fmt::format("{}_{}", ::getpid(), counter++);
    if (GetParam() == "sqlite") {
      dir_ = std::filesystem::temp_directory_path() / ("vouch_store_" + tag);
      std::filesystem::remove_all(dir_);
      url_ = (dir_ / "sub" / "history.sqlite").string();
      return;
    }
    const char* base = std::getenv("VOUCH_TEST_PG");
    if (!base || !*base) {
      if (std::getenv("VOUCH_REQUIRE_PG"))
        FAIL() << "VOUCH_REQUIRE_PG is set but VOUCH_TEST_PG is not: no PostgreSQL server to "
                  "test against (scripts/services.sh starts one)";
      GTEST_SKIP() << "no PostgreSQL server (set VOUCH_TEST_PG; scripts/test.sh does)";
    }
    auto admin = OpenPostgresDb(base);
    ASSERT_TRUE(admin.ok()) << admin.error().message;
    admin_ = std::move(*admin);
    schema_ = "vouch_test_" + tag;
    ASSERT_TRUE(admin_->Exec("CREATE SCHEMA " + schema_).ok());
    std::string b = base;
    url_ =
        b + (b.find('?') == std::string::npos ? "?" : "&") + "options=-csearch_path%3D" + schema_;
  }
  void TearDown() override {
    if (admin_) (void)admin_->Exec("DROP SCHEMA " + schema_ + " CASCADE");
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::unique_ptr<Store> Open() {
    auto s = Store::Open(url_);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::int64_t Count(Store& s, const std::string& table) {
    auto r = s.db().Query("SELECT COUNT(*) FROM " + table);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? AsInt(r->rows[0][0]) : -1;
  }

  std::string url_, schema_;
  std::filesystem::path dir_;
  std::unique_ptr<SqlDb> admin_;
};

TEST_P(StoreTest, MigratesAFreshStoreToTheLatestVersion) {
  auto s = Open();
  ASSERT_TRUE(s);
  auto v = s->SchemaVersion();
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, StoreSchemaVersion());
  EXPECT_EQ(Count(*s, "schema_version"), StoreSchemaVersion());
  // Opening again changes nothing.
  auto again = Open();
  ASSERT_TRUE(again);
  EXPECT_EQ(Count(*again, "schema_version"), StoreSchemaVersion());
}

TEST_P(StoreTest, UpgradesAnOlderStoreInOrder) {
  {
    auto db = GetParam() == "sqlite" ? OpenSqliteDb(url_) : OpenPostgresDb(url_);
    ASSERT_TRUE(db.ok()) << db.error().message;
    auto old = Store::OpenDb(std::move(*db), 1);
    ASSERT_TRUE(old.ok()) << old.error().message;
    EXPECT_EQ(*(*old)->SchemaVersion(), 1);
    ASSERT_TRUE((*old)->AddRecord(RunOf(1, "aaa", 100), "v1").ok());
  }
  auto s = Open();
  ASSERT_TRUE(s);
  EXPECT_EQ(*s->SchemaVersion(), StoreSchemaVersion());
  auto runs = s->ListRuns({});
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size(), 1u);
}

TEST_P(StoreTest, RefusesAStoreOfANewerSchema) {
  {
    auto s = Open();
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->db()
                    .Exec("INSERT INTO schema_version (version, description, applied_unix_s) "
                          "VALUES (99, 'from the future', 0)")
                    .ok());
  }
  auto s = Store::Open(url_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("is at schema version 99, newer than this vouch knows"),
            std::string::npos)
      << s.error().message;
}

TEST_P(StoreTest, IngestsARecordOnceWithItsLegsWindowsAndSeries) {
  auto s = Open();
  ASSERT_TRUE(s);
  auto a = s->AddRecordDir(kRunDir);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->result, IngestResult::kAdded);
  auto b = s->AddRecordDir(kRunDir);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->result, IngestResult::kUnchanged);
  EXPECT_EQ(b->run_key, a->run_key);
  EXPECT_EQ(Count(*s, "runs"), 1);
  EXPECT_EQ(Count(*s, "legs"), 3);
  EXPECT_EQ(Count(*s, "windows"), 3);
  EXPECT_EQ(Count(*s, "summaries"), 5);  // tok_s and the four built-in metrics
  EXPECT_GE(Count(*s, "metrics"), 3 * 3);

  auto runs = s->ListRuns({});
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  const RunRow& r = (*runs)[0];
  EXPECT_EQ(r.kind, "run");
  EXPECT_EQ(r.status, "complete");
  EXPECT_EQ(r.gpu_name, "NVIDIA H200 (simulated)");
  EXPECT_EQ(r.gpu_uuid, "GPU-SIMULATED-0");
  EXPECT_EQ(r.host, "vm");
  EXPECT_EQ(r.boot_id, "simulated-boot-0");
  EXPECT_TRUE(r.simulated);
  EXPECT_EQ(r.valid_legs, 2);
  ASSERT_TRUE(r.clock_sm_median_mhz);
  EXPECT_DOUBLE_EQ(*r.clock_sm_median_mhz, 1980);

  auto doc = s->RunDocument(a->run_key);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  const auto& series = (*doc)["legs"][1]["series"];
  ASSERT_EQ(series.size(), 1u);
  EXPECT_GT(series[0]["t_s"].size(), 3u);
  EXPECT_EQ(series[0]["t_s"].size(), series[0]["sm_mhz"].size());
  EXPECT_EQ(series[0]["sm_mhz"][0], 1980);
  EXPECT_GT(series[0]["power_w"][0].get<double>(), 100);
  EXPECT_EQ((*doc)["stored"]["run_key"], a->run_key);
}

TEST_P(StoreTest, ARewrittenRecordReplacesItsEarlierVersion) {
  auto s = Open();
  ASSERT_TRUE(s);
  auto rec = RunOf(1, "abc", 100);
  auto first = s->AddRecord(rec, "x");
  ASSERT_TRUE(first.ok());
  rec["status"] = "interrupted";
  rec["legs"].erase(rec["legs"].size() - 1);
  auto second = s->AddRecord(rec, "x");
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->result, IngestResult::kReplaced);
  EXPECT_EQ(Count(*s, "runs"), 1);
  EXPECT_EQ(Count(*s, "legs"), 2);
  EXPECT_EQ(Count(*s, "windows"), 2);
  auto runs = s->ListRuns({});
  EXPECT_EQ((*runs)[0].status, "interrupted");
}

TEST_P(StoreTest, RefusesARecordOfANewerSchemaByName) {
  auto s = Open();
  ASSERT_TRUE(s);
  auto rec = Fixture();
  rec["schema_version"] = kRecordSchemaVersion + 1;
  auto r = s->AddRecord(rec, "new/record.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("new/record.json: record schema 'vouch.record' version 2"),
            std::string::npos)
      << r.error().message;
  rec = Fixture();
  rec["legs"][0]["metrics"][0]["unit"] = 5;  // hand-edited: wrong type deep inside
  auto t = s->AddRecord(rec, "edited");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("edited: 'legs[0].metrics[0].unit' must be a string (got 5)"),
            std::string::npos)
      << t.error().message;
  EXPECT_EQ(Count(*s, "runs"), 0);
}

TEST_P(StoreTest, ARecordThatFailsHalfwayLeavesNothingBehind) {
  auto s = Open();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->AddRecord(RunOf(1, "c1", 100), "one").ok());
  auto bad = RunOf(2, "c2", 100);
  // One GPU twice in a leg's window: the windows insert fails after the run's and the legs'.
  // (Two legs with one index no longer get that far: the record's shape check refuses them.)
  auto& gpus = bad["legs"][2]["window"]["gpus"];
  gpus.push_back(gpus[0]);
  auto r = s->AddRecord(bad, "two");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("two: not stored (the store is as it was before it)"),
            std::string::npos)
      << r.error().message;
  ASSERT_TRUE(s->AddRecord(RunOf(3, "c3", 100), "three").ok());
  EXPECT_EQ(Count(*s, "runs"), 2);
  EXPECT_EQ(Count(*s, "legs"), 6);
  EXPECT_EQ(Count(*s, "metrics") % 2, 0);
}

TEST_P(StoreTest, TwoWritersAtOnceStoreEachRecordOnce) {
  {
    auto s = Open();  // created and migrated; the writers below race on the records
    ASSERT_TRUE(s);
  }
  std::vector<nlohmann::json> recs;
  for (int i = 0; i < 12; ++i) recs.push_back(RunOf(i, fmt::format("c{}", i), 100 + i));
  std::atomic<int> errors{0}, added{0};
  auto writer = [&](bool reverse) {
    auto s = Store::Open(url_);
    if (!s.ok()) {
      ++errors;
      return;
    }
    for (size_t k = 0; k < recs.size(); ++k) {
      auto r = (*s)->AddRecord(recs[reverse ? recs.size() - 1 - k : k], "w");
      if (!r.ok())
        ++errors;
      else if (r->result == IngestResult::kAdded)
        ++added;
    }
  };
  std::thread a(writer, false), b(writer, true);
  a.join();
  b.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(added.load(), 12);
  auto s = Open();
  EXPECT_EQ(Count(*s, "runs"), 12);
  EXPECT_EQ(Count(*s, "legs"), 36);
}

TEST_P(StoreTest, TrendIsOnePointPerRunInTimeOrderWithFilters) {
  auto s = Open();
  ASSERT_TRUE(s);
  for (int i = 0; i < 6; ++i)
    ASSERT_TRUE(
        s->AddRecord(RunOf(i, fmt::format("c{}", i), 100 + i, i < 3 ? "main" : "dev"), "t").ok());
  auto other = RunOf(7, "c7", 500);
  other["environment"]["gpus"][0]["name"] = "NVIDIA H100";
  other["environment"]["gpus"][0]["uuid"] = "GPU-OTHER";
  ASSERT_TRUE(s->AddRecord(other, "t").ok());
  TrendQuery q;
  q.metric = "tok_s";
  auto all = s->Trend(q);
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_EQ(all->size(), 7u);
  EXPECT_EQ((*all)[0].commit, "c0");
  EXPECT_DOUBLE_EQ((*all)[5].value, 105);
  EXPECT_EQ((*all)[5].branch, "dev");
  EXPECT_EQ((*all)[0].unit, "tok/s");
  EXPECT_EQ((*all)[0].better, "higher");
  EXPECT_TRUE((*all)[0].attributed);
  q.branch = "dev";
  EXPECT_EQ(s->Trend(q)->size(), 3u);
  q.branch.clear();
  q.gpu = "GPU-OTH";
  auto h100 = s->Trend(q);
  ASSERT_EQ(h100->size(), 1u);
  EXPECT_DOUBLE_EQ((*h100)[0].value, 500);
  q.gpu = "NVIDIA H200 (simulated)";
  EXPECT_EQ(s->Trend(q)->size(), 6u);
  q.metric = "no_such_metric";
  EXPECT_TRUE(s->Trend(q)->empty());
}

TEST_P(StoreTest, UnattributedPointsOnlyWhenAsked) {
  auto s = Open();
  ASSERT_TRUE(s);
  auto rec = RunOf(1, "c1", 100);
  for (auto& l : rec["legs"]) l["valid"] = false;
  rec["summary"]["run"] = nlohmann::json::array();
  rec["valid_legs"] = 0;
  ASSERT_TRUE(s->AddRecord(rec, "u").ok());
  TrendQuery q;
  q.metric = "tok_s";
  EXPECT_TRUE(s->Trend(q)->empty());
  q.include_unattributed = true;
  auto t = s->Trend(q);
  ASSERT_EQ(t->size(), 1u);
  EXPECT_FALSE((*t)[0].attributed);
  EXPECT_DOUBLE_EQ((*t)[0].value, 1234.5);
  EXPECT_EQ((*t)[0].n, 2);
}

TEST_P(StoreTest, KeepsAbVerdictsGatesAndBaselines) {
  auto s = Open();
  ASSERT_TRUE(s);
  auto rec = RunOf(1, "c1", 100);
  rec["kind"] = "ab";
  rec["extra"]["verdict"] = {
      {"verdict", "B faster"},
      {"headline", "tok_s"},
      {"pairs_used", 8},
      {"pairs_refused", 0},
      {"decision", {{"band_pct", 1.0}, {"ratio", {{"mean", 1.03}, {"lo", 1.02}, {"hi", 1.04}}}}}};
  auto a = s->AddRecord(rec, "ab");
  ASSERT_TRUE(a.ok()) << a.error().message;
  nlohmann::json gate = {{"schema", "vouch.gate"}, {"overall", "fail"}, {"clock_attributed", true}};
  ASSERT_TRUE(s->AddGate(a->run_key, gate, "baseline.json").ok());
  ASSERT_TRUE(s->AddGate(a->run_key, gate, "baseline.json").ok());  // idempotent
  EXPECT_EQ(Count(*s, "gates"), 1);
  EXPECT_EQ(Count(*s, "ab_verdicts"), 1);
  auto b = RunOf(2, "c2", 100);
  b["kind"] = "baseline";
  b["extra"]["baseline"] = {{"schema", "vouch.baseline"}, {"headline", "tok_s"}};
  b["extra"]["baseline_path"] = "baseline.json";
  ASSERT_TRUE(s->AddRecord(b, "b").ok());
  EXPECT_EQ(Count(*s, "baselines"), 1);
  auto runs = s->ListRuns({});
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[1].verdict, "B faster");
  RunFilter f;
  f.kind = "baseline";
  EXPECT_EQ(s->ListRuns(f)->size(), 1u);
  auto doc = s->RunDocument(a->run_key);
  ASSERT_EQ((*doc)["stored"]["gates"].size(), 1u);
  EXPECT_EQ((*doc)["stored"]["gates"][0]["gate"]["overall"], "fail");
  auto key = s->ResolveRunKey(a->run_key.substr(0, 8));
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(*key, a->run_key);
  EXPECT_FALSE(s->ResolveRunKey("abc").ok());
  EXPECT_NE(s->ResolveRunKey("ffffffffff").error().message.find("no such run"), std::string::npos);
}

TEST_P(StoreTest, AVersionPast2To32OrTextIsRefusedNotTruncated) {
  auto s = Open();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->db()
                  .Exec("INSERT INTO schema_version (version, description, applied_unix_s) "
                        "VALUES (4294967298, 'forged', 0)")
                  .ok());
  auto v = s->SchemaVersion();
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("is at schema version 4294967298, which no vouch writes"),
            std::string::npos)
      << v.error().message;
  for (auto access : {StoreAccess::kRead, StoreAccess::kWrite})
    EXPECT_FALSE(Store::Open(url_, access).ok());
}

// A read of a store that does not exist is refused by name and creates nothing: a mistyped
// --store is not a new empty store.
TEST_P(StoreTest, AReadOfAMissingStoreIsRefusedAndCreatesNothing) {
  if (GetParam() != "sqlite") GTEST_SKIP() << "a path: SQLite only";
  const std::string missing = (dir_ / "no/such/folder/h.sqlite").string();
  auto r = Store::Open(missing, StoreAccess::kRead);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("history store " + missing + " does not exist"),
            std::string::npos)
      << r.error().message;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "no"));
  EXPECT_TRUE(Store::Open(missing, StoreAccess::kWrite).ok());  // a write creates it
  EXPECT_TRUE(Store::Open(missing, StoreAccess::kRead).ok());
}

TEST_P(StoreTest, AReadNeverMigrates) {
  // Nothing written yet: a read sees no run and creates no table. (SQLite: the file exists,
  // empty; a read of a path with no file is refused, below.)
  if (GetParam() == "sqlite") {
    std::filesystem::create_directories(std::filesystem::path(url_).parent_path());
    std::ofstream(url_).close();
  }
  auto r = Store::Open(url_, StoreAccess::kRead);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE((*r)->ListRuns({})->empty());
  TrendQuery q;
  q.metric = "tok_s";
  EXPECT_TRUE((*r)->Trend(q)->empty());
  EXPECT_NE((*r)->ResolveRunKey("abcdef").error().message.find("no such run"), std::string::npos);
  EXPECT_FALSE((*r)->SchemaVersion().ok());  // no schema_version table: nothing was created
  {
    auto db = GetParam() == "sqlite" ? OpenSqliteDb(url_) : OpenPostgresDb(url_);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(Store::OpenDb(std::move(*db), 1).ok());
  }
  // An older schema: a read refuses it by name, a write upgrades it.
  auto old = Store::Open(url_, StoreAccess::kRead);
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.error().message.find("is at schema version 1, older than this vouch's"),
            std::string::npos)
      << old.error().message;
  ASSERT_TRUE(Open());
  auto now = Store::Open(url_, StoreAccess::kRead);
  ASSERT_TRUE(now.ok()) << now.error().message;
  EXPECT_EQ(*(*now)->SchemaVersion(), StoreSchemaVersion());
}

TEST_P(StoreTest, AStoredDocumentIsCheckedAsARecordIs) {
  auto s = Open();
  ASSERT_TRUE(s);
  auto a = s->AddRecord(RunOf(1, "c1", 100), "one");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(s->RunDocument(a->run_key).ok());
  auto legs = RunOf(1, "c1", 100);
  legs["legs"][0]["metrics"] = "none";
  for (const std::string& doc : {std::string("[1]"), legs.dump(), RunOf(2, "c2", 100).dump()}) {
    ASSERT_TRUE(
        s->db().Exec("UPDATE runs SET record_json = ? WHERE run_key = ?", {doc, a->run_key}).ok());
    auto d = s->RunDocument(a->run_key);
    ASSERT_FALSE(d.ok()) << doc.substr(0, 40);
    EXPECT_NE(d.error().message.find("runs row " + a->run_key + " (record_json)"),
              std::string::npos)
        << d.error().message;
  }
}

TEST_P(StoreTest, ATextMedianIsAnErrorNamingTheRow) {
  if (GetParam() != "sqlite") GTEST_SKIP() << "a PostgreSQL column of numbers holds no text";
  auto s = Open();
  ASSERT_TRUE(s);
  auto a = s->AddRecord(RunOf(1, "c1", 100), "one");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(s->db()
                  .Exec("UPDATE summaries SET median = 'fast' WHERE name = 'tok_s' AND run_key = ?",
                        {a->run_key})
                  .ok());
  TrendQuery q;
  q.metric = "tok_s";
  auto t = s->Trend(q);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("summaries row (run " + a->run_key +
                                   ", arm run, metric tok_s): median is text ('fast')"),
            std::string::npos)
      << t.error().message;
}

INSTANTIATE_TEST_SUITE_P(Engines, StoreTest, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& p) { return p.param; });

TEST(StoreLocation, FlagThenEnvironmentThenDataDirectory) {
  EXPECT_EQ(ResolveStore("x.sqlite")->url, "x.sqlite");
  EXPECT_EQ(ResolveStore("x.sqlite")->origin, "--store");
  ::setenv("VOUCH_STORE", "postgresql://h/db", 1);
  EXPECT_EQ(ResolveStore("")->url, "postgresql://h/db");
  ::unsetenv("VOUCH_STORE");
  ::setenv("XDG_DATA_HOME", "/data", 1);
  EXPECT_EQ(ResolveStore("")->url, "/data/vouch/history.sqlite");
  ::unsetenv("XDG_DATA_HOME");
  if (const char* home = std::getenv("HOME")) {
    EXPECT_EQ(ResolveStore("")->url, std::string(home) + "/.local/share/vouch/history.sqlite");
  }
  EXPECT_TRUE(IsPostgresUrl("postgres://u@h/d"));
  EXPECT_FALSE(IsPostgresUrl("/tmp/postgresql.sqlite"));
  EXPECT_EQ(RedactUrl("postgresql://u:secret@h:5432/db"), "postgresql://u:<redacted>@h:5432/db");
  EXPECT_EQ(RedactUrl("postgresql:///db?host=/tmp"), "postgresql:///db?host=/tmp");
}

TEST(StoredCells, ANumberWhereOneIsRequiredOrAnError) {
  EXPECT_EQ(*StoredInt(SqlValue(std::int64_t{4294967298}), "v"), 4294967298);
  EXPECT_EQ(*StoredInt(SqlValue(2.0), "v"), 2);
  EXPECT_FALSE(StoredInt(SqlValue(2.5), "v").ok());
  EXPECT_FALSE(StoredInt(SqlValue(1e300), "v").ok());
  EXPECT_NE(StoredInt(SqlValue(std::string("2")), "row x: v")
                .error()
                .message.find("row x: v is text ('2'), not an integer"),
            std::string::npos);
  EXPECT_EQ(*StoredReal(SqlValue(1.5), "m"), 1.5);
  EXPECT_FALSE(StoredReal(SqlValue(std::numeric_limits<double>::infinity()), "m").ok());
  EXPECT_FALSE(StoredReal(SqlNull(), "m").ok());
  EXPECT_FALSE(StoredOptReal(SqlNull(), "m")->has_value());
  EXPECT_FALSE(ParseStoredRecord("{\"schema\":\"vouch.record\",\"schema_version\":1}", "w").ok());
  EXPECT_TRUE(ParseStoredRecord(Fixture().dump(), "w").ok());
}

TEST(StoreSqlite, AFileThatIsNotADatabaseIsRefusedByName) {
  auto p = std::filesystem::temp_directory_path() / fmt::format("vouch_notdb_{}", ::getpid());
  std::ofstream(p) << "this is not a database, just text that is long enough to be a header\n";
  auto s = Store::Open(p.string());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find(p.string()), std::string::npos) << s.error().message;
  std::filesystem::remove(p);
}

TEST(StoreSqlite, AFifoADeviceOrADirectoryIsNamedForWhatItIs) {
  auto fifo =
      std::filesystem::temp_directory_path() / fmt::format("vouch_store_fifo_{}", ::getpid());
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::pair<std::string, std::string> cases[] = {
      {fifo.string(), "a FIFO (named pipe)"},
      {"/dev/null", "a character device"},
      {std::filesystem::temp_directory_path().string(), "a directory"}};
  for (const auto& [path, what] : cases) {
    auto s = Store::Open(path);
    ASSERT_FALSE(s.ok()) << path;
    EXPECT_EQ(s.error().message, "history store " + path + ": is " + what +
                                     "; give a SQLite file or a postgresql:// address");
  }
  std::filesystem::remove(fifo);
}

TEST(StorePostgres, AnUnreachableServerIsAClearError) {
  auto s = Store::Open("postgresql://nobody@/nodb?host=/nonexistent-vouch-socket-dir");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("cannot connect"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace vouch

namespace vouch {
namespace {

// Issue 36, class 2, on both engines: a read can write nothing, runs under the statement
// budget, and a GENERATED column in a vouch table is refused as a view is.
TEST_P(StoreTest, AReadWritesNothingAndAGeneratedColumnIsRefused) {
  {
    auto s = Open();
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->AddRecord(RunOf(1, "c1", 100), "one").ok());
  }
  {
    auto r = Store::Open(url_, StoreAccess::kRead);
    ASSERT_TRUE(r.ok()) << r.error().message;
    auto del = (*r)->db().Exec("DELETE FROM runs");
    ASSERT_FALSE(del.ok()) << "a read deleted the runs";
    EXPECT_NE(del.error().message.find(GetParam() == "sqlite" ? "readonly" : "read-only"),
              std::string::npos)
        << del.error().message;
    EXPECT_EQ((*r)->ListRuns({})->size(), 1u);
    if (GetParam() == "postgresql") {
      auto t = (*r)->db().Query("SHOW statement_timeout");
      ASSERT_TRUE(t.ok()) << t.error().message;
      EXPECT_EQ(AsText(t->rows[0][0]), "1min");  // the 60 s budget
    }
  }
  {
    auto s = Open();
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->db()
                    .Exec(GetParam() == "sqlite"
                              ? "ALTER TABLE runs ADD COLUMN slow INTEGER GENERATED ALWAYS AS "
                                "(length(kind)) VIRTUAL"
                              : "ALTER TABLE runs ADD COLUMN slow BIGINT GENERATED ALWAYS AS "
                                "(length(kind)) STORED")
                    .ok());
  }
  for (StoreAccess access : {StoreAccess::kRead, StoreAccess::kWrite}) {
    auto r = Store::Open(url_, access);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("it holds a generated column named 'slow' of table 'runs'"),
              std::string::npos)
        << r.error().message;
  }
}

}  // namespace
}  // namespace vouch
