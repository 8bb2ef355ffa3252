// How many trials and legs an undecided gate would need, in words that fit the case (issue 22
// item 9): never "about 2 trials" after 5 were used.
#pragma once

#include <string>

namespace vouch {

// For an inconclusive row: the change's interval straddles the fail threshold. At log standard
// deviation SD_LOG, the smallest K (2..1000) for which K baseline trials and K gate legs would
// likely put the interval on one side, given the change estimated now (EST_BAD_PCT, bad
// direction) and THRESHOLD_PCT: "; about K baseline trials and K gate legs in all would resolve
// it (this gate had M and N)". When the estimate sits on the threshold and no practical K does,
// it says that instead. ALPHA one-sided.
std::string InconclusiveAdvice(double sd_log, int trials_used, int legs_used, double est_bad_pct,
                               double threshold_pct, double alpha);

// For a baseline too noisy for its threshold: NEED from TrialsToResolve (trials and gate legs
// alike), TRIALS the baseline's count, GATE_LEGS the gate's default legs.
std::string BaselineTrialsAdvice(int need, int trials, int gate_legs);

}  // namespace vouch
