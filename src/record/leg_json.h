// A leg of a record document read back (vouch ab --from replays the protocol over them).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "record/leg_runner.h"
#include "util/result.h"

namespace vouch {

// One leg of a record document back as the LegRecord it was written from (its result only as
// far as exit code, time-out and wall time); an error naming WHERE when it is malformed.
Result<LegRecord> LegRecordFromJson(const nlohmann::json& leg, const std::string& where);

}  // namespace vouch
