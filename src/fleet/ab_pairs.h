// A node's A/B pairs, recomputed from its legs. The pairs a record lists (extra.verdict.pairs,
// extra.blocks_so_far.pairs) are a convenience a hand can edit; the legs are the evidence. As
// `gate RECORD` recomputes medians from the legs (RecordMedians, which this also runs to
// check each arm's legs against their windows and summary), the fleet forms the pairs again:
// the measured legs in the order they ran, four to a block (ABBA or BAAB), each pair judged
// by the protocol's rules (both legs valid, the headline in both, the pairing rules of
// PairWindows on the legs' own windows and policy) and its values read from the legs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/result.h"

namespace vouch {

struct RecomputedAbPairs {
  // Each pair as AbPairsJson writes it: a_leg, b_leg, valid, a, b, clock_a_mhz, clock_b_mhz,
  // reason (the values are the legs').
  nlohmann::json pairs = nlohmann::json::array();
  std::string better;              // the headline's direction as the legs report it
  std::vector<std::string> edits;  // where the recorded pairs disagree with the legs
};

// REC passed ReadRecordJson; RECORDED: the pairs the record lists; HEADLINE and BETTER: what the
// record says its headline and direction are; CROSS_BOOT: the node ran with
// --allow-cross-boot. An error (naming WHERE) when the legs cannot be paired: legs marked valid
// against their windows, measured legs that are not ABBA/BAAB blocks of the two arms, an
// unknown arm.
Result<RecomputedAbPairs> RecomputeAbPairs(const nlohmann::json& rec,
                                           const nlohmann::json& recorded,
                                           const std::string& headline, const std::string& better,
                                           bool cross_boot, const std::string& where);

}  // namespace vouch
