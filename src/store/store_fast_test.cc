// PrepareRecordFast (`history add`'s reading of simdjson's tree) against the ordinary reading
// (nlohmann's tree): the same rows and stored document, byte for byte, on every record the
// repository holds (the store's fixtures and the GPU runs under evidence/); and where a record
// is not plain, it declines and `history add` says what the ordinary reading says.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "record/journal.h"
#include "store/store.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;

// Every cell of P, typed ("i:", "d:" with all 17 digits, "s:", "null"), in order.
std::string Cells(const PreparedRecord& p) {
  auto cell = [](const SqlValue& v) -> std::string {
    if (std::holds_alternative<std::monostate>(v)) return "null";
    if (const auto* i = std::get_if<std::int64_t>(&v)) return fmt::format("i:{}", *i);
    if (const auto* d = std::get_if<double>(&v)) return fmt::format("d:{:.17g}", *d);
    return "s:" + std::get<std::string>(v);
  };
  auto row = [&](const std::vector<SqlValue>& r) {
    std::string out;
    for (const auto& v : r) out += cell(v) + "|";
    return out + "\n";
  };
  std::string out = p.out.run_key + " " + p.content + " " + p.source + "\n" + row(p.run_row);
  for (const auto* t : {&p.legs, &p.windows, &p.metrics, &p.summaries})
    for (const auto& r : *t) out += row(r);
  for (const auto* o : {&p.ab_verdict, &p.baseline, &p.gate}) out += *o ? row(**o) : "none\n";
  return out;
}

std::vector<std::string> RecordDirs() {
  std::vector<std::string> dirs;
  for (const char* root : {"/tests/data/store", "/evidence"})
    for (const auto& e : fs::recursive_directory_iterator(std::string(VOUCH_SOURCE_DIR) + root))
      if (e.path().filename() == "record.json") dirs.push_back(e.path().parent_path().string());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

TEST(StoreFast, EveryRecordInTheRepositoryGivesTheOrdinaryReadingsRows) {
  auto dirs = RecordDirs();
  ASSERT_GE(dirs.size(), 30u);
  int fast = 0;
  for (const auto& d : dirs) {
    SCOPED_TRACE(d);
    auto ordinary = Store::PrepareRecordDir(d, /*fast=*/false);
    auto quick = PrepareRecordFast(d + "/record.json", fs::absolute(d).string());
    if (!ordinary.ok()) {
      EXPECT_FALSE(quick.has_value())
          << "read a record the ordinary reading refuses: " << ordinary.error().message;
      continue;
    }
    auto through = Store::PrepareRecordDir(d);
    ASSERT_TRUE(through.ok());
    EXPECT_EQ(Cells(*through), Cells(*ordinary));
    // Written by vouch (sorted keys): declined only for a journal beside it.
    if (fs::exists(fs::path(d) / kLegJournalFile)) {
      EXPECT_FALSE(quick.has_value());
      continue;
    }
    ASSERT_TRUE(quick.has_value());
    ++fast;
    EXPECT_EQ(Cells(*quick), Cells(*ordinary));
  }
  EXPECT_GE(fast, 16);  // the rest have a journal, or are refused (an older schema)
}

class StoreFastDeclines : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() / fmt::format("vouch_store_fast_{}_{}", ::getpid(), counter++);
    fs::remove_all(dir_);
    fs::copy(VOUCH_SOURCE_DIR "/tests/data/store/run", dir_, fs::copy_options::recursive);
    std::ifstream in(dir_ / "record.json");
    rec_ = nlohmann::json::parse(in);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& text) { std::ofstream(dir_ / "record.json") << text; }
  std::optional<PreparedRecord> Fast() {
    return PrepareRecordFast((dir_ / "record.json").string(), dir_.string());
  }
  fs::path dir_;
  nlohmann::json rec_;
};

TEST_F(StoreFastDeclines, NumbersOfEveryKindAreDumpedAsNlohmannDumpsThem) {
  rec_["started_unix_s"] = 1796000000.125;
  rec_["ended_unix_s"] = 1e21;
  rec_["environment"]["x_big"] = 18446744073709551615ull;
  rec_["environment"]["x_neg"] = -9223372036854775807ll;
  rec_["environment"]["x_small"] = 5e-324;
  rec_["environment"]["x_whole"] = 3.0;
  rec_["environment"]["x_text"] = "caf\u00e9 \x01\x1f \"q\" \\ \t\n";
  Write(rec_.dump(1));
  auto quick = Fast();
  ASSERT_TRUE(quick.has_value());
  auto ordinary = Store::PrepareRecordDir(dir_.string(), false);
  ASSERT_TRUE(ordinary.ok()) << ordinary.error().message;
  EXPECT_EQ(Cells(*quick), Cells(*ordinary));
  const auto& doc = std::get<std::string>(quick->run_row.back());
  EXPECT_NE(doc.find("\"ended_unix_s\":1e+21,"), std::string::npos);
  EXPECT_NE(doc.find("\"x_big\":18446744073709551615,"), std::string::npos);
  EXPECT_NE(doc.find("\"x_small\":5e-324,"), std::string::npos);
  EXPECT_NE(doc.find("\"x_whole\":3.0"), std::string::npos);
}

TEST_F(StoreFastDeclines, KeysInAnotherOrderAreSortedAndARepeatedKeyIsTheOrdinaryReadings) {
  // Objects written in another order (by hand, or by a tool that keeps insertion order, as
  // Python's json does): nlohmann's dump sorts them, and so does this reading's.
  nlohmann::ordered_json o = nlohmann::ordered_json::parse(rec_.dump());
  for (const char* k : {"kind", "environment", "summary"}) {
    auto v = o[k];
    o.erase(k);
    o[k] = v;  // now last
  }
  auto& env = o["environment"];
  auto host = env["hostname"];
  env.erase("hostname");
  env["hostname"] = host;
  Write(o.dump(2));
  auto quick = Fast();
  ASSERT_TRUE(quick.has_value());
  auto ordinary = Store::PrepareRecordDir(dir_.string(), false);
  ASSERT_TRUE(ordinary.ok()) << ordinary.error().message;
  EXPECT_EQ(Cells(*quick), Cells(*ordinary));
  EXPECT_EQ(std::get<std::string>(quick->run_row.back()), rec_.dump());
  // A repeated key: nlohmann keeps the last.
  std::string text = rec_.dump();
  text.insert(text.rfind('}'), ",\"valid_legs\":0");
  Write(text);
  EXPECT_FALSE(Fast().has_value());
  auto through = Store::PrepareRecordDir(dir_.string());
  ordinary = Store::PrepareRecordDir(dir_.string(), false);
  ASSERT_TRUE(through.ok() && ordinary.ok());
  EXPECT_EQ(Cells(*through), Cells(*ordinary));
}

TEST_F(StoreFastDeclines, AJournalBesideTheRecordIsTheOrdinaryReadings) {
  Write(rec_.dump());
  ASSERT_TRUE(Fast().has_value());
  // A finished run's journal is checked against its record (an empty one holds no leg).
  std::ofstream(dir_ / kLegJournalFile) << "";
  EXPECT_FALSE(Fast().has_value());
  auto through = Store::PrepareRecordDir(dir_.string());
  auto ordinary = Store::PrepareRecordDir(dir_.string(), false);
  ASSERT_EQ(through.ok(), ordinary.ok());
  if (through.ok())
    EXPECT_EQ(Cells(*through), Cells(*ordinary));
  else
    EXPECT_EQ(through.error().message, ordinary.error().message);
}

TEST_F(StoreFastDeclines, ABrokenRecordIsRefusedWithTheOrdinaryReadingsWords) {
  struct Case {
    const char* what;
    std::function<void(nlohmann::json&)> edit;
    const char* words;
  };
  const std::vector<Case> cases = {
      {"a repeated leg index", [](nlohmann::json& r) { r["legs"][1]["index"] = 0; },
       "repeats leg index 0"},
      {"a metric with both value and text",
       [](nlohmann::json& r) { r["legs"][1]["metrics"][0]["text"] = "x"; },
       "must have one of 'value' and 'text'"},
      {"a newer schema", [](nlohmann::json& r) { r["schema_version"] = 99; }, "upgrade vouch"},
      {"a string where a flag is", [](nlohmann::json& r) { r["environment"]["simulated"] = "yes"; },
       "simulated"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    nlohmann::json r = rec_;
    c.edit(r);
    Write(r.dump());
    EXPECT_FALSE(Fast().has_value());
    auto through = Store::PrepareRecordDir(dir_.string());
    auto ordinary = Store::PrepareRecordDir(dir_.string(), false);
    ASSERT_FALSE(through.ok());
    ASSERT_FALSE(ordinary.ok());
    EXPECT_EQ(through.error().message, ordinary.error().message);
    EXPECT_NE(through.error().message.find(c.words), std::string::npos) << through.error().message;
  }
  for (const std::string text : {"", "{", "[1,2]", "{\"schema\":\"vouch.record\"}", "-0"}) {
    Write(text);
    EXPECT_FALSE(Fast().has_value()) << text;
    EXPECT_FALSE(Store::PrepareRecordDir(dir_.string()).ok()) << text;
  }
}

}  // namespace
}  // namespace vouch
