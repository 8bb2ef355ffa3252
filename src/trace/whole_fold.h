// A whole-trace summary folded while a reader reads (`trace summarize` without --window on an
// Nsight Systems export): the GPU ops and API calls are not kept, only what the figures and
// the kernel table need: ~20 bytes per kernel and 16 per launch API call instead of a 64-byte
// GpuOp and a 48-byte ApiCall per row (first touches of memory were a quarter of the time).
// Internal to src/trace.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "trace/model.h"
#include "trace/summary.h"
#include "util/result.h"

namespace vouch::trace {

struct WholeFold {
  using Interval = std::pair<std::int64_t, std::int64_t>;
  static constexpr std::int64_t kNoLow = std::numeric_limits<std::int64_t>::max();
  static constexpr std::int64_t kNoHigh = std::numeric_limits<std::int64_t>::min();

  // A GPU op, in the order the ops would be in Trace::ops (END >= START).
  void Op(GpuOpKind kind, std::int64_t start, std::int64_t end, std::uint32_t name_id,
          std::uint64_t bytes) {
    ++ops;
    op_lo = std::min(op_lo, start);
    op_hi = std::max(op_hi, end);
    ++figures.gpu_op_count;
    const std::int64_t d = end - start;
    switch (kind) {
      case GpuOpKind::kKernel:
        ++figures.kernel_count;
        figures.kernel_sum_ns += d;
        kernels.emplace_back(start, end);
        kernel_names.push_back(name_id);
        break;
      case GpuOpKind::kMemcpy:
        ++figures.memcpy_count;
        figures.memcpy_ns += d;
        figures.memcpy_bytes += bytes;
        break;
      case GpuOpKind::kMemset:
        ++figures.memset_count;
        figures.memset_ns += d;
        figures.memset_bytes += bytes;
        break;
    }
    AddDuration(d, &op_total, &ops_too_long);
  }
  // An API call, in the order the calls would be in Trace::api.
  void Api(std::int64_t start, std::int64_t end, bool is_launch) {
    ++api;
    api_lo = std::min(api_lo, start);
    api_hi = std::max(api_hi, end);
    if (is_launch) {
      ++launch_api_count;
      launches.emplace_back(start, end);
    }
    AddDuration(std::max<std::int64_t>(end - start, 0), &api_total, &api_too_long);
  }

  // As CheckDurationTotals adds them: a sum that reaches kMaxTimeNs is flagged, not formed.
  static void AddDuration(std::int64_t d, std::int64_t* total, bool* too_long) {
    if (*too_long || d >= kMaxTimeNs - *total)
      *too_long = true;
    else
      *total += d;
  }

  // Written by Op: the GPU tables' reader.
  std::int64_t ops = 0;
  std::int64_t op_lo = kNoLow, op_hi = kNoHigh;
  std::int64_t op_total = 0;
  bool ops_too_long = false;
  Figures figures;  // the counts and sums but the launches'; the rest from the intervals
  std::vector<Interval> kernels;  // every kernel's (start, end), in op order
  std::vector<std::uint32_t> kernel_names;
  // Written by Api, which the nsys reader calls from a thread of its own: on cache lines of
  // their own (alignas rounds the struct's size up too). Sharing lines with the op half, every
  // row's counters bounced between the two cores: a whole-trace read took 1.5-4x the CPU
  // whenever the VM placed its two threads on cores that share no cache.
  alignas(64) std::int64_t api = 0;
  std::int64_t api_lo = kNoLow, api_hi = kNoHigh;
  std::int64_t api_total = 0;
  bool api_too_long = false;
  std::int64_t launch_api_count = 0;  // Figures::launch_api_count
  std::vector<Interval> launches;     // every launch API call's (start, end)
};

// What SummarizeFolded checks before it sums: META's extent (set here, as below) and the
// duration totals, as Summarize checks them for the trace with FOLD's ops and calls.
Status CheckFoldedTotals(Trace& meta, const WholeFold& fold);
// The whole-trace summary of META (a trace as its reader read it, without its GPU ops and API
// calls: those are in FOLD), the same as Summarize gives for the trace with them. Sets META's
// first_ns and last_ns. Consumes FOLD.
Result<Summary> SummarizeFolded(Trace& meta, WholeFold& fold, const SummaryOptions& opt);

}  // namespace vouch::trace
