// Store::TrendEach (issue 39): the points of Store::Trend, one row at a time, with its checks.
// SQLite only: both engines walk the same query (store_test.cc runs Trend on both).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "record/record.h"
#include "store/store.h"

namespace vouch {
namespace {

class StoreTrendEach : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / fmt::format("vouch_trend_each_{}", getpid());
    std::filesystem::remove_all(dir_);
    auto s = Store::Open((dir_ / "h.sqlite").string());
    ASSERT_TRUE(s.ok()) << s.error().message;
    store_ = std::move(*s);
    auto rec = ReadRecordJson(VOUCH_SOURCE_DIR "/tests/data/store/run");
    ASSERT_TRUE(rec.ok()) << rec.error().message;
    for (int i = 0; i < 5; ++i) {
      auto r = *rec;
      r["started_unix_s"] = 1796000000.0 + 600 * (5 - i);  // stored newest first
      r["revisions"] = nlohmann::json::array({{{"path", "/src"},
                                               {"git", true},
                                               {"commit", fmt::format("c{}", i)},
                                               {"dirty", i == 2}}});
      for (auto& m : r["summary"]["run"])
        if (m["name"] == "tok_s") m["median"] = 100 + i;
      if (i == 4)
        for (auto& l : r["legs"]) l["valid"] = false;
      if (i == 4) r["summary"]["run"] = nlohmann::json::array();
      ASSERT_TRUE(store_->AddRecord(r, "t").ok());
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::vector<TrendPoint> Each(const TrendQuery& q) {
    std::vector<TrendPoint> out;
    auto s = store_->TrendEach(q, [&](const TrendRow& r) {
      TrendPoint& p = out.emplace_back();
      p.run_key = r.run_key;
      p.commit = r.commit;
      p.branch = r.branch;
      p.day = r.day;
      p.host = r.host;
      p.gpu_name = r.gpu_name;
      p.gpu_uuid = r.gpu_uuid;
      p.boot_id = r.boot_id;
      p.unit = r.unit;
      p.better = r.better;
      p.started_unix_s = r.started_unix_s;
      p.value = r.value;
      p.n = r.n;
      p.attributed = r.attributed;
      p.dirty = r.dirty;
      p.clock_sm_median_mhz = r.clock_sm_median_mhz;
      return OkStatus();
    });
    EXPECT_TRUE(s.ok()) << s.error().message;
    return out;
  }
  static std::string Fields(const TrendPoint& p) {
    return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", p.run_key, p.commit,
                       p.branch, p.day, p.host, p.gpu_name, p.gpu_uuid, p.boot_id, p.unit, p.better,
                       p.started_unix_s, p.value, p.n, p.attributed, p.dirty,
                       p.clock_sm_median_mhz.value_or(-1));
  }
  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTrendEach, GivesTrendsPointsInItsOrder) {
  TrendQuery q;
  q.metric = "tok_s";
  for (bool unattributed : {false, true}) {
    q.include_unattributed = unattributed;
    auto want = store_->Trend(q);
    ASSERT_TRUE(want.ok()) << want.error().message;
    auto got = Each(q);
    ASSERT_EQ(got.size(), unattributed ? 5u : 4u);
    ASSERT_EQ(got.size(), want->size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(Fields(got[i]), Fields((*want)[i])) << i;
    EXPECT_EQ(got[0].commit, unattributed ? "c4" : "c3");  // oldest first
    EXPECT_EQ(got[0].attributed, !unattributed);
  }
  q.include_unattributed = false;
  q.host = "no-such-host";
  EXPECT_TRUE(Each(q).empty());
}

TEST_F(StoreTrendEach, AnErrorStopsTheWalkAndAStoredTextIsNoNumber) {
  TrendQuery q;
  q.metric = "tok_s";
  int seen = 0;
  auto s = store_->TrendEach(
      q, [&](const TrendRow&) { return ++seen == 2 ? MakeError("stop here") : OkStatus(); });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "stop here");
  EXPECT_EQ(seen, 2);
  ASSERT_TRUE(store_->db().Exec("UPDATE summaries SET median = 'abc' WHERE name = 'tok_s'").ok());
  s = store_->TrendEach(q, [&](const TrendRow&) { return OkStatus(); });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("summaries row (run "), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("median"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace vouch
