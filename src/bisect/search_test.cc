#include "bisect/search.h"

#include <gtest/gtest.h>

#include <functional>

namespace vouch::bisect {
namespace {

// Runs a search over N commits whose truth is TRUTH(i), skipping those in SKIP; returns it.
Search Drive(std::size_t n, const std::function<StepVerdict(std::size_t)>& truth,
             std::vector<std::size_t>* tested = nullptr) {
  Search s(n);
  while (auto next = s.Next()) {
    if (tested) tested->push_back(*next);
    EXPECT_TRUE(s.Feed(*next, truth(*next)).ok());
  }
  return s;
}

TEST(BisectSearch, FindsTheFirstBadCommitInCeilLog2Steps) {
  for (std::size_t n : {2u, 3u, 5u, 17u, 65u, 100u}) {
    for (std::size_t first_bad = 1; first_bad < n; ++first_bad) {
      auto s = Drive(n, [&](std::size_t i) {
        return i >= first_bad ? StepVerdict::kLikeBad : StepVerdict::kLikeGood;
      });
      ASSERT_EQ(s.state(), Search::State::kFound) << n << " " << first_bad;
      EXPECT_EQ(s.first_bad(), first_bad);
      EXPECT_EQ(s.last_good(), first_bad - 1);
      auto plan = PlanFamily(n, 0.05);
      ASSERT_TRUE(plan);
      EXPECT_LE(s.decisions(), plan->planned_decisions) << n << " " << first_bad;
      EXPECT_DOUBLE_EQ(FamilyBound(*plan, s.decisions()) <= 0.05 + 1e-12, true);
    }
  }
}

TEST(BisectSearch, PlansCeilLog2HalvingsPlusTheConfirmation) {
  EXPECT_EQ(PlanFamily(65, 0.05)->planned_decisions, 7u);  // 64 candidates: 6 + 1
  EXPECT_EQ(PlanFamily(64, 0.05)->planned_decisions, 7u);  // 63 candidates: 6 + 1
  EXPECT_EQ(PlanFamily(2, 0.05)->planned_decisions, 1u);   // only the confirmation
  EXPECT_NEAR(PlanFamily(65, 0.05)->per_step_alpha, 0.05 / 7, 1e-15);
  EXPECT_FALSE(PlanFamily(1, 0.05));
  EXPECT_FALSE(PlanFamily(10, 0));
  EXPECT_FALSE(PlanFamily(10, 1));
  EXPECT_DOUBLE_EQ(FamilyBound(*PlanFamily(65, 0.05), 9), 0.05 / 7 * 9);
  EXPECT_DOUBLE_EQ(FamilyBound(*PlanFamily(3, 0.5), 9), 1.0);
}

TEST(BisectSearch, SkippedCommitsAreSteppedAroundLikeGitBisectSkip) {
  // 9 commits, first bad 6; the middle (4) and 2 do not build.
  std::vector<std::size_t> tested;
  auto s = Drive(
      9,
      [](std::size_t i) {
        if (i == 4 || i == 2) return StepVerdict::kSkipped;
        return i >= 6 ? StepVerdict::kLikeBad : StepVerdict::kLikeGood;
      },
      &tested);
  ASSERT_EQ(s.state(), Search::State::kFound);
  EXPECT_EQ(s.first_bad(), 6u);
  EXPECT_EQ(s.skipped(), (std::set<std::size_t>{4}));
  // The confirmation (8), the middle 4 skipped, its nearest 3 (the lower first), then the
  // middles of 3..8 and 5..8.
  EXPECT_EQ(tested, (std::vector<std::size_t>{8, 4, 3, 5, 6}));
  EXPECT_EQ(s.steps(), 5u);
  EXPECT_EQ(s.decisions(), 4u);
}

TEST(BisectSearch, OnlySkippedLeftNamesTheRangeInDoubt) {
  // First bad 3; commits 2 and 3 are untestable: 1 good, 4 bad, 2-3 skipped: 2..4 in doubt.
  auto s = Drive(6, [](std::size_t i) {
    if (i == 2 || i == 3) return StepVerdict::kSkipped;
    return i >= 3 ? StepVerdict::kLikeBad : StepVerdict::kLikeGood;
  });
  EXPECT_EQ(s.state(), Search::State::kOnlySkipped);
  EXPECT_EQ(s.Doubt(), (std::vector<std::size_t>{2, 3, 4}));
  EXPECT_FALSE(s.Next());
}

TEST(BisectSearch, AnUndecidedStepStopsAndNamesTheRange) {
  Search s(17);
  ASSERT_TRUE(s.Feed(16, StepVerdict::kLikeBad).ok());
  ASSERT_EQ(*s.Next(), 8u);
  ASSERT_TRUE(s.Feed(8, StepVerdict::kLikeGood).ok());
  ASSERT_EQ(*s.Next(), 12u);
  ASSERT_TRUE(s.Feed(12, StepVerdict::kUndecided).ok());
  EXPECT_EQ(s.state(), Search::State::kUndecided);
  EXPECT_EQ(*s.undecided_at(), 12u);
  EXPECT_FALSE(s.Next());
  auto doubt = s.Doubt();
  EXPECT_EQ(doubt.front(), 9u);
  EXPECT_EQ(doubt.back(), 16u);
  EXPECT_EQ(s.decisions(), 3u);
  EXPECT_FALSE(s.Feed(10, StepVerdict::kLikeBad).ok());
}

TEST(BisectSearch, EndsNotApartStopsBeforeAnyInteriorCommit) {
  Search s(10);
  EXPECT_EQ(s.state(), Search::State::kConfirming);
  EXPECT_EQ(*s.Next(), 9u);
  EXPECT_FALSE(s.Feed(9, StepVerdict::kSkipped).ok()) << "the bad end cannot be skipped";
  ASSERT_TRUE(s.Feed(9, StepVerdict::kLikeGood).ok());
  EXPECT_EQ(s.state(), Search::State::kEndsNotApart);
  EXPECT_FALSE(s.Next());
}

TEST(BisectSearch, AResultForAnotherCommitThanNextIsRefused) {
  Search s(10);
  auto st = s.Feed(4, StepVerdict::kLikeBad);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message, "commit #4 was tested, but the search's next commit is #9");
  EXPECT_EQ(s.steps(), 0u);
}

TEST(BisectSearch, StepsAreClassifiedByTheMidpointBand) {
  EXPECT_EQ(ClassifyStep(AbVerdict::kNoChange), StepVerdict::kLikeGood);
  EXPECT_EQ(ClassifyStep(AbVerdict::kBSlower), StepVerdict::kLikeBad);
  EXPECT_EQ(ClassifyStep(AbVerdict::kBFaster), StepVerdict::kUndecided);
  EXPECT_EQ(ClassifyStep(AbVerdict::kInconclusive), StepVerdict::kUndecided);
  EXPECT_EQ(ClassifyStep(AbVerdict::kRefused), StepVerdict::kUndecided);
  EXPECT_EQ(ClassifyConfirmation(AbVerdict::kBSlower), StepVerdict::kLikeBad);
  EXPECT_EQ(ClassifyConfirmation(AbVerdict::kNoChange), StepVerdict::kUndecided);
  EXPECT_EQ(ClassifyConfirmation(AbVerdict::kBFaster), StepVerdict::kUndecided);
  EXPECT_NEAR(MidpointBand(-0.05).half_width_log, 0.025, 1e-15);
  EXPECT_NEAR(MidpointBand(0.05).half_width_log, 0.025, 1e-15);
  for (auto v : {StepVerdict::kLikeGood, StepVerdict::kLikeBad, StepVerdict::kUndecided,
                 StepVerdict::kSkipped})
    EXPECT_EQ(StepVerdictFromString(ToString(v)), v);
  EXPECT_FALSE(StepVerdictFromString("maybe"));
}

}  // namespace
}  // namespace vouch::bisect
