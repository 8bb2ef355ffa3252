// Reads a PyTorch profiler (Kineto) Chrome trace, plain JSON or gzip, into the trace model.
#pragma once

#include <string>

#include "trace/model.h"
#include "trace/summary.h"
#include "util/result.h"

namespace vouch::trace {

struct WholeFold;  // whole_fold.h

// Keeps kernels, copies, sets, CUDA runtime/driver calls and user annotations (CPU and
// GPU). cpu_op, flows and other known categories are counted in skipped_by_category;
// unknown categories in unknown_categories. A truncated or malformed file is an error
// naming the file and the byte offset.
Result<Trace> ReadKinetoTrace(const std::string& path);

// Summarize(ReadKinetoTrace(PATH), OPT), the same summary and errors; without a window the
// kernels, copies, sets and API calls are folded while they are read, not kept (WholeFold).
Result<Summary> SummarizeKinetoTrace(const std::string& path, const SummaryOptions& opt);

// The same over JSON text already in memory (tests, benchmarks). LABEL names it in errors.
// BLOCK_BYTES (0: the default 1 MiB) is the read block; tests make it tiny to cross
// block boundaries everywhere.
Result<Trace> ParseKinetoJson(std::string_view json, const std::string& label,
                              std::size_t block_bytes = 0, WholeFold* fold = nullptr);
// SummarizeKinetoTrace without a window over JSON text in memory (the fuzzer checks it against
// Summarize over ParseKinetoJson).
Result<Summary> SummarizeKinetoJson(std::string_view json, const std::string& label,
                                    std::size_t block_bytes = 0);

// Parses a JSON number of microseconds ("5090020294577.553") into integer nanoseconds
// exactly (a double would lose the last digits of a 16-digit timestamp). False if it is
// not a number.
bool ParseMicrosToNs(std::string_view text, std::int64_t* ns);
// ParseMicrosToNs from the first byte after the integer part: TEXT[I...] is the rest of the
// token (fraction, exponent, trailing JSON space), WHOLE the integer part's value (at most 15
// digits), NEG its sign. For a reader that took the integer part faster itself.
bool MicrosTailToNs(std::string_view text, std::size_t i, std::int64_t whole, bool neg,
                    std::int64_t* ns);

}  // namespace vouch::trace
