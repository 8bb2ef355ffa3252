// Reads an Nsight Systems SQLite export (nsys export --type sqlite) into the trace model.
#pragma once

#include <string>

#include "trace/model.h"
#include "util/result.h"

namespace vouch::trace {

// Uses CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME, NVTX_EVENTS, StringIds and
// TARGET_INFO_GPU, whichever exist, after checking their columns (PRAGMA table_info): tables
// are created lazily by nsys, so a report without GPU work simply lacks them. A file that
// is not SQLite, or that has none of these tables, is an error naming the file.
Result<Trace> ReadNsysSqlite(const std::string& path);

}  // namespace vouch::trace
