// SeriesPointList and TrendBuilder (issue 39): the compact points give back every string byte
// for byte, whichever way it was kept, and a series built row by row is BuildTrend's.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "trend/trend.h"
#include "util/json_io.h"

namespace vouch {
namespace {

TrendPoint Pt(const std::string& key, const std::string& commit, double v, double t,
              const std::string& day = "2026-12-01") {
  TrendPoint p;
  p.run_key = key;
  p.commit = commit;
  p.value = v;
  p.started_unix_s = t;
  p.day = day;
  p.gpu_name = "NVIDIA H200";
  p.gpu_uuid = "GPU-aaa";
  p.unit = "tok/s";
  p.better = "higher";
  p.clock_sm_median_mhz = 1980;
  return p;
}

TrendQuery Metric() {
  TrendQuery q;
  q.metric = "tok_s";
  return q;
}

// Lowercase hex is kept as its bytes, anything else as it is: both read back the same.
TEST(TrendPoints, EveryStringComesBackByteForByte) {
  const std::vector<std::string> odd = {
      "0123456789abcdef0123456789abcdef",          // a run key: packed
      "c0ffee00000000000000000000000000000000aa",  // a commit: packed
      "ABCDEF",                                    // uppercase hex: as it is
      "abc",                                       // odd length: as it is
      "",                                          // empty
      "caf\xc3\xa9 \"q\" \n",                      // non-ASCII, quotes, newline
      std::string("nul\0byte", 8),                 // a NUL inside
      std::string(300, 'a'),                       // long (a two-byte header), packed
      std::string(301, 'z')};                      // long, as it is
  std::vector<TrendPoint> pts;
  for (size_t i = 0; i < odd.size(); ++i)
    pts.push_back(Pt(odd[i].empty() ? "k" : odd[i], odd[(i + 3) % odd.size()],
                     100 + static_cast<double>(i), static_cast<double>(i)));
  for (auto by : {TrendBy::kCommit, TrendBy::kRun, TrendBy::kDay}) {
    auto s = BuildTrend(pts, Metric(), by);
    std::string scratch;
    for (size_t i = 0; i < s.points.size(); ++i) {
      const SeriesPoint p = s.points[i];
      EXPECT_EQ(s.points.label(i), p.label);
      EXPECT_EQ(s.points.first_commit(i, scratch), p.first_commit);
      ASSERT_EQ(s.points.run_count(i), p.run_keys.size());
      for (size_t k = 0; k < p.run_keys.size(); ++k)
        EXPECT_EQ(s.points.run_key(i, k, scratch), p.run_keys[k]);
    }
    if (by == TrendBy::kRun) {
      ASSERT_EQ(s.points.size(), odd.size());
      for (size_t i = 0; i < odd.size(); ++i) {
        EXPECT_EQ(s.points[i].run_keys[0], odd[i].empty() ? "k" : odd[i]);
        EXPECT_EQ(s.points[i].first_commit, odd[(i + 3) % odd.size()]);
        EXPECT_EQ(s.points[i].label, (odd[i].empty() ? "k" : odd[i]).substr(0, 12));
      }
    }
  }
}

// Runs of one commit (or day) that are not next to each other are one point, the median of
// their values and clocks, its runs in the store's order, its first commit the first run's.
TEST(TrendPoints, RunsOfAPointAreGatheredInOrder) {
  std::vector<TrendPoint> pts = {Pt("aa01", "c1", 100, 1), Pt("aa02", "c2", 200, 2),
                                 Pt("aa03", "c1", 104, 3), Pt("aa04", "", 50, 4),
                                 Pt("aa05", "c1", 90, 5),  Pt("aa06", "c2", 210, 6)};
  pts[2].clock_sm_median_mhz = 1410;
  pts[4].clock_sm_median_mhz.reset();
  pts[5].dirty = true;
  pts[1].attributed = false;
  auto s = BuildTrend(pts, Metric(), TrendBy::kCommit);
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_EQ(s.points[0].label, "c1");
  EXPECT_EQ(s.points[0].run_keys, (std::vector<std::string>{"aa01", "aa03", "aa05"}));
  EXPECT_DOUBLE_EQ(s.points[0].value, 100);
  EXPECT_DOUBLE_EQ(*s.points[0].clock_sm_median_mhz, (1980 + 1410) / 2.0);
  EXPECT_EQ(s.points[1].label, "c2");
  EXPECT_DOUBLE_EQ(s.points[1].value, 205);
  EXPECT_TRUE(s.points[1].dirty);
  EXPECT_FALSE(s.points[1].attributed);
  EXPECT_EQ(s.points[2].label, "run aa04");
  EXPECT_EQ(s.points[2].first_commit, "");
  EXPECT_EQ(s.unattributed, 1);
  auto d = BuildTrend(pts, Metric(), TrendBy::kDay);
  ASSERT_EQ(d.points.size(), 1u);
  EXPECT_EQ(d.points[0].run_keys.size(), 6u);
  EXPECT_EQ(d.points[0].first_commit, "c1");
  EXPECT_DOUBLE_EQ(d.points[0].value, (100 + 104) / 2.0);
}

// Fed one row at a time, the builder gives BuildTrend's series, JSON byte for byte; a copy of
// the series keeps its strings when the original is gone.
TEST(TrendPoints, TheBuilderIsBuildTrendRowByRow) {
  std::vector<TrendPoint> pts;
  for (int i = 0; i < 3000; ++i)
    pts.push_back(Pt(fmt::format("{:032x}", 7919 * i), fmt::format("{:040x}", i / 3),
                     (i < 1800 ? 100 : 103) * (1 + 0.001 * (i % 5)), i,
                     i < 1500 ? "2026-12-01" : "2026-12-02"));
  for (auto by : {TrendBy::kCommit, TrendBy::kRun, TrendBy::kDay}) {
    TrendBuilder b(Metric(), by);
    for (const auto& p : pts) b.Add(TrendRowOf(p));
    TrendSeries copy;
    {
      TrendSeries s = b.Finish();
      DetectSteps(s);
      copy = s;
    }
    auto want = BuildTrend(pts, Metric(), by);
    DetectSteps(want);
    EXPECT_EQ(TrendJsonText(copy), TrendJsonText(want));
    EXPECT_EQ(TrendJsonText(copy), DumpJson(TrendJson(copy), 2));
  }
}

}  // namespace
}  // namespace vouch
