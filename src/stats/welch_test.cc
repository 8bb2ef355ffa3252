#include "stats/welch.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vouch {
namespace {

TEST(Welch, MatchesTheHandComputation) {
  // x: n 5, var 4; y: n 10, var 9 (Welch-Satterthwaite by hand: 1.7^2 / (0.16 + 0.09) = 11.56).
  SampleMoments x{10, 4, 5, 4}, y{13, 9, 10, 9};
  auto w = Welch(x, y);
  const double qx = 4.0 / 5, qy = 9.0 / 10;
  EXPECT_DOUBLE_EQ(w.diff, 3);
  EXPECT_DOUBLE_EQ(w.se, std::sqrt(qx + qy));
  EXPECT_NEAR(w.df, (qx + qy) * (qx + qy) / (qx * qx / 4 + qy * qy / 9), 1e-12);
  EXPECT_NEAR(w.df, 11.56, 1e-12);
  EXPECT_DOUBLE_EQ(w.t, 3 / std::sqrt(qx + qy));
  SampleMoments flat{1, 0, 3, 2};
  EXPECT_EQ(Welch(flat, flat).df, 0);
}

TEST(Welch, TQuantileAndTail) {
  EXPECT_NEAR(StudentTQuantile(3, 0.975), 3.182446, 1e-6);
  EXPECT_NEAR(StudentTQuantile(1, 0.975), 12.7062, 1e-4);
  EXPECT_NEAR(StudentTUpper(3, 3.182446), 0.025, 1e-7);
  EXPECT_NEAR(StudentTUpper(10, 0), 0.5, 1e-12);
}

TEST(Welch, PValues) {
  auto w = Welch({0, 4, 5, 4}, {1.7, 9, 10, 9});  // t = 1.7 / sqrt(4/5 + 9/10) = 1.30
  EXPECT_NEAR(WelchUpperP(w), StudentTUpper(w.df, w.t), 1e-15);
  EXPECT_NEAR(WelchTwoSidedP(w), 2 * WelchUpperP(w), 1e-12);
  EXPECT_GT(WelchUpperP(w), 0.0);
  EXPECT_LT(WelchUpperP(w), 0.5);
  WelchT flat{0, 0, 0, 0};
  EXPECT_EQ(WelchTwoSidedP(flat), 1.0);
  WelchT apart{2.0, 0, 0, 0};
  EXPECT_EQ(WelchTwoSidedP(apart), 0.0);
}

}  // namespace
}  // namespace vouch
