#include "gate/advice.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>

#include "gate/noise.h"

namespace vouch {

std::string InconclusiveAdvice(double sd_log, int trials_used, int legs_used, double est_bad_pct,
                               double threshold_pct, double alpha) {
  // The distance from the estimate to the threshold, as a log change; the interval's half
  // width at K and K values, with the gate's resolution power (gate/noise.h), must be under it.
  const double distance =
      std::fabs(std::log1p(threshold_pct / 100.0) - std::log1p(est_bad_pct / 100.0));
  const double z =
      boost::math::quantile(boost::math::normal_distribution<double>(), kGateResolutionPower);
  std::optional<int> need;
  if (sd_log > 0 && distance > 0)
    for (int k = 2; k <= 1000 && !need; ++k) {
      const double t = boost::math::quantile(
          boost::math::students_t_distribution<double>(2.0 * k - 2), 1 - alpha);
      if ((t + z) * sd_log * std::sqrt(2.0 / k) <= distance) need = k;
    }
  const std::string had =
      fmt::format("this gate had {} trial{} and {} leg{}", trials_used, trials_used == 1 ? "" : "s",
                  legs_used, legs_used == 1 ? "" : "s");
  if (!need)
    return fmt::format(
        "; the change sits {:.2f} % from the threshold at {:.2f} % noise (log sd): no practical "
        "number of trials and legs resolves it ({}); quiet the noise or move the threshold",
        100 * distance, 100 * sd_log, had);
  if (*need <= std::max(trials_used, legs_used))
    return fmt::format(
        "; a few more baseline trials and gate legs than these would likely resolve it ({})", had);
  return fmt::format(
      "; about {} baseline trials and {} gate legs in all would likely resolve it ({})", *need,
      *need, had);
}

std::string BaselineTrialsAdvice(int need, int trials, int gate_legs) {
  if (need <= trials)
    return fmt::format(
        "its {} trials are enough with a gate of {} legs or more (gate --reps {}); the default {} "
        "is too few",
        trials, need, need, gate_legs);
  return fmt::format(
      "about {} trials in all (this baseline has {}) and gate --reps {} would resolve it", need,
      trials, need);
}

}  // namespace vouch
