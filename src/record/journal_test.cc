// The leg journal: a run killed before its end is read back from legs.jsonl with every
// finished leg, its counts and summary recomputed; a torn last line is left out by name.
#include "record/journal.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "record/record.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;

LegRecord Leg(int index, double tok_s, bool valid) {
  LegRecord l;
  l.index = index;
  l.arm = "run";
  l.role = "measured";
  l.dir = "legs/" + std::to_string(index);
  l.valid = valid;
  if (!valid) l.reasons.push_back("window invalid: spread");
  l.result.exit_code = 0;
  l.result.wall_ns = 1'000'000'000;
  Metric m;
  m.name = "tok_s";
  m.value = tok_s;
  m.unit = "tok/s";
  m.better = Better::kHigher;
  l.metrics.push_back(m);
  return l;
}

class Journal : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("vouch_journal_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    RunRecord r;  // as PrepareRun writes it: running, no legs yet
    r.planned_legs = 5;
    r.environment = {{"simulated", true}};
    Arm arm;
    arm.argv = {"./bench"};
    r.arms.push_back(arm);
    ASSERT_TRUE(WriteRecord(dir_.string(), r).ok());
  }
  std::string JournalPath() const { return (dir_ / "legs.jsonl").string(); }
  fs::path dir_;
};

TEST_F(Journal, AKilledRunIsReadBackWithEveryFinishedLeg) {
  LegJournal j;
  ASSERT_TRUE(j.Open(dir_.string()).ok());
  ASSERT_TRUE(j.Append(Leg(0, 100, true)).ok());
  ASSERT_TRUE(j.Append(Leg(1, 300, false)).ok());
  ASSERT_TRUE(j.Append(Leg(2, 104, true)).ok());
  ASSERT_TRUE(j.Close().ok());
  // record.json is still the one of the start ("running", no legs): the run was killed.
  auto rec = ReadRecordJson(dir_.string());
  ASSERT_TRUE(rec.ok()) << rec.error().message;
  EXPECT_EQ((*rec)["status"], "running");
  ASSERT_EQ((*rec)["legs"].size(), 3u);
  EXPECT_EQ((*rec)["legs"][2]["index"], 2);
  EXPECT_EQ((*rec)["measured_legs"], 3);
  EXPECT_EQ((*rec)["valid_legs"], 2);
  const auto& s = (*rec)["summary"]["run"][0];
  EXPECT_EQ(s["name"], "tok_s");
  EXPECT_EQ(s["n"], 2);
  EXPECT_DOUBLE_EQ(s["median"].get<double>(), 102);  // the invalid leg's 300 is not in it
  EXPECT_NE((*rec)["missing"].dump().find("3 finished legs are read from the journal legs.jsonl"),
            std::string::npos)
      << (*rec)["missing"].dump();
  std::string text = RenderRecordText(*rec);
  EXPECT_NE(text.find("2 of 3 measured legs valid"), std::string::npos) << text;
}

// A run whose vouch was SIGKILLed leaves "running" forever; the writer's pid, boot and start
// time tell it from one in progress.
TEST_F(Journal, ARunWhoseWriterIsGoneIsKilledNotRunning) {
  LegJournal j;
  ASSERT_TRUE(j.Open(dir_.string()).ok());
  ASSERT_TRUE(j.Append(Leg(0, 100, true)).ok());
  ASSERT_TRUE(j.Close().ok());
  auto alive = ReadRecordJson(dir_.string());  // written by this test: still running
  ASSERT_TRUE(alive.ok()) << alive.error().message;
  EXPECT_EQ((*alive)["status"], "running");
  EXPECT_NE((*alive)["missing"].dump().find("the run is still in progress (pid"), std::string::npos)
      << (*alive)["missing"].dump();

  auto rewrite = [&](const std::string& key, const nlohmann::json& v) {
    std::ifstream in(dir_ / "record.json");
    auto rec = nlohmann::json::parse(in);
    rec["writer"][key] = v;
    std::ofstream(dir_ / "record.json") << rec.dump(2);
    return rec;
  };
  auto start = (*alive)["writer"]["start_ticks"].get<std::uint64_t>();
  ASSERT_GT(start, 0u);
  rewrite("start_ticks", start + 1);  // the pid now belongs to another process
  auto reused = ReadRecordJson(dir_.string());
  ASSERT_TRUE(reused.ok()) << reused.error().message;
  EXPECT_EQ((*reused)["status"], "killed");
  EXPECT_NE((*reused)["missing"].dump().find("is gone and left no cause"), std::string::npos)
      << (*reused)["missing"].dump();
  EXPECT_NE(RenderRecordText(*reused).find("run killed started"), std::string::npos)
      << RenderRecordText(*reused);

  rewrite("start_ticks", start);
  rewrite("boot_id", "00000000-0000-0000-0000-000000000000");  // the machine booted since
  auto rebooted = ReadRecordJson(dir_.string());
  ASSERT_TRUE(rebooted.ok());
  EXPECT_EQ((*rebooted)["status"], "killed");

  rewrite("host", "another-node");  // not this machine's to judge
  auto elsewhere = ReadRecordJson(dir_.string());
  ASSERT_TRUE(elsewhere.ok());
  EXPECT_EQ((*elsewhere)["status"], "running");
  EXPECT_NE((*elsewhere)["missing"].dump().find("on another-node: this host cannot tell"),
            std::string::npos)
      << (*elsewhere)["missing"].dump();

  rewrite("pid", "12");  // of the wrong type: refused by name, not guessed
  auto bad = ReadRecordJson(dir_.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("'writer.pid' must be"), std::string::npos)
      << bad.error().message;
}

TEST_F(Journal, ATornLastLineIsLeftOutByName) {
  LegJournal j;
  ASSERT_TRUE(j.Open(dir_.string()).ok());
  ASSERT_TRUE(j.Append(Leg(0, 100, true)).ok());
  ASSERT_TRUE(j.Close().ok());
  std::string whole = ToJson(Leg(1, 101, true)).dump();
  std::ofstream(JournalPath(), std::ios::app) << whole.substr(0, whole.size() / 2);
  auto rec = ReadRecordJson(dir_.string());
  ASSERT_TRUE(rec.ok()) << rec.error().message;
  EXPECT_EQ((*rec)["legs"].size(), 1u);
  EXPECT_NE((*rec)["missing"].dump().find("line 2 is cut short"), std::string::npos)
      << (*rec)["missing"].dump();
}

TEST_F(Journal, ACorruptLineInTheMiddleIsAnErrorNamingTheLine) {
  std::ofstream(JournalPath()) << ToJson(Leg(0, 100, true)).dump() << "\n{oops\n"
                               << ToJson(Leg(2, 100, true)).dump() << "\n";
  auto rec = ReadRecordJson(dir_.string());
  ASSERT_FALSE(rec.ok());
  EXPECT_NE(rec.error().message.find("legs.jsonl: line 2 is not a JSON object"), std::string::npos)
      << rec.error().message;
}

TEST_F(Journal, AFinishedRecordMustHoldTheSameLegsAsItsJournal) {
  RunRecord r;
  r.status = "complete";
  r.environment = {{"simulated", true}};
  Arm arm;
  arm.argv = {"./bench"};
  r.arms.push_back(arm);
  r.legs.push_back(Leg(0, 100, true));
  ASSERT_TRUE(WriteRecord(dir_.string(), r).ok());
  // The journal as the run wrote it: read as written.
  std::ofstream(JournalPath()) << ToJson(Leg(0, 100, true)).dump() << "\n";
  auto rec = ReadRecordJson(dir_.string());
  ASSERT_TRUE(rec.ok()) << rec.error().message;
  EXPECT_EQ((*rec)["legs"].size(), 1u);
  EXPECT_EQ((*rec)["missing"].size(), 0u);
  // A leg the record does not have.
  std::ofstream(JournalPath(), std::ios::app) << ToJson(Leg(1, 100, true)).dump() << "\n";
  rec = ReadRecordJson(dir_.string());
  ASSERT_FALSE(rec.ok());
  EXPECT_NE(rec.error().message.find(JournalPath() + ": line 2 holds leg index 1, which"),
            std::string::npos)
      << rec.error().message;
  // Another value for the record's leg.
  std::ofstream(JournalPath()) << ToJson(Leg(0, 101, true)).dump() << "\n";
  rec = ReadRecordJson(dir_.string());
  ASSERT_FALSE(rec.ok());
  EXPECT_NE(rec.error().message.find("line 1 (leg index 0) differs from that leg in"),
            std::string::npos)
      << rec.error().message;
  EXPECT_NE(rec.error().message.find("at '/metrics/0/value'"), std::string::npos)
      << rec.error().message;
}

TEST_F(Journal, ARecordWhoseJournalAppendsFailedKeepsItsLaterLegs) {
  // A full disk stopped the journal after leg 0; the run said so in a caveat and its record
  // holds both legs: the record is the evidence, not a forgery.
  RunRecord r;
  r.status = "complete";
  r.environment = {{"simulated", true}};
  Arm arm;
  arm.argv = {"./bench"};
  r.arms.push_back(arm);
  r.legs.push_back(Leg(0, 100, true));
  r.legs.push_back(Leg(1, 100, true));
  ASSERT_TRUE(WriteRecord(dir_.string(), r).ok());
  std::ofstream(JournalPath()) << ToJson(Leg(0, 100, true)).dump() << "\n";
  auto rec = ReadRecordJson(dir_.string());
  ASSERT_FALSE(rec.ok());  // without the caveat, a leg added by hand
  EXPECT_NE(rec.error().message.find("leg index 1 is not in"), std::string::npos)
      << rec.error().message;
  r.caveats.push_back("journal: cannot append to legs.jsonl: No space left on device");
  ASSERT_TRUE(WriteRecord(dir_.string(), r).ok());
  rec = ReadRecordJson(dir_.string());
  ASSERT_TRUE(rec.ok()) << rec.error().message;
  EXPECT_EQ((*rec)["legs"].size(), 2u);
}

TEST_F(Journal, ALegIndexTwiceIsAnErrorNamingBothLines) {
  const std::string a = ToJson(Leg(0, 100, true)).dump(), b = ToJson(Leg(1, 100, true)).dump();
  std::ofstream(JournalPath()) << a << "\n" << b << "\n" << a << "\n";
  auto rec = ReadRecordJson(dir_.string());
  ASSERT_FALSE(rec.ok());
  EXPECT_NE(rec.error().message.find(JournalPath() +
                                     ": line 3 repeats line 1 (leg index 0) word for word"),
            std::string::npos)
      << rec.error().message;
  std::ofstream(JournalPath()) << a << "\n" << b << "\n" << ToJson(Leg(0, 7, true)).dump() << "\n";
  rec = ReadRecordJson(dir_.string());
  ASSERT_FALSE(rec.ok());
  EXPECT_NE(rec.error().message.find(
                JournalPath() + ": lines 1 and 3 both hold leg index 0, with different contents"),
            std::string::npos)
      << rec.error().message;
}

TEST_F(Journal, EachAppendIsOneLineAndTheBytesAreCounted) {
  LegJournal j;
  ASSERT_TRUE(j.Open(dir_.string()).ok());
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(j.Append(Leg(i, 100 + i, true)).ok());
  std::uint64_t bytes = j.bytes_written();
  ASSERT_TRUE(j.Close().ok());
  EXPECT_EQ(fs::file_size(JournalPath()), bytes);
  std::ifstream in(JournalPath());
  int lines = 0;
  for (std::string l; std::getline(in, l); ++lines)
    EXPECT_EQ(nlohmann::json::parse(l)["index"], lines);
  EXPECT_EQ(lines, 50);
}

}  // namespace
}  // namespace vouch
