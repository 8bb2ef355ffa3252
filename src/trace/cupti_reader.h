// Reads the JSON lines of vouch's CUPTI tracer (libvouch_cupti.so, docs/gpu-trace.md) into the
// trace model: kernels (with their graph ids), copies, sets, launch API calls and NVTX ranges
// (host ranges, on the thread that opened them), on CLOCK_REALTIME nanoseconds.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trace/model.h"
#include "util/result.h"

namespace vouch::trace {

// True when TEXT (the start of a file) is a vouch-cupti trace's header line.
bool LooksLikeCuptiTrace(std::string_view text);

// The first line must be the header (format vouch-gpu-trace, version 1, ok true). Every later
// line is one record; a malformed line, a record missing a field, an end before its start or a
// name id used before it is defined is an error naming the file and line. A file without the
// footer is partial (the process did not exit cleanly): it is read, its last line may be
// truncated (dropped), and trace.partial and a warning say so. Dropped records, a fatal signal
// and NVTX ranges left open are warnings. Launch calls of the driver made inside a runtime launch
// on the same thread are not counted as launches twice.
Result<Trace> ReadCuptiTrace(const std::string& path);
Result<Trace> ParseCuptiTrace(std::string_view text, const std::string& label);

// Several processes' traces (one file each) as one trace: names re-interned, pids kept.
Trace MergeTraces(std::vector<Trace> traces, const std::string& label);

}  // namespace vouch::trace
