#include "bisect/record.h"

#include <gtest/gtest.h>

namespace vouch::bisect {
namespace {

BisectRecord Sample() {
  BisectRecord r;
  r.repo = "/repo";
  r.good_rev = "v1";
  r.bad_rev = "v2";
  for (int i = 0; i < 9; ++i)
    r.commits.push_back(
        {std::string(40, static_cast<char>('a' + i)), "commit " + std::to_string(i)});
  r.commits[5].subject = "slow | path";
  r.bench = {"./leg.sh", "--n", "3"};
  r.build = "make";
  // Confirmation, then 4 like good, 6 like bad, 5 like bad: the first bad commit is 5.
  r.steps.push_back({"confirm",
                     8,
                     r.commits[8].sha,
                     StepVerdict::kLikeBad,
                     "B slower",
                     {{"ab",
                       {{"verdict", "B slower"},
                        {"ratio", 0.95},
                        {"ratio_lo", 0.94},
                        {"ratio_hi", 0.96},
                        {"confidence", 0.99},
                        {"pairs", 4},
                        {"band_pct", 1.0},
                        {"mean_log", -0.0513}}}}});
  r.steps.push_back({"step", 4, r.commits[4].sha, StepVerdict::kLikeGood, "no change", {}});
  r.steps.push_back({"step", 6, r.commits[6].sha, StepVerdict::kLikeBad, "B slower", {}});
  r.steps.push_back({"step", 5, r.commits[5].sha, StepVerdict::kLikeBad, "B slower", {}});
  return r;
}

TEST(BisectRecord, ReplaysToTheFoundCommitAndRoundTrips) {
  auto r = Sample();
  auto s = Replay(r);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->state(), Search::State::kFound);
  EXPECT_EQ(s->first_bad(), 5u);
  auto plan = *PlanFamily(r.commits.size(), r.alpha);
  auto j = BisectJson(r, *s, plan);
  EXPECT_EQ(j["result"]["first_bad"]["commit"], r.commits[5].sha);
  EXPECT_EQ(j["result"]["conclusion"], "first bad commit: ffffffffffff (slow | path)");
  EXPECT_EQ(j["plan"]["planned_decisions"], 4);
  EXPECT_DOUBLE_EQ(j["result"]["family_error_bound"].get<double>(), 0.05);
  auto back = BisectRecordFromJson(j, "bisect.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(ResumeMismatch(r, *back), "");
  EXPECT_EQ(back->steps.size(), 4u);
  EXPECT_EQ(back->steps[0].evidence["ab"]["mean_log"], -0.0513);
  auto s2 = Replay(*back);
  ASSERT_TRUE(s2.ok());
  EXPECT_EQ(s2->first_bad(), 5u);
}

TEST(BisectRecord, ARecordThatDoesNotReplayIsRefusedByStep) {
  auto r = Sample();
  r.steps[2].index = 7;
  r.steps[2].commit = r.commits[7].sha;
  auto s = Replay(r);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "step 3 does not replay: commit #7 was tested, but the search's next commit is #6");
  r = Sample();
  r.steps[1].commit = r.commits[3].sha;
  EXPECT_EQ(Replay(r).error().message,
            "step 2: commit #4 is not dddddddddddd in the record's range");
}

TEST(BisectRecord, ResumeNeedsTheSameRangeBenchAndPlan) {
  auto a = Sample(), b = Sample();
  b.bad_rev = "v3";
  b.commits.back().sha = std::string(40, 'z');
  EXPECT_EQ(ResumeMismatch(a, b), "--bad differs: the record has 'v2', given 'v3'");
  b = Sample();
  b.bench.push_back("x");
  EXPECT_EQ(ResumeMismatch(a, b), "the benchmark command differs");
  b = Sample();
  b.max_pairs = 16;
  EXPECT_EQ(ResumeMismatch(a, b), "--max-pairs differs: the record has '96', given '16'");
}

TEST(BisectRecord, HostileRecordsAreRefusedWithTheField) {
  auto r = Sample();
  auto j = BisectJson(r, *Replay(r), *PlanFamily(9, 0.05));
  auto bad = j;
  bad["steps"][1]["verdict"] = "maybe";
  EXPECT_EQ(BisectRecordFromJson(bad, "b.json").error().message,
            "b.json: 'steps[1].verdict' 'maybe' is not like good, like bad, undecided or skipped");
  bad = j;
  bad["steps"][0]["index"] = -1;
  EXPECT_FALSE(BisectRecordFromJson(bad, "b.json").ok());
  bad = j;
  bad["schema"] = "vouch.bisect/9";
  EXPECT_NE(BisectRecordFromJson(bad, "b.json").error().message.find("a newer vouch"),
            std::string::npos);
  bad = j;
  bad["commits"] = nlohmann::json::array();
  EXPECT_FALSE(BisectRecordFromJson(bad, "b.json").ok());
  bad = j;
  bad.erase("plan");
  EXPECT_FALSE(BisectRecordFromJson(bad, "b.json").ok());
}

TEST(BisectRecord, UndecidedSummaryNamesTheRangeAndTheMarkdownEscapes) {
  auto r = Sample();
  r.steps.resize(2);
  r.steps.push_back({"step", 6, r.commits[6].sha, StepVerdict::kUndecided, "inconclusive", {}});
  auto s = Replay(r);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(Conclusion(r, *s),
            "undecided at gggggggggggg (commit 6): the first bad commit is one of 4 commits, "
            "ffffffffffff (slow | path) .. iiiiiiiiiiii (commit 8); stopped rather than guess");
  auto plan = *PlanFamily(9, 0.05);
  auto md = RenderBisectMarkdown(r, *s, plan);
  EXPECT_NE(md.find("| 1 confirm | `iiiiiiiiiiii` | commit 8 | like bad | B slower: B/A 0.9500 "
                    "[0.9400, 0.9600] at 99.00 %, 4 pairs, band 1.00 % |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("slow \\| path"), std::string::npos) << md;
  auto text = RenderBisectText(r, *s, plan);
  EXPECT_NE(text.find("step  3 step    gggggggggggg  undecided  inconclusive"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace vouch::bisect
