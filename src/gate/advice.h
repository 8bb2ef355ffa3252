// How many trials and legs an undecided gate would need, in words that fit the case (issue 22
// item 9): never "about 2 trials" after 5 were used.
#pragma once

#include <string>

namespace vouch {

// For an inconclusive row: the change's interval straddles the fail threshold. One rule with
// the baseline's warning (BaselineNoiseWarnings; issue 37: `baseline` advised 33 trials and
// `gate` 91 a minute later on the same data): both count with TrialsToResolve (gate/noise.h)
// at the baseline trials' log sd SD_LOG (the caller passes it) and ALPHA (one-sided). The
// baseline plans for a change at the threshold from no change; the gate also for the change it
// estimates now (EST_BAD_PCT, bad direction), which sits nearer the threshold and needs more.
// Both are said: "; about K baseline trials and K gate legs in all would likely resolve it
// (this gate had M and N); were nothing changed, J of each would (vouch baseline's advice at
// this spread)". When the estimate sits on the threshold no practical K does, and it says so.
std::string InconclusiveAdvice(double sd_log, int trials_used, int legs_used, double est_bad_pct,
                               double threshold_pct, double alpha);

// For a baseline too noisy for its threshold: NEED from TrialsToResolve (trials and gate legs
// alike), TRIALS the baseline's count, GATE_LEGS the gate's default legs.
std::string BaselineTrialsAdvice(int need, int trials, int gate_legs);

}  // namespace vouch
