// Records read back: a record that lacks a field a reader relies on is refused by name (it
// used to be shown with zeros), and over several GPUs the clock state is the slowest GPU's.
#include "record/record.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "record/journal.h"

namespace vouch {
namespace {

GpuWindow Gpu(int index, double median, double mean) {
  GpuWindow g;
  g.state.index = index;
  g.state.uuid = "GPU-" + std::to_string(index);
  g.state.driver_version = "580.159.04";
  g.fold.gpu = index;
  g.fold.readings = 60;
  g.fold.busy_readings = median > 0 ? 55 : 0;
  g.fold.busy_fraction = median > 0 ? 55.0 / 60 : 0;
  if (median > 0) g.fold.sm_mhz = ClockStats{median - 5, median, median + 5, mean};
  return g;
}

RunRecord TwoLegs(std::vector<GpuWindow> gpus) {
  RunRecord r;
  r.status = "complete";
  r.planned_legs = 2;
  r.environment = {{"simulated", false}};
  Arm arm;
  arm.argv = {"./bench"};
  r.arms.push_back(arm);
  for (int i = 0; i < 2; ++i) {
    LegRecord l;
    l.index = i;
    l.arm = "run";
    l.role = "measured";
    l.dir = "legs/00" + std::to_string(i);
    l.valid = true;
    l.result.exit_code = 0;
    l.result.wall_ns = 2'500'000'000;
    Metric m;
    m.name = "tok_s";
    m.value = 100 + i;
    m.unit = "tok/s";
    m.better = Better::kHigher;
    l.metrics.push_back(m);
    l.window.boot_id = "boot-1";
    l.window.gpus = gpus;
    l.window.verdict = JudgeWindow(l.window.gpus, Policy{});
    r.legs.push_back(l);
  }
  return r;
}

class RecordRead : public ::testing::Test {
 protected:
  std::string Write(const nlohmann::json& j) {
    auto dir = std::filesystem::temp_directory_path() /
               ("vouch_record_" +
                std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir);
    std::ofstream((dir / "record.json").string()) << j.dump(2);
    return dir.string();
  }
};

TEST_F(RecordRead, AWellFormedRecordReadsAndShowsItsNumbers) {
  auto dir = Write(ToJson(TwoLegs({Gpu(0, 1980, 1979.5)})));
  auto j = ReadRecordJson(dir);
  ASSERT_TRUE(j.ok()) << j.error().message;
  std::string text = RenderRecordText(*j);
  EXPECT_NE(text.find("2 of 2 measured legs valid"), std::string::npos) << text;
  EXPECT_NE(text.find("2.50 s SM median 1980 mean 1979.5 MHz"), std::string::npos) << text;
  EXPECT_NE(text.find("median        100.5 tok/s  min 100 max 101"), std::string::npos) << text;
}

TEST_F(RecordRead, AMissingOrMistypedFieldIsRefusedByName) {
  const nlohmann::json good = ToJson(TwoLegs({Gpu(0, 1980, 1979.5)}));
  struct Case {
    nlohmann::json::json_pointer at;
    bool erase;  // else set to a string
    std::string says;
  } cases[] = {
      {nlohmann::json::json_pointer("/legs/1/result/wall_ns"), true,
       "'legs[1].result.wall_ns' is missing"},
      {nlohmann::json::json_pointer("/legs/0/valid"), false,
       "'legs[0].valid' must be true or false"},
      {nlohmann::json::json_pointer("/legs/0/window/gpus/0/fold/busy_readings"), true,
       "'legs[0].window.gpus[0].fold.busy_readings' is missing"},
      {nlohmann::json::json_pointer("/summary/run/0/median"), true,
       "'summary.run[0].median' is missing"},
      {nlohmann::json::json_pointer("/legs/0/metrics/0/value"), true,
       "'legs[0].metrics[0]' must have one of 'value' and 'text'"},
      {nlohmann::json::json_pointer("/valid_legs"), false, "'valid_legs' must be an integer"},
      {nlohmann::json::json_pointer("/recipe/reproduce"), true, "'recipe.reproduce' is missing"},
      {nlohmann::json::json_pointer("/legs"), false, "'legs' must be an array"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.says);
    nlohmann::json bad = good;
    if (c.erase)
      bad[c.at.parent_pointer()].erase(c.at.back());
    else
      bad[c.at] = "oops";
    auto r = ReadRecordJson(Write(bad));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("record.json"), std::string::npos) << r.error().message;
  }
}

TEST_F(RecordRead, ClockStateOverTwoGpusIsTheSlowestBusyGpu) {
  auto j = ToJson(TwoLegs({Gpu(0, 1980, 1978), Gpu(1, 1940, 1935)}));
  ClockState c = RecordClockState(j, "run");
  EXPECT_TRUE(c.valid);
  EXPECT_DOUBLE_EQ(c.sm_median_mhz, 1940);
  EXPECT_DOUBLE_EQ(c.sm_mean_mhz, 1935);
  EXPECT_EQ(c.gpu_uuid, "GPU-0,GPU-1");
  EXPECT_EQ(c.boot_id, "boot-1");
  // An unused GPU (idle, not named) does not pace the run.
  auto k = ToJson(TwoLegs({Gpu(0, 0, 0), Gpu(1, 1960, 1955)}));
  ClockState d = RecordClockState(k, "run");
  EXPECT_TRUE(d.valid);
  EXPECT_DOUBLE_EQ(d.sm_median_mhz, 1960);
  std::string text = RenderRecordText(k);
  EXPECT_NE(text.find("GPU 0 unused; GPU 1 SM median 1960 mean 1955.0 MHz"), std::string::npos)
      << text;
}

// The store's reading of a checked record's windows (CheckedRecordClockState reads the JSON in
// place) gives what RecordClockState gives through WindowSummaryFromJson, window by window.
TEST_F(RecordRead, CheckedClockStateIsTheClockStateOfTheWindows) {
  auto same = [](const nlohmann::json& rec, const std::string& what) {
    SCOPED_TRACE(what);
    ASSERT_TRUE(CheckRecordShape(rec, "record").ok());
    ClockState a = RecordClockState(rec, "run"), b = CheckedRecordClockState(rec, "run");
    EXPECT_EQ(a.valid, b.valid);
    EXPECT_EQ(a.simulated, b.simulated);
    EXPECT_EQ(a.gpu_uuid, b.gpu_uuid);
    EXPECT_EQ(a.driver, b.driver);
    EXPECT_EQ(a.boot_id, b.boot_id);
    EXPECT_DOUBLE_EQ(a.sm_median_mhz, b.sm_median_mhz);
    EXPECT_DOUBLE_EQ(a.sm_mean_mhz, b.sm_mean_mhz);
  };
  const nlohmann::json two = ToJson(TwoLegs({Gpu(0, 1980, 1978), Gpu(1, 1940, 1935)}));
  same(two, "two busy GPUs");
  same(ToJson(TwoLegs({Gpu(0, 0, 0), Gpu(1, 1960, 1955)})), "one GPU idle");
  same(ToJson(TwoLegs({Gpu(0, 0, 0)})), "no GPU busy");
  same(ToJson(TwoLegs({})), "no GPU");
  auto edit = [&](const std::function<void(nlohmann::json&)>& f, const std::string& what) {
    nlohmann::json r = two;
    f(r);
    same(r, what);
  };
  edit([](nlohmann::json& r) { r["legs"][0]["window"]["schema"] = "other"; }, "not a window");
  edit([](nlohmann::json& r) { r["legs"][1]["window"]["schema_version"] = 2; }, "version 2");
  edit([](nlohmann::json& r) { r["legs"][0]["window"]["gpus"][1]["fold"]["sm_mhz"] = nullptr; },
       "no SM clock on GPU 1");
  edit([](nlohmann::json& r) { r["legs"][0]["window"]["gpus"][1]["fold"].erase("sm_mhz"); },
       "SM clock left out");
  edit([](nlohmann::json& r) { r["legs"][0]["window"]["gpus"][1]["fold"]["sm_mhz"].erase("mean"); },
       "no mean on GPU 1");
  edit(
      [](nlohmann::json& r) {
        for (auto& l : r["legs"]) l["window"]["gpus"][0]["fold"]["sm_mhz"]["mean"] = nullptr;
        for (auto& l : r["legs"]) l["window"]["gpus"][1]["fold"]["sm_mhz"]["mean"] = nullptr;
      },
      "no mean anywhere");
  edit([](nlohmann::json& r) { r["legs"][0]["window"]["gpus"][0]["fold"]["busy_readings"] = 0; },
       "GPU 0 idle in leg 0");
  edit([](nlohmann::json& r) { r["legs"][1]["window"]["gpus"][0]["static"].erase("uuid"); },
       "no UUID");
  edit([](nlohmann::json& r) { r["legs"][1]["window"]["host"].erase("boot_id"); }, "no boot id");
  edit([](nlohmann::json& r) { r["legs"][1]["valid"] = false; }, "leg 1 invalid");
  edit([](nlohmann::json& r) { r["legs"][1]["arm"] = "b"; }, "leg 1 of another arm");
  edit([](nlohmann::json& r) { r["environment"]["simulated"] = true; }, "simulated");
}

TEST(RecordMedians, AreRecomputedFromTheLegsAndASummaryThatDisagreesIsRefused) {
  const nlohmann::json j = ToJson(TwoLegs({Gpu(0, 1980, 1979.5)}));
  auto m = RecordMedians(j, "run", "r.json");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_DOUBLE_EQ(m->at("tok_s").first, 100.5);
  EXPECT_EQ(m->at("tok_s").second, "tok/s");

  nlohmann::json bad = j;
  bad["summary"]["run"][0]["median"] = 90.0;
  auto r = RecordMedians(bad, "run", "r.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("r.json: 'summary.run[0]' ('tok_s': median 90, min 100", 0), 0u)
      << r.error().message;

  bad = j;
  bad["summary"]["run"] = nlohmann::json::array();
  r = RecordMedians(bad, "run", "r.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("'summary.run' lacks 'tok_s'"), std::string::npos);

  bad = j;
  bad["legs"][1]["reasons"] = {"window invalid: spread 7 %"};
  r = RecordMedians(bad, "run", "r.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("'legs[1]' is marked valid"), std::string::npos);
}

// `vouch run` keeps one leg in memory: the others are in its journal, and only their values
// stay for the summary. record.json and the printed text, written from the journal, are the
// bytes they were with every leg in memory.
TEST(RecordSpill, AWrittenRecordIsTheSameFromTheJournalAsFromMemory) {
  namespace fs = std::filesystem;
  const fs::path base = fs::temp_directory_path() / fmt::format("vouch_spill_{}", ::getpid());
  fs::remove_all(base);
  fs::create_directories(base / "whole");
  fs::create_directories(base / "spilled");
  RunRecord whole = TwoLegs({Gpu(0, 1980, 1975)});
  const LegRecord pattern = whole.legs[0];
  whole.legs.clear();
  whole.planned_legs = 40;
  for (int i = 0; i < 40; ++i) {
    LegRecord l = pattern;
    l.index = i;
    l.role = i < 2 ? "warmup" : "measured";
    l.valid = i % 7 != 3;
    l.metrics[0].value = 100 + (i * 37) % 11;
    if (i % 5 == 0) {
      Metric note;
      note.name = "note";
      note.text = "abc";
      l.metrics.push_back(note);
    }
    whole.legs.push_back(l);
  }
  RunRecord spilled = whole;
  spilled.legs.clear();
  LegJournal journal;
  ASSERT_TRUE(journal.Open((base / "spilled").string()));
  spilled.legs_journal = journal.path();
  for (const auto& l : whole.legs) {
    SpillLegs(spilled);                  // as RunOneLeg does before each leg
    EXPECT_LE(spilled.legs.size(), 1u);  // the legs before the last are not held
    spilled.legs.push_back(l);
    ASSERT_TRUE(journal.Append(l));
  }
  ASSERT_TRUE(journal.Close());
  EXPECT_EQ(spilled.spilled.legs, 38);  // and the last two in memory
  ASSERT_TRUE(WriteRecord((base / "whole").string(), whole));
  ASSERT_TRUE(WriteRecord((base / "spilled").string(), spilled));
  auto read = [](const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string want = read(base / "whole/record.json");
  EXPECT_EQ(read(base / "spilled/record.json"), want);
  auto printed = [](const std::function<void(std::FILE*)>& print) {
    char* buf = nullptr;
    size_t len = 0;
    std::FILE* f = ::open_memstream(&buf, &len);
    print(f);
    std::fclose(f);
    std::string s(buf, len);
    std::free(buf);
    return s;
  };
  const nlohmann::json j = ToJson(spilled);
  EXPECT_EQ(printed([&](std::FILE* f) { PrintRecordText(spilled, j, f); }),
            RenderRecordText(nlohmann::json::parse(want)));
  EXPECT_EQ(
      printed([&](std::FILE* f) { PrintRecordJson(spilled, (base / "spilled").string(), f); }),
      printed([&](std::FILE* f) { PrintRecordJson(whole, (base / "whole").string(), f); }));
  fs::remove_all(base);
}

}  // namespace
}  // namespace vouch
