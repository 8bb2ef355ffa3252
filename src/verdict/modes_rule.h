// Modes in an A/B, ruled on once for every way of asking (vouch ab, ab --from, fleet ab).
//
// Each leg is one process, and a process that picked a mode (26 or 33 tok/s per spawn) keeps
// it for its life: a median or mean over two modes is a number no process ran at. So, when an
// arm's legs form two modes (stats/modes.h) and the caller did not allow modes:
//   * where the arms do not overlap at all (every leg of B beyond every leg of A) by more than
//     the noise band, the direction is decided by rank alone (stats/rank.h: exact Mann-Whitney
//     at U = 0, p = 2 / C(m + n, m), at most 1 - confidence): no average of the modes is used;
//   * otherwise the verdict is refused.
// When the tracer labelled the legs (their kernel mix per range instance), the ruling says
// which mixes each arm ran: two kernel mixes in one arm are the modes' likely cause.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "metrics/metric.h"
#include "stats/ab_stats.h"

namespace vouch::verdict {

// One arm's valid measured legs: the headline's values and, per value, the leg's kernel-mix
// label ("" when the leg was not traced); MIXES may be empty.
struct ArmLegValues {
  std::string name;
  std::string unit;
  std::vector<double> values;
  std::vector<std::string> mixes;
};

struct ModesRuling {
  std::vector<std::string> found;  // "decode.tok_s: arm A's legs show two modes: ..."
  std::vector<std::string> mixes;  // "arm A ran 2 kernel mixes: ..." (traced legs only)
  bool allowed = false;            // modes found and allowed: the verdict stands, with words
  bool by_rank = false;            // the direction was decided by rank
  bool refused = false;            // modes found, not allowed, not decidable by rank
  AbVerdict verdict = AbVerdict::kRefused;  // when by_rank
  std::string rank_text;                    // the rank test, in words (by_rank or not)
  bool any() const { return !found.empty(); }
  nlohmann::json ToJson() const;
};

// HEADLINE names the metric in the words; BAND_LOG is the noise band's half width; WHAT is
// what --allow-modes lets the caller do ("compare", "run the fleet").
ModesRuling RuleOnModes(const std::string& headline, const ArmLegValues& a, const ArmLegValues& b,
                        Better better, double band_log, double confidence, bool allow_modes,
                        std::string_view what);

// The ruling applied to DECISION: a refusal or a rank verdict first among the reasons; an
// allowed one as notes. A decision already refused stays refused (the modes are said).
void ApplyModesRuling(const ModesRuling& r, AbDecision& decision);

// What refusing over modes means, said once after the modes found.
std::string ModesRefusal(std::string_view what);

}  // namespace vouch::verdict
