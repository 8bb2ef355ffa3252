// Opens any supported trace by its content (not its name): SQLite files are Nsight Systems
// exports, a file whose first line is a vouch GPU trace header is read by the CUPTI tracer's
// reader, everything else is read as a Kineto JSON trace (plain or gzip).
#pragma once

#include <string>

#include "trace/model.h"
#include "trace/summary.h"
#include "util/result.h"

namespace vouch::trace {

Result<Trace> ReadTrace(const std::string& path);
// Summarize(ReadTrace(PATH), OPT), the same summary and errors; an Nsight Systems export's
// whole-trace summary is folded while it is read (SummarizeNsysSqlite), and a Kineto trace's
// likewise (SummarizeKinetoTrace).
Result<Summary> SummarizeTrace(const std::string& path, const SummaryOptions& opt);

}  // namespace vouch::trace
