// Reads an Nsight Systems SQLite export (nsys export --type sqlite) into the trace model.
#pragma once

#include <cstdint>
#include <string>

#include "trace/model.h"
#include "trace/summary.h"
#include "util/result.h"

namespace vouch::trace {

// Uses CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME, NVTX_EVENTS, StringIds and
// TARGET_INFO_GPU, whichever exist, after checking their columns (PRAGMA table_info): tables
// are created lazily by nsys, so a report without GPU work simply lacks them. A file that
// is not SQLite, or that has none of these tables, is an error naming the file.
//
// The file is hostile: it is opened once, checked (a regular file of bounded size) and SQLite
// reads that descriptor, read-only and immutable (sqlite_fd.h); only its plain tables are read (a
// view or virtual table under one of those names is an error: a recursive view ran for ever),
// and every statement runs under one SQLite instruction budget, FIXED + PER_BYTE x the file's
// size (reading a real export takes under one instruction per byte); past it, an error names
// the file.
struct NsysLimits {
  std::uint64_t budget_fixed = 20'000'000;
  std::uint64_t budget_per_byte = 64;
};
Result<Trace> ReadNsysSqlite(const std::string& path, const NsysLimits& limits = {});
// Summarize(ReadNsysSqlite(PATH), OPT): the same summary and errors. Without a window the
// summary is folded while the rows are read, and the GPU ops and API calls are not kept.
Result<Summary> SummarizeNsysSqlite(const std::string& path, const SummaryOptions& opt,
                                    const NsysLimits& limits = {});

}  // namespace vouch::trace
