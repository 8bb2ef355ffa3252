#include "stats/welch.h"

#include <boost/math/distributions/students_t.hpp>
#include <cmath>

namespace vouch {
namespace {

// In double, not Boost's default long double: the gate's calibration and its simulation call
// these millions of times and spent 60 % of their time in long double pow and exp (perf); the
// results agree to double's precision.
using DoublePolicy = boost::math::policies::policy<boost::math::policies::promote_double<false>>;
using StudentT = boost::math::students_t_distribution<double, DoublePolicy>;

}  // namespace

WelchT Welch(const SampleMoments& x, const SampleMoments& y) {
  WelchT w;
  const double qx = x.var / x.n, qy = y.var / y.n;
  w.diff = y.mean - x.mean;
  w.se = std::sqrt(qx + qy);
  if (w.se > 0) {
    w.df = (qx + qy) * (qx + qy) / (qx * qx / x.var_df + qy * qy / y.var_df);
    w.t = w.diff / w.se;
  }
  return w;
}

double StudentTQuantile(double df, double p) { return boost::math::quantile(StudentT(df), p); }

double StudentTUpper(double df, double t) {
  return boost::math::cdf(boost::math::complement(StudentT(df), t));
}

double WelchUpperP(const WelchT& w) { return StudentTUpper(w.df, w.t); }

double WelchTwoSidedP(const WelchT& w) {
  if (!(w.se > 0)) return w.diff == 0 ? 1.0 : 0.0;
  const double t = std::fabs(w.t);
  if (!std::isfinite(t) || !std::isfinite(w.df) || w.df <= 0) return 0.0;
  return 2 * StudentTUpper(w.df, t);
}

}  // namespace vouch
