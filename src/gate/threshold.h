// A gate threshold as the gate tests it and as the output shows it: X % is a factor of 1 + X/100
// in the bad direction either way (symmetric on the log scale, issue 34).
#pragma once

#include <optional>
#include <string>

#include "gate/baseline.h"

namespace vouch {

// A change of PCT percent as a log factor in the bad direction (-inf for a factor <= 0 that is
// better).
double BadLog(double pct, Better better);

// The log factor of a threshold of THRESHOLD_PCT percent, with kThresholdSlackPct.
double ThresholdLog(double threshold_pct);

// The thresholds of M in its natural sense ("fail < -2.91% (1/1.03), warn < -0.99% (1/1.01)",
// "fail > +3%", "count: warn > +0, fail > +2"); "none" when it has none.
std::string ThresholdText(const BaselineMetric& m, std::optional<double> fail_count);

}  // namespace vouch
