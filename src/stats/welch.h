// Welch's unequal-variance t (Welch 1947, Biometrika 34:28-35), with the Welch-Satterthwaite
// degrees of freedom, and Student's t quantile and tail: the one place the gate, the
// sequential gate's calibration and the history's step search take them from.
#pragma once

namespace vouch {

// One sample's moments: mean, variance, size, and the degrees of freedom of the variance
// (n - 1, or fewer when it comes from a first stage alone: Stein's design).
struct SampleMoments {
  double mean = 0, var = 0, n = 0, var_df = 0;
};

struct WelchT {
  double diff = 0;  // y.mean - x.mean
  double se = 0;    // sqrt(x.var / x.n + y.var / y.n)
  double df = 0;    // Welch-Satterthwaite; 0 when se is 0
  double t = 0;     // diff / se; 0 when se is 0
};

// Y against X. Both variances need var_df > 0 for df to be defined.
WelchT Welch(const SampleMoments& x, const SampleMoments& y);

// Its p values. Upper: P(T > t), the one-sided test that Y's mean is above X's. Two-sided:
// 2 P(T > |t|); with no spread on either side it is 1 when the means are equal and 0 when they
// differ, and 0 when the statistic is not finite (a difference no noise explains).
double WelchUpperP(const WelchT& w);
double WelchTwoSidedP(const WelchT& w);

// Student's t: the quantile at P with DF degrees of freedom, and the upper tail P(T > t).
double StudentTQuantile(double df, double p);
double StudentTUpper(double df, double t);

}  // namespace vouch
