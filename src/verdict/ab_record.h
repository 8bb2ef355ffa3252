// What an A/B record keeps of its plan and rules (extra.ab_plan), written before the first leg
// so that `vouch ab --from RECORD` and the fleet replay the protocol and the verdict's rules
// exactly as the live run applied them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ab/protocol.h"
#include "util/result.h"
#include "verdict/ab.h"

namespace vouch::verdict {

// A_ENV and B_ENV: the arms' own K=V as given (a secret's value redacted), for the arms line.
nlohmann::json AbPlanJson(const AbPlan& plan, const AbRules& rules,
                          const std::vector<std::string>& a_env,
                          const std::vector<std::string>& b_env);
struct RecordedAbPlan {
  AbPlan plan;
  AbRules rules;
  std::vector<std::string> a_env, b_env;
};
// REC: a record document (ReadRecordJson); WHERE names it in errors. A record written before
// the rules were kept (no "allow_modes") gets the default rules: modes refused.
Result<RecordedAbPlan> AbPlanFromRecord(const nlohmann::json& rec, const std::string& where);

}  // namespace vouch::verdict
