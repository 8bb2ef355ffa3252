// The figures of one window (counts, sums, the kernel union, launch gaps, the launch API's
// overlap with the kernels) over chosen GPU ops and API calls of a trace. Internal to
// summary.cc; the interval helpers are public through summary.h.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "trace/model.h"
#include "trace/summary.h"

namespace vouch::trace {

// Over the GPU ops and API calls of T at indices OPS and API (each in any order).
Figures ComputeFigures(const Trace& t, const std::vector<std::uint32_t>& ops,
                       const std::vector<std::uint32_t>& api, std::int64_t elapsed_ns);
// Over every GPU op and API call of T.
Figures ComputeFiguresAll(const Trace& t, std::int64_t elapsed_ns);
// The figures that need the intervals themselves (gaps, the kernel and launch API unions,
// their overlap) into F, from every kernel's and every launch API call's (start, end) in any
// order (sorted here when not in order): as ComputeFigures computes them.
void AddUnionFigures(std::vector<std::pair<std::int64_t, std::int64_t>>* kernels,
                     std::vector<std::pair<std::int64_t, std::int64_t>>* launches, Figures* f);

}  // namespace vouch::trace
