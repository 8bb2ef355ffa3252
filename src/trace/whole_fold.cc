#include "trace/whole_fold.h"

#include "trace/figures.h"
#include "trace/summary_parts.h"

namespace vouch::trace {

Status CheckFoldedTotals(Trace& meta, const WholeFold& fold) {
  // The extent over every event, as ComputeExtent forms it.
  std::int64_t lo = std::min(fold.op_lo, fold.api_lo), hi = std::max(fold.op_hi, fold.api_hi);
  for (const auto& r : meta.ranges) {
    lo = std::min(lo, r.start_ns);
    hi = std::max(hi, r.end_ns);
  }
  if (lo > hi) lo = hi = 0;
  meta.first_ns = lo;
  meta.last_ns = hi;
  // CheckDurationTotals: the readers refuse a time out of range; the ranges are checked there.
  if (auto c = CheckDurationTotals(meta); !c.ok()) return c.error();
  if (fold.ops_too_long) return DurationTotalsError(meta.path, /*ops=*/true);
  if (fold.api_too_long) return DurationTotalsError(meta.path, /*ops=*/false);
  return OkStatus();
}

Result<Summary> SummarizeFolded(Trace& meta, WholeFold& fold, const SummaryOptions& opt) {
  if (auto c = CheckFoldedTotals(meta, fold); !c.ok()) return c.error();
  Summary s = BeginSummary(meta, opt);
  s.total = fold.figures;
  s.total.launch_api_count = fold.launch_api_count;
  s.total.elapsed_ns = meta.last_ns - meta.first_ns;
  if (s.total.gpu_op_count) s.total.gpu_span_ns = fold.op_hi - fold.op_lo;
  KernelDurations durations(meta.names.size());
  for (auto id : fold.kernel_names) durations.Count(id);
  durations.Place();
  for (std::size_t i = 0; i < fold.kernels.size(); ++i)
    durations.Fill(fold.kernel_names[i], fold.kernels[i].second - fold.kernels[i].first);
  fold.kernel_names = {};
  AddUnionFigures(&fold.kernels, &fold.launches, &s.total);
  AddPhasesWarning(&s);
  FinishSummary(&s, meta, durations, opt);
  return s;
}

}  // namespace vouch::trace
