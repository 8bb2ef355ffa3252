// WriteFileAtomic (util/fs.h) with the content given piece by piece: a long record is written
// without being held whole in memory.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "util/fs.h"

namespace vouch {

// PRODUCE calls its argument with each piece; an error from PRODUCE (or from a write) leaves
// PATH as it was.
using ChunkSink = std::function<Status(std::string_view)>;
Status WriteFileAtomic(const std::string& path,
                       const std::function<Status(const ChunkSink&)>& produce,
                       FileSync sync = FileSync::kFsync);

}  // namespace vouch
