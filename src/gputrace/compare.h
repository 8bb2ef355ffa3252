// Two arms told apart by what ran on the GPU (the second seed: "equal times are noise, equal
// counts are identity"; "trace both arms with the same tool and compare what actually ran").
// Pure: the arms' measured legs' GPU traces in, a comparison out.
//
// The basis is one NVTX range (the headline's, gpu.active_ns_per.R; else the range both arms
// have with the most GPU time), compared per instance, so a time-based loop whose number of
// steps varies still compares; without a common range, the whole measured region.
// Identity: each arm's kernel multiset (name and count per basis unit) is the same in all its
// legs, and the two arms' are equal. Moved: they differ (a behavioural control that moved).
// Unknown: an arm's own legs disagree (the basis does not hold the same work every time).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gputrace/call_stat.h"
#include "gputrace/leg_trace.h"

namespace vouch::gputrace {

enum class Identity { kIdentity, kMoved, kUnknown };
std::string_view ToString(Identity i);  // "identity", "moved", "unknown"

struct KernelDiffRow {
  std::string name;
  std::string status;  // "added" (only B), "removed" (only A), "moved" (count changed), "same"
  double a_count = 0, b_count = 0;  // per basis unit, mean over the arm's legs
  // On a range basis whose mixes are not one stable multiset: the integer count of each kernel
  // mix with its share of the instances ("10 (85 %), 0 (15 %)"), shown instead of the mean;
  // "" otherwise.
  std::string a_counts_by_mix, b_counts_by_mix;
  double a_ns = 0, b_ns = 0;  // kernel time per basis unit
  double delta_ns() const { return b_ns - a_ns; }
  std::optional<double> share_pct;  // of the total kernel-time difference
};

struct GpuComparison {
  std::string a_label = "A", b_label = "B";
  std::string basis;        // "per instance of NVTX range 'decode_step'" or "per measured region"
  std::string basis_range;  // "" for the region
  Identity identity = Identity::kUnknown;
  std::string summary;             // one line for the verdict
  std::vector<std::string> moved;  // "gemv_kernel: 16 -> 17 per instance"
  std::vector<std::string> notes;  // why unknown, partial legs, ...
  KernelMultiset a_multiset, b_multiset;
  double a_kernel_ns = 0, b_kernel_ns = 0;  // kernel time per unit (sum over kernels)
  double a_active_ns = 0, b_active_ns = 0;  // GPU-active time per unit (median over legs)
  std::vector<KernelDiffRow> rows;          // by |delta_ns| descending
  // The per-kernel figures as ArmInput::call_stats (calls and time per unit), for CheckArms.
  std::map<std::string, CallStat> call_stats_a, call_stats_b;
};

// A and B: the measured legs' traces of each arm (at least one each). HEADLINE_RANGE: the range
// of a gpu.active_ns_per.R headline, or "".
Result<GpuComparison> CompareArms(const std::vector<LegGpuTrace>& a,
                                  const std::vector<LegGpuTrace>& b,
                                  const std::string& headline_range, const std::string& a_label,
                                  const std::string& b_label);

// "gpu.active_ns_per.decode_step" -> "decode_step" (also ".spread_pct" and gpu.kernels_per.R);
// "" for any other metric.
std::string RangeOfMetric(const std::string& metric, const std::vector<LegGpuTrace>& legs);

nlohmann::json ToJson(const GpuComparison& c);
// The explained part of the verdict: identity line, what moved, the per-kernel diff (at most
// MAX_ROWS rows), each with its attribution line.
std::string RenderComparisonText(const GpuComparison& c, const std::string& attribution,
                                 std::size_t max_rows = 12);
std::string RenderComparisonMarkdown(const GpuComparison& c, const std::string& attribution,
                                     std::size_t max_rows = 20);

}  // namespace vouch::gputrace
