// Reference values computed by hand (the textbook formulas in Python, no library).
#include "fleet/meta.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace vouch {
namespace {

std::vector<Stratum> Four() {
  std::vector<double> y = {0.05, 0.048, 0.052, 0.01}, v = {1e-5, 2e-5, 1.5e-5, 1e-5};
  std::vector<Stratum> s;
  for (size_t i = 0; i < y.size(); ++i) s.push_back({"n" + std::to_string(i + 1), y[i], v[i], 8});
  return s;
}

TEST(FleetMeta, DerSimonianLairdMatchesTheFormulas) {
  auto s = Four();
  auto r = RandomEffects(s, 0.95);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->k, 4u);
  EXPECT_NEAR(r->fixed_mu_log, 0.0374736842, 1e-9);
  EXPECT_NEAR(r->q, 110.778947368, 1e-6);
  EXPECT_NEAR(r->tau2, 0.000465409090909, 1e-12);
  EXPECT_NEAR(r->mu_log, 0.0399270084024, 1e-10);
  EXPECT_NEAR(r->i2, 0.97291904219, 1e-9);
  EXPECT_LT(r->q_p, 1e-20);
  // HKSJ: se 0.0100605556, t(3) = 3.18244631; wider than DL's 1.96 * 0.0109444435.
  EXPECT_EQ(r->interval_method, "HKSJ t(k-1)");
  EXPECT_NEAR(r->se_log, 0.0100605556342, 1e-10);
  EXPECT_NEAR(r->lo_log, 0.0399270084024 - 3.18244630528 * 0.0100605556342, 1e-8);
  EXPECT_NEAR(r->hi_log, 0.0399270084024 + 3.18244630528 * 0.0100605556342, 1e-8);
}

TEST(FleetMeta, TwoAgreeingNodesPoolToTheFixedEffect) {
  std::vector<Stratum> s = {{"a", 0.05, 1e-4, 4}, {"b", 0.03, 1e-4, 4}};
  auto r = RandomEffects(s, 0.95);
  ASSERT_TRUE(r);
  EXPECT_NEAR(r->q, 2.0, 1e-12);
  EXPECT_NEAR(r->q_p, 0.157299207050, 1e-9);  // erfc(sqrt(Q/2)), chi^2 with 1 df
  EXPECT_NEAR(r->tau2, 0.01 / 100, 1e-12);    // (Q - 1) / (sum w - sum w^2 / sum w)
  EXPECT_NEAR(r->i2, 0.5, 1e-12);
  EXPECT_NEAR(r->mu_log, 0.04, 1e-12);
}

TEST(FleetMeta, TooFewOrBadStrataGiveNothing) {
  std::vector<Stratum> one = {{"a", 0.05, 1e-4, 4}};
  EXPECT_FALSE(RandomEffects(one, 0.95));
  std::vector<Stratum> nan = {{"a", NAN, 1e-4, 4}, {"b", 0.1, 1e-4, 4}};
  EXPECT_FALSE(RandomEffects(nan, 0.95));
  std::vector<double> d1 = {0.1};
  EXPECT_FALSE(MakeStratum("x", d1));
  std::vector<double> same = {0.1, 0.1, 0.1};
  auto st = MakeStratum("x", same);
  ASSERT_TRUE(st);
  EXPECT_DOUBLE_EQ(st->var_of_mean, kMinStratumVariance);  // floored, never a zero weight
  std::vector<double> d = {0.01, 0.03};
  auto s2 = MakeStratum("y", d);
  ASSERT_TRUE(s2);
  EXPECT_NEAR(s2->mean_log, 0.02, 1e-15);
  EXPECT_NEAR(s2->var_of_mean, 0.0002 / 2, 1e-15);
}

TEST(FleetMeta, LeaveOneOutNamesTheNodeThatDisagrees) {
  auto s = Four();
  auto o = LeaveOneOut(s, 0.05, std::log(1.01));
  ASSERT_EQ(o.size(), 4u);
  EXPECT_FALSE(o[0].outlier);
  EXPECT_NEAR(o[0].z, 0.463039255, 1e-6);
  EXPECT_NEAR(o[0].p_bonferroni, 1.0, 1e-12);
  EXPECT_FALSE(o[1].outlier);
  EXPECT_FALSE(o[2].outlier);
  EXPECT_TRUE(o[3].outlier);
  EXPECT_EQ(o[3].name, "n4");
  EXPECT_NEAR(o[3].others_mu_log, 0.0501538461538, 1e-10);
  EXPECT_NEAR(o[3].z, -10.5032094574, 1e-6);
  // Inside the band it is not a disagreement, however clear.
  auto wide = LeaveOneOut(s, 0.05, std::log(1.05));
  EXPECT_FALSE(wide[3].outlier);
  std::vector<Stratum> two(s.begin(), s.begin() + 2);
  EXPECT_TRUE(LeaveOneOut(two, 0.05, 0).empty());
}

// The leave-one-out test pools the others in place (no copy of them, no interval): the same
// numbers as RandomEffects over a copy of the others, bit for bit, at many nodes.
TEST(FleetMeta, LeaveOneOutPoolsTheOthersAsRandomEffectsDoes) {
  std::vector<Stratum> s;
  for (int i = 0; i < 60; ++i)
    s.push_back({"n" + std::to_string(i), 0.02 + 0.001 * std::sin(i) + (i == 7 ? 0.05 : 0),
                 1e-6 * (1 + i % 5), 8});
  auto o = LeaveOneOut(s, 0.05, std::log(1.01));
  ASSERT_EQ(o.size(), s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    std::vector<Stratum> others = s;
    others.erase(others.begin() + static_cast<long>(i));
    auto m = RandomEffects(others, 0.95);
    ASSERT_TRUE(m);
    EXPECT_EQ(o[i].others_mu_log, m->mu_log) << i;
    double sws = 0;
    for (const auto& x : others) sws += 1 / (x.var_of_mean + m->tau2);
    EXPECT_EQ(o[i].z, o[i].diff_log / std::sqrt(s[i].var_of_mean + m->tau2 + 1 / sws)) << i;
    EXPECT_EQ(o[i].outlier, i == 7) << i;
  }
}

TEST(FleetMeta, PooledVarianceFloorsALuckyNode) {
  // s^2: 4e-6 (n 4), 1e-8 (n 2, lucky), 9e-6 (n 4): pooled (3*4e-6 + 1e-8 + 3*9e-6) / 7.
  std::vector<Stratum> s = {
      {"a", 0.05, 4e-6 / 4, 4}, {"b", 0.05, 1e-8 / 2, 2}, {"c", 0.05, 9e-6 / 4, 4}};
  FloorAtPooledVariance(s);
  const double pooled = (3 * 4e-6 + 1e-8 + 3 * 9e-6) / 7;
  EXPECT_NEAR(s[0].var_of_mean, pooled / 4, 1e-15);  // below the pool: raised
  EXPECT_NEAR(s[1].var_of_mean, pooled / 2, 1e-15);
  EXPECT_NEAR(s[2].var_of_mean, 9e-6 / 4, 1e-15);  // noisier than the pool: its own
}

}  // namespace
}  // namespace vouch
