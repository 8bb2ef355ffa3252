// GPU-side truth for one leg: its CUPTI trace (libvouch_cupti.so, docs/gpu-trace.md) folded
// over the leg's measured region into figures and built-in metrics. Pure: a trace and a region
// in, figures out.
//
// What counts as the region's work: a kernel launched (by correlation id) from an API call that
// started inside the region; a kernel with no launch record, one that starts inside it. Its
// GPU-active time is the union of those kernels' intervals (overlapping kernels count once).
// Per NVTX range name, each instance inside the region gets the same: the kernels launched from
// API calls inside the instance on its thread (falling back to any thread, then to kernels that
// start inside it, when the trace has no launch calls there), their union, their multiset.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "metrics/metric.h"
#include "trace/model.h"
#include "util/result.h"

namespace vouch::gputrace {

// name -> count
using KernelMultiset = std::map<std::string, std::int64_t>;

struct KernelAgg {
  std::int64_t count = 0;
  std::int64_t total_ns = 0;
};

// A kernel's mean count and mean time per range instance.
struct KernelMean {
  double count = 0;
  double ns = 0;
};

struct RangeFigures {
  std::string name;
  std::int64_t instances = 0;
  std::vector<double> active_ns;  // per instance, in time order
  double median_ns = 0, p10_ns = 0, p90_ns = 0;
  double spread_pct = 0;      // (p90 - p10) / median, in percent
  double kernels_median = 0;  // kernels per instance
  // The multiset most instances share, and the fraction of instances that have it.
  KernelMultiset modal;
  double modal_fraction = 0;
  // Per kernel name: count and time per instance (means over instances), for the diff.
  std::map<std::string, KernelMean> per_instance;
  std::string attribution;  // how kernels were tied to instances
};

inline constexpr const char* kLaunchesFromApi = "launch-API records";

struct LegGpuTrace {
  std::vector<std::string> files;  // the trace files read (one per traced process)
  bool partial = false;
  std::int64_t dropped = 0;
  std::vector<std::string> warnings;
  bool region_marked = false;  // the leg marked its measured region; else the whole trace
  std::int64_t region_begin_ns = 0, region_end_ns = 0;
  std::int64_t active_ns = 0;  // union of the region's kernels
  std::int64_t kernels = 0, graph_kernels = 0, launches = 0, memcpys = 0, memsets = 0;
  std::string launches_from = kLaunchesFromApi;  // or kernel correlation ids, with no API records
  std::map<std::string, KernelAgg> by_kernel;    // the region's kernels by name
  std::vector<RangeFigures> ranges;              // by name
};

struct RegionNs {
  std::int64_t begin_ns = 0, end_ns = 0;
};

// REGION (unix nanoseconds) null: the whole trace.
LegGpuTrace AnalyzeTrace(const trace::Trace& t, std::optional<RegionNs> region);

// "decode step" -> "decode_step": a range name usable inside a metric name.
std::string MetricSafe(const std::string& name);

// gpu.active_ns, gpu.kernels, gpu.graph_kernels, gpu.launches, and per range R
// gpu.active_ns_per.R (samples: the instances), gpu.active_ns_per.R.spread_pct,
// gpu.kernels_per.R.
std::vector<Metric> GpuTraceMetrics(const LegGpuTrace& g);

nlohmann::json ToJson(const LegGpuTrace& g);
// A few lines: kernels, launches, GPU-active time over the region, each range's per-instance
// GPU-active time; ATTRIBUTION (the clock window, or "unattributed") is the first line.
std::string RenderLegGpuTraceText(const LegGpuTrace& g, const std::string& attribution);
Result<LegGpuTrace> LegGpuTraceFromJson(const nlohmann::json& j, const std::string& where);

// Reads every gpu-trace*.jsonl in DIR (one per process the leg ran) and folds it. An error when
// there is none or one cannot be read; the message names the file.
Result<LegGpuTrace> AnalyzeLegDir(const std::string& dir, std::optional<RegionNs> region);

}  // namespace vouch::gputrace
