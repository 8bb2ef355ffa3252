// Where the time goes: a trace folded over a window (the whole trace, or the instances
// of one named annotation / NVTX range), a diff of two such summaries, and renderers.
// The shape follows the third seed's one_warmed_sampling_step_nsys, components,
// comparison_to_pre_fc2_profile and bottleneck_ranking blocks.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/model.h"
#include "trace/rules.h"
#include "util/result.h"

namespace vouch::trace {

// A kernel whose max is at least this many times its median is flagged as a mixture
// (several shapes or phases under one name), not a hot loop. Repeats of one kernel at one
// shape vary by tens of percent (clocks, cache state, the first cold launch of a
// microsecond kernel); the same name at prefill and decode shapes differs by several x.
// 3x sits between the two. Needs at least 3 launches for a median worth the name.
constexpr double kMixtureMaxOverMedian = 3.0;
constexpr std::int64_t kMixtureMinCount = 3;

struct SummaryOptions {
  std::string window;  // empty: the whole trace
  Rules rules = DefaultRules();
};

struct GapStats {
  std::int64_t count = 0;  // positive gaps between consecutive kernels (by start)
  std::int64_t total_ns = 0;
  std::int64_t max_ns = 0;
  double average_ns() const {
    return count ? static_cast<double>(total_ns) / static_cast<double>(count) : 0.0;
  }
};

struct Figures {
  std::int64_t elapsed_ns = 0;   // host time of the window (CPU range) or trace extent
  std::int64_t gpu_span_ns = 0;  // first GPU op start to last GPU op end
  std::int64_t kernel_sum_ns = 0;
  std::int64_t kernel_union_ns = 0;  // time with at least one kernel running
  std::int64_t gpu_op_count = 0;     // kernels + copies + sets
  std::int64_t kernel_count = 0;
  GapStats gaps;
  std::int64_t launch_api_count = 0;
  std::int64_t launch_api_union_ns = 0;
  std::int64_t launch_api_overlap_ns = 0;  // launch API union intersected with kernel union
  std::int64_t memcpy_count = 0, memcpy_ns = 0;
  std::uint64_t memcpy_bytes = 0;
  std::int64_t memset_count = 0, memset_ns = 0;
  std::uint64_t memset_bytes = 0;
  bool overflow = false;  // a sum in Add went past 64 bits (Summarize refuses it)

  double busy_percent() const;  // kernel union over GPU span
  double launch_overlap_percent() const;
  void Add(const Figures& o);  // sums; max for max
};

struct Instance {
  std::int64_t index = 0;  // 0-based, in time order
  std::int64_t start_ns = 0;
  Figures figures;
};

struct KernelRow {
  std::string name;
  std::string component;
  std::int64_t count = 0;
  std::int64_t total_ns = 0;
  double mean_ns = 0;
  double median_ns = 0;
  std::int64_t min_ns = 0;
  std::int64_t max_ns = 0;
  bool mixture = false;
  double percent_of_kernel_time = 0;
};

struct ComponentRow {
  std::string name;
  std::int64_t total_ns = 0;
  double percent_of_kernel_time = 0;
  std::int64_t launches = 0;
  std::string top_kernel;  // the kernel with the most time in it
};

struct RankEntry {
  std::string name;
  std::string kind;  // "component" or "gpu_idle" (span not covered by any kernel)
  std::int64_t total_ns = 0;
  std::optional<double> percent_of_kernel_time;
  double percent_of_span = 0;
};

// What a trace's figures say about the clock they were taken at when nothing ties the trace to
// a clock window (the first seed: a per-kernel figure without one cannot be quoted as one).
inline constexpr const char* kUnattributed =
    "unattributed: no clock window (a trace from outside a vouch leg); its per-kernel figures "
    "carry no clock attribution";

struct Summary {
  std::string path;
  // The clock window the trace was taken under (a vouch leg's trace: that leg's window and
  // verdict), or kUnattributed. Set by the caller; the summary only reports it.
  std::string clock_window = kUnattributed;
  std::string format;
  std::string window;       // empty: whole trace
  std::string attribution;  // how GPU work was tied to the window
  std::string rules_source;
  Figures total;                         // whole trace, or the sum over instances
  std::vector<Instance> instances;       // empty for the whole trace
  std::vector<KernelRow> kernels;        // by total time, descending
  std::vector<ComponentRow> components;  // by total time, descending; "other" included
  std::vector<RankEntry> ranking;
  std::map<std::string, std::int64_t> phases;  // annotation / NVTX names -> instances
  std::map<std::string, std::int64_t> skipped_by_category;
  std::map<std::string, std::int64_t> unknown_categories;
  std::vector<std::string> warnings;
  bool empty() const { return total.gpu_op_count == 0; }
};

// Errors: a window that names no range (with the names there are).
Result<Summary> Summarize(const Trace& trace, const SummaryOptions& options);

struct DiffRow {
  std::string name;
  std::int64_t a_ns = 0, b_ns = 0;
  std::int64_t a_count = 0, b_count = 0;
  std::string status;  // "both", "added" (only in B), "removed" (only in A)
  std::int64_t change_ns() const { return b_ns - a_ns; }
  std::optional<double> percent_change() const;
  // Two-lengths mode: (b - a) / (LB - LA) and the part that does not grow, a - slope * LA.
  std::optional<double> ns_per_unit_length;
  std::optional<double> fixed_ns;
  std::string growth;  // "scales", "partial", "flat", "shrinks" (two-lengths mode)
};

struct HeadlineRow {
  std::string name;
  double a = 0, b = 0;
  double change() const { return b - a; }
  std::optional<double> percent_change() const;
};

struct Diff {
  Summary a, b;
  std::optional<double> length_a, length_b;
  std::vector<HeadlineRow> headline;
  std::vector<DiffRow> components;
  std::vector<DiffRow> kernels;             // by |change|, descending
  std::vector<std::string> added, removed;  // kernel names
  std::vector<std::string> warnings;
};

// LENGTHS: the sequence lengths (or any size) of A and B for the two-lengths mode.
Result<Diff> DiffSummaries(const Summary& a, const Summary& b,
                           std::optional<std::pair<double, double>> lengths = std::nullopt);

nlohmann::json SummaryToJson(const Summary& s);
// The same bytes as SummaryToJson(s).dump(2), handed to SINK in pieces of ~64 KiB with the
// per-instance objects formatted one at a time (no tree of every instance in memory).
void StreamSummaryJson(const Summary& s, const std::function<void(std::string_view)>& sink);
std::string RenderSummaryText(const Summary& s, std::size_t max_kernels = 15);
// The same summary as Markdown (a pull request or a notebook): the totals, components,
// bottleneck ranking and the top kernels as tables.
std::string RenderSummaryMarkdown(const Summary& s, std::size_t max_kernels = 15);
nlohmann::json DiffToJson(const Diff& d);
std::string RenderDiffText(const Diff& d, std::size_t max_kernels = 15);
// The same comparison as Markdown (a pull request comment): the headline, components and the
// top MAX_KERNELS kernels as tables, added and removed kernels folded.
std::string RenderDiffMarkdown(const Diff& d, std::size_t max_kernels = 15);

// Interval helpers (exposed for tests): length of the union of [start, end) intervals, and
// of the intersection of two such unions.
std::int64_t UnionLength(std::vector<std::pair<std::int64_t, std::int64_t>> intervals);
std::int64_t IntersectionOfUnions(std::vector<std::pair<std::int64_t, std::int64_t>> a,
                                  std::vector<std::pair<std::int64_t, std::int64_t>> b);

}  // namespace vouch::trace
