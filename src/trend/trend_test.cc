#include "trend/trend.h"

#include <gtest/gtest.h>

#include <cmath>

#include "util/json_io.h"

namespace vouch {
namespace {

TrendPoint P(const std::string& key, const std::string& commit, double v, double t,
             double clock = 1980, const std::string& gpu = "NVIDIA H200") {
  TrendPoint p;
  p.run_key = key;
  p.commit = commit;
  p.value = v;
  p.started_unix_s = t;
  p.day = t < 86400 ? "1970-01-01" : "1970-01-02";
  p.gpu_name = gpu;
  p.gpu_uuid = gpu == "NVIDIA H200" ? "GPU-aaa" : "GPU-bbb";
  p.unit = "tok/s";
  p.better = "higher";
  p.clock_sm_median_mhz = clock;
  return p;
}

TrendQuery Q() {
  TrendQuery q;
  q.metric = "tok_s";
  return q;
}

TEST(Trend, GroupsRunsPerCommitAndPerDay) {
  std::vector<TrendPoint> pts = {P("k1", "c1", 100, 1), P("k2", "c1", 104, 2),
                                 P("k3", "c2", 90, 90000)};
  auto s = BuildTrend(pts, Q(), TrendBy::kCommit);
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_EQ(s.points[0].label, "c1");
  EXPECT_DOUBLE_EQ(s.points[0].value, 102);
  EXPECT_EQ(s.points[0].run_keys.size(), 2u);
  EXPECT_TRUE(s.mixed.empty());
  auto d = BuildTrend(pts, Q(), TrendBy::kDay);
  ASSERT_EQ(d.points.size(), 2u);
  EXPECT_EQ(d.points[1].label, "1970-01-02");
  EXPECT_EQ(BuildTrend(pts, Q(), TrendBy::kRun).points.size(), 3u);
}

std::vector<TrendPoint> StepSeries(double step_pct) {
  std::vector<TrendPoint> pts;
  for (int i = 0; i < 30; ++i) {
    double v = 1000 * (i >= 15 ? 1 + step_pct / 100 : 1) * (1 + 0.001 * ((i * 7) % 5 - 2));
    pts.push_back(P("k" + std::to_string(i), "commit" + std::to_string(100 + i), v, i));
  }
  return pts;
}

TEST(Trend, ReportsAStepWithItsCommitRangeSizeAndConfidence) {
  auto s = BuildTrend(StepSeries(-3), Q(), TrendBy::kCommit);
  DetectSteps(s);
  ASSERT_TRUE(s.steps_searched);
  ASSERT_EQ(s.steps.size(), 1u);
  EXPECT_EQ(s.steps[0].before, "commit114");
  EXPECT_EQ(s.steps[0].after, "commit115");
  EXPECT_NEAR(s.steps[0].size_pct, -3, 0.3);
  EXPECT_LE(s.steps[0].p_value, 0.01);
  std::string text = RenderTrendText(s);
  EXPECT_NE(text.find("step between commit114 and commit115"), std::string::npos) << text;
  EXPECT_NE(text.find("worse"), std::string::npos) << text;
  EXPECT_NE(RenderTrendMarkdown(s).find("| `commit114` .. `commit115` |"), std::string::npos);
  auto j = TrendJson(s);
  EXPECT_EQ(j["schema"], "vouch.trend");
  EXPECT_EQ(j["steps"][0]["after"], "commit115");
  EXPECT_EQ(j["points"].size(), 30u);
}

TEST(Trend, AMixOfGpusOrClockStatesSaysSoInsteadOfAStep) {
  auto pts = StepSeries(-3);
  for (size_t i = 15; i < pts.size(); ++i) {
    pts[i].gpu_name = "NVIDIA H100";
    pts[i].gpu_uuid = "GPU-bbb";
  }
  auto s = BuildTrend(pts, Q(), TrendBy::kCommit);
  DetectSteps(s);
  EXPECT_FALSE(s.steps_searched);
  EXPECT_TRUE(s.steps.empty());
  ASSERT_EQ(s.mixed.size(), 1u);
  EXPECT_NE(s.mixed[0].find("mixes 2 GPUs"), std::string::npos) << s.mixed[0];
  EXPECT_NE(RenderTrendText(s).find("no steps reported: the series mixes 2 GPUs"),
            std::string::npos);

  auto c = StepSeries(-3);
  for (size_t i = 15; i < c.size(); ++i) c[i].clock_sm_median_mhz = 1410;
  auto t = BuildTrend(c, Q(), TrendBy::kCommit);
  DetectSteps(t);
  EXPECT_TRUE(t.steps.empty());
  ASSERT_EQ(t.mixed.size(), 1u);
  EXPECT_NE(t.mixed[0].find("mixes clock states (SM clock medians 1410 .. 1980 MHz"),
            std::string::npos)
      << t.mixed[0];
}

TEST(Trend, UnattributedPointsAreMarkedAndStopTheSearch) {
  auto pts = StepSeries(0);
  pts[4].attributed = false;
  pts[4].clock_sm_median_mhz.reset();
  auto s = BuildTrend(pts, Q(), TrendBy::kCommit);
  DetectSteps(s);
  EXPECT_EQ(s.unattributed, 1);
  EXPECT_FALSE(s.steps_searched);
  EXPECT_NE(RenderTrendText(s).find("UNATTRIBUTED"), std::string::npos);
}

TEST(Trend, EmptySeriesSaysSo) {
  auto s = BuildTrend({}, Q(), TrendBy::kCommit);
  DetectSteps(s);
  EXPECT_NE(RenderTrendText(s).find("no stored run has this metric"), std::string::npos);
}

// The streamed JSON is the tree's dump, byte for byte: odd strings (quotes, control codes,
// markup, invalid UTF-8, non-ASCII), odd numbers, empty and missing parts, steps.
TEST(Trend, StreamedJsonIsTheTreesDumpByteForByte) {
  EXPECT_EQ(TrendJsonText(BuildTrend({}, Q(), TrendBy::kCommit)),
            DumpJson(TrendJson(BuildTrend({}, Q(), TrendBy::kCommit)), 2));
  std::vector<TrendPoint> pts;
  const std::vector<std::string> commits = {"plain",
                                            "q\"uote",
                                            "back\\slash",
                                            "tab\tnl\n",
                                            "\x1b[31mred",
                                            "<b>&amp;</b>",
                                            std::string("bad\xff\xfeutf8"),
                                            "caf\xc3\xa9",
                                            ""};
  const std::vector<double> values = {0.0, -0.0,    1e20,  1e-7,  1234567.0,
                                      0.1, 123.456, 1e308, 5e-324};
  for (int i = 0; i < 30; ++i) {
    auto p =
        P("run" + std::to_string(i % 20), commits[static_cast<size_t>(i) % commits.size()],
          values[static_cast<size_t>(i) % values.size()] + (i >= 15 ? 100 : 0), 1796000000.5 + i);
    if (i % 7 == 3) p.clock_sm_median_mhz.reset();
    pts.push_back(p);
  }
  for (auto by : {TrendBy::kCommit, TrendBy::kRun, TrendBy::kDay}) {
    auto s = BuildTrend(pts, Q(), by);
    DetectSteps(s);
    EXPECT_EQ(TrendJsonText(s), DumpJson(TrendJson(s), 2)) << TrendByName(by);
  }
  // A series that had a step (the steps' part is the tree's in both).
  std::vector<TrendPoint> step;
  for (int i = 0; i < 40; ++i)
    step.push_back(P("k" + std::to_string(i), "c" + std::to_string(i), i < 20 ? 100 : 110, i));
  auto s = BuildTrend(step, Q(), TrendBy::kCommit);
  DetectSteps(s);
  ASSERT_EQ(s.steps.size(), 1u);
  EXPECT_EQ(TrendJsonText(s), DumpJson(TrendJson(s), 2));
  EXPECT_EQ(TrendJson(s)["method"],
            "E-Divisive means (Matteson & James 2014), permutation test; segments under 30 "
            "points: the largest two-sample t, Bonferroni over the splits");
  // Long enough to be handed over in several parts: the parts join into the same text.
  std::vector<TrendPoint> many;
  for (int i = 0; i < 3000; ++i)
    many.push_back(
        P("run-key-" + std::to_string(i), "commit-" + std::to_string(i), 100 + i % 7, i));
  auto m = BuildTrend(many, Q(), TrendBy::kCommit);
  DetectSteps(m);
  int parts = 0;
  std::string joined;
  WriteTrendJson(m, [&](std::string_view part) {
    ++parts;
    joined += part;
  });
  EXPECT_GE(parts, 3);
  EXPECT_EQ(joined, DumpJson(TrendJson(m), 2));
}

// A long series says which search it had.
TEST(Trend, LongSeriesNamesTheWindowedSearch) {
  std::vector<TrendPoint> pts;
  for (int i = 0; i < 1500; ++i)
    pts.push_back(P("k" + std::to_string(i), "c" + std::to_string(i),
                    (i < 900 ? 100 : 104) * (1 + 0.01 * std::sin(i * 1.7)), i));
  auto s = BuildTrend(pts, Q(), TrendBy::kCommit);
  DetectSteps(s);
  ASSERT_EQ(s.steps.size(), 1u);
  EXPECT_NEAR(s.steps[0].index, 900, 2);
  EXPECT_NE(TrendJson(s)["method"].get<std::string>().find("windows of 256 points"),
            std::string::npos);
}

}  // namespace
}  // namespace vouch
