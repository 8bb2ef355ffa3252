#include "gate/advice.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "gate/noise.h"

namespace vouch {

std::string InconclusiveAdvice(double sd_log, int trials_used, int legs_used, double est_bad_pct,
                               double threshold_pct, double alpha) {
  // The distance from the estimate to the threshold, as a log change, given to the baseline's
  // own count as the threshold it would plan for (log1p(expm1(d)) = d).
  const double distance =
      std::fabs(std::log1p(threshold_pct / 100.0) - std::log1p(est_bad_pct / 100.0));
  std::optional<int> need, unchanged;
  if (sd_log > 0) {
    if (distance > 0) need = TrialsToResolve(sd_log, 100 * std::expm1(distance), alpha);
    unchanged = TrialsToResolve(sd_log, threshold_pct, alpha);
  }
  const std::string had =
      fmt::format("this gate had {} trial{} and {} leg{}", trials_used, trials_used == 1 ? "" : "s",
                  legs_used, legs_used == 1 ? "" : "s");
  const std::string if_unchanged =
      unchanged ? fmt::format(
                      "; were nothing changed, {} of each would (vouch baseline's advice "
                      "at this spread)",
                      *unchanged)
                : std::string();
  if (!need)
    return fmt::format(
        "; the change sits {:.2f} % from the threshold at {:.2f} % noise (log sd of the "
        "baseline's trials): no practical number of trials and legs resolves it ({}); quiet the "
        "noise or move the threshold{}",
        100 * distance, 100 * sd_log, had, if_unchanged);
  if (*need <= std::max(trials_used, legs_used))
    return fmt::format(
        "; a few more baseline trials and gate legs than these would likely resolve it ({}){}", had,
        if_unchanged);
  return fmt::format(
      "; about {} baseline trials and {} gate legs in all would likely resolve it ({}){}", *need,
      *need, had, if_unchanged);
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
