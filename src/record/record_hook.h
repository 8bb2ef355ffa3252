// A hook on WriteRecord (record/record.h), apart from it so that few files depend on it.
#pragma once

#include <functional>
#include <string>

namespace vouch {

// Called with the record's path after every WriteRecord that succeeded: the fleet worker
// seals each version of a node's record as it is written (fleet/trust.h). Set it with no
// record being written; an empty function removes it.
void SetRecordWrittenHook(std::function<void(const std::string& path)> hook);

}  // namespace vouch
