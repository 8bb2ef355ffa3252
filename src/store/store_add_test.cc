// Store::AddRecordDirs (`vouch history add` of many directories, read on a second thread while
// the store commits): the same rows, outcomes and order as AddRecordDir one after the other.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "store/store.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;

const std::string kRunDir = VOUCH_SOURCE_DIR "/tests/data/store/run";

class StoreAddDirs : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() / fmt::format("vouch_store_add_{}_{}", ::getpid(), counter++);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The fixture as run N (its own start time and commit), in a directory of its own.
  std::string RunDir(int n) {
    fs::path d = dir_ / fmt::format("r{:03d}", n);
    fs::copy(kRunDir, d, fs::copy_options::recursive);
    std::ifstream in(d / "record.json");
    nlohmann::json rec = nlohmann::json::parse(in);
    rec["started_unix_s"] = 1796000000.0 + 60 * n;
    rec["revisions"][0]["commit"] = fmt::format("{:040x}", 0xc0ffee00 + n);
    std::ofstream(d / "record.json") << rec.dump(2);
    return d.string();
  }

  std::unique_ptr<Store> Open(const std::string& name) {
    auto s = Store::Open((dir_ / name).string());
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    return s.ok() ? std::move(*s) : nullptr;
  }

  // Every row of every table the ingest writes, as text, but the time it was ingested.
  static std::string Rows(Store& s) {
    std::string out;
    for (const char* t : {"runs", "legs", "windows", "metrics", "summaries"}) {
      auto q = s.db().Query(fmt::format("SELECT * FROM {} ORDER BY 1, 2, 3", t));
      EXPECT_TRUE(q.ok());
      if (!q.ok()) continue;
      for (const auto& row : q->rows) {
        out += t;
        for (size_t i = 0; i < row.size(); ++i)
          if (q->columns[i] != "ingested_unix_s") out += "|" + AsText(row[i]);
        out += "\n";
      }
    }
    return out;
  }

  fs::path dir_;
};

TEST_F(StoreAddDirs, TheSameRowsAndOutcomesInTheSameOrderAsOneAtATime) {
  std::vector<std::string> dirs;
  for (int i = 0; i < 9; ++i) dirs.push_back(RunDir(i));
  dirs.insert(dirs.begin() + 4, (dir_ / "missing").string());  // refused, in its place
  dirs.push_back(dirs[2]);                                     // unchanged the second time
  auto one = Open("one.sqlite");
  auto many = Open("many.sqlite");
  ASSERT_TRUE(one && many);
  std::vector<std::string> expect, got;
  auto say = [](const std::string& d, const Result<IngestOutcome>& r) {
    return r ? fmt::format("{} {} {}", d, IngestResultName(r->result), r->run_key)
             : fmt::format("{} error {}", d, r.error().message);
  };
  for (const auto& d : dirs) expect.push_back(say(d, one->AddRecordDir(d)));
  many->AddRecordDirs(dirs, [&](const std::string& d, const Result<IngestOutcome>& r) {
    got.push_back(say(d, r));
  });
  EXPECT_EQ(got, expect);
  ASSERT_EQ(got.size(), dirs.size());
  EXPECT_NE(got[4].find(" error "), std::string::npos) << got[4];
  EXPECT_NE(got.back().find(" unchanged "), std::string::npos) << got.back();
  const std::string rows = Rows(*one);
  EXPECT_EQ(Rows(*many), rows);
  EXPECT_NE(rows.find("runs|"), std::string::npos);
}

TEST_F(StoreAddDirs, AnExceptionInTheCallerStopsTheReaderAndIsPassedOn) {
  std::vector<std::string> dirs;
  for (int i = 0; i < 8; ++i) dirs.push_back(RunDir(i));
  auto s = Open("s.sqlite");
  ASSERT_TRUE(s);
  int seen = 0;
  EXPECT_THROW(s->AddRecordDirs(dirs,
                                [&](const std::string&, const Result<IngestOutcome>&) {
                                  if (++seen == 2) throw std::runtime_error("stop");
                                }),
               std::runtime_error);
  EXPECT_EQ(seen, 2);
  // The two records handed over were committed; nothing after them.
  auto q = s->db().Query("SELECT count(*) FROM runs");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(AsInt(q->rows[0][0]), 2);
}

}  // namespace
}  // namespace vouch
