#include "verdict/modes_rule.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vouch::verdict {
namespace {

ArmLegValues Arm(const char* name, std::vector<double> v, std::vector<std::string> mixes = {}) {
  return {name, "tok/s", std::move(v), std::move(mixes)};
}

const double kBand = std::log(1.01);

TEST(ModesRule, AnAaWithTwoModesThatOverlapIsRefusedWithNoDirection) {
  auto a = Arm("A", {100, 120, 100, 120, 100, 120});
  auto b = Arm("B", {120, 100, 120, 100, 120, 100});
  auto r = RuleOnModes("tok_s", a, b, Better::kHigher, kBand, 0.95, false, "compare");
  ASSERT_EQ(r.found.size(), 2u);
  EXPECT_TRUE(r.refused);
  EXPECT_FALSE(r.by_rank);
  AbDecision d;
  d.verdict = AbVerdict::kBFaster;  // what a median over the modes said
  ApplyModesRuling(r, d);
  EXPECT_EQ(d.verdict, AbVerdict::kRefused);
  for (const auto& reason : d.reasons) {
    EXPECT_EQ(reason.find("faster"), std::string::npos) << reason;
    EXPECT_EQ(reason.find("slower"), std::string::npos) << reason;
  }
  EXPECT_NE(d.reasons.front().find("refused: tok_s: arm A's legs show two modes"),
            std::string::npos);
}

TEST(ModesRule, ArmsApartAreDecidedByRankWithTheExactP) {
  // Arm A ran two kernel mixes (two modes); every B leg is below every A leg.
  auto a = Arm(
      "A", {100, 120, 100, 120, 100, 120},
      {"120 kernels", "122 kernels", "120 kernels", "122 kernels", "120 kernels", "122 kernels"});
  auto b = Arm("B", {90, 91, 90.5, 89, 90, 91.5});
  auto r = RuleOnModes("tok_s", a, b, Better::kHigher, kBand, 0.95, false, "compare");
  ASSERT_TRUE(r.by_rank);
  EXPECT_EQ(r.verdict, AbVerdict::kBSlower);
  EXPECT_NE(r.rank_text.find("p = 2 / C(12, 6) = 0.00216"), std::string::npos) << r.rank_text;
  ASSERT_EQ(r.mixes.size(), 1u);
  EXPECT_EQ(r.mixes[0], "arm A ran 2 kernel mixes: 120 kernels (3 legs), 122 kernels (3 legs)");
  AbDecision d;
  d.verdict = AbVerdict::kInconclusive;
  ApplyModesRuling(r, d);
  EXPECT_EQ(d.verdict, AbVerdict::kBSlower);
  // Lower is better: the same values mean B faster.
  auto low = RuleOnModes("ms", a, b, Better::kLower, kBand, 0.95, false, "compare");
  ASSERT_TRUE(low.by_rank);
  EXPECT_EQ(low.verdict, AbVerdict::kBFaster);
}

TEST(ModesRule, ApartButWithinTheBandOrTooFewLegsIsRefused) {
  auto a = Arm("A", {100, 100.2, 120, 120.1});
  auto b = Arm("B", {120.2, 120.3, 120.4, 120.5});  // above A, but 0.08 % from its top leg
  auto r = RuleOnModes("tok_s", a, b, Better::kHigher, kBand, 0.95, false, "compare");
  EXPECT_TRUE(r.refused);
  EXPECT_NE(r.rank_text.find("not decisive"), std::string::npos) << r.rank_text;
  // 2 + 2 legs apart: p = 2 / C(4, 2) = 0.33, never decisive at 95 %.
  auto a2 = Arm("A", {100, 100, 120, 120});
  auto b2 = Arm("B", {150, 151});
  auto r2 = RuleOnModes("tok_s", a2, b2, Better::kHigher, kBand, 0.95, false, "compare");
  EXPECT_TRUE(r2.refused);
}

TEST(ModesRule, AllowedModesKeepTheVerdictAndAlreadyRefusedStaysRefused) {
  auto a = Arm("A", {100, 120, 100, 120, 100, 120});
  auto b = Arm("B", {120, 100, 120, 100, 120, 100});
  auto r = RuleOnModes("tok_s", a, b, Better::kHigher, kBand, 0.95, true, "compare");
  EXPECT_TRUE(r.allowed);
  AbDecision d;
  d.verdict = AbVerdict::kNoChange;
  ApplyModesRuling(r, d);
  EXPECT_EQ(d.verdict, AbVerdict::kNoChange);
  EXPECT_EQ(d.reasons.front().rfind("modes allowed: ", 0), 0u);
  auto apart = RuleOnModes("tok_s", a, Arm("B", {50, 51, 50, 51, 50, 51}), Better::kHigher, kBand,
                           0.95, false, "compare");
  ASSERT_TRUE(apart.by_rank);
  AbDecision refused;
  refused.verdict = AbVerdict::kRefused;  // refused before (GPU identity, too few pairs)
  ApplyModesRuling(apart, refused);
  EXPECT_EQ(refused.verdict, AbVerdict::kRefused);
}

TEST(ModesRule, NoModesNoRuling) {
  auto r = RuleOnModes("tok_s", Arm("A", {100, 101, 99, 100}), Arm("B", {90, 91, 89, 90}),
                       Better::kHigher, kBand, 0.95, false, "compare");
  EXPECT_FALSE(r.any());
  EXPECT_TRUE(r.ToJson().is_null());
}

}  // namespace
}  // namespace vouch::verdict
