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
  // The instances whose kernel multiset is not the modal one (a first step that compiles, a
  // last one cut short): their 1-based number in time order and kernel count, at most
  // kMaxOddInstances of them; odd_instances counts them all.
  struct Odd {
    std::int64_t instance = 0;
    std::int64_t kernels = 0;
  };
  std::vector<Odd> odd;
  std::int64_t odd_instances = 0;
  // The distinct kernel mixes of the instances and how many instances ran each, most common
  // first, at most kMaxMixes of them (the rest are in instances - their sum): a count is then
  // shown as the integer of each mix with the mix's share, never as a mean (8.46 of a kernel).
  struct Mix {
    KernelMultiset kernels;
    std::int64_t instances = 0;
  };
  std::vector<Mix> mixes;
};

inline constexpr std::size_t kMaxMixes = 4;

inline constexpr std::size_t kMaxOddInstances = 8;

// The tracer's estimated cost over a leg's measured region: launches times a per-launch cost
// measured on the H200 (docs/BENCHMARKS.md, evidence/2026-12-01-h200-tracer-cost/): 1.2 us with
// launch-API records (the tracer's default), 0.35 us without them (VOUCH_GPU_TRACE_API=off),
// picked by the trace header's "api" field; VOUCH_TRACER_LAUNCH_COST_NS overrides it.
inline constexpr double kTracerLaunchCostApiNs = 1200;
inline constexpr double kTracerLaunchCostLeanNs = 350;
inline constexpr double kTracerCostWarnFraction = 0.02;
struct TracerCost {
  std::string api_mode;  // the header's "api": "launch", "off", or "" (not recorded)
  double per_launch_ns = 0;
  std::string per_launch_source;
  double cost_ns = 0;
  double fraction = 0;  // of the region's wall time
  std::string warning;  // "" when within kTracerCostWarnFraction
};

inline constexpr const char* kLaunchesFromApi = "launch-API records";

// One traced process as its tracer saw itself (trace::TracerSelfCheck), reduced to what the
// refusal rule (trust.h) reads: kept in the record so that a record judges the same.
struct ProcessCheck {
  std::int64_t pid = -1;
  bool counting = false;  // the tracer counted kernel launches itself (callback API)
  std::string subscribe_error, other_subscriber, lost;
  bool footer = false;
  std::int64_t kernel_launches = -1, kernel_records = -1;  // footer; -1 when not said
  std::int64_t region_launches = 0;  // kernel launches inside the region, at least (lc lines)
  std::string cupti;                 // the CUPTI it ran on, where the header says
};

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
  std::string tracer_api;                        // every file's header "api" ("" when absent)
  std::optional<TracerCost> tracer_cost;         // EstimateTracerCost
  std::vector<ProcessCheck> checks;              // one per traced process (vouch-cupti)
  // Why no gpu.* figure of this leg may be quoted (trust.h's TraceRefusals); empty: none.
  std::vector<std::string> refused;
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

// Sets G's tracer_cost from its launches and region; OVERRIDE_NS (VOUCH_TRACER_LAUNCH_COST_NS)
// replaces the default per-launch cost. vouch.tracer_cost_fraction is then among
// GpuTraceMetrics.
void EstimateTracerCost(LegGpuTrace* g, std::optional<double> override_ns);
// VOUCH_TRACER_LAUNCH_COST_NS parsed: nullopt when unset; an error when not a number >= 0.
Result<std::optional<double>> TracerLaunchCostOverride();

// Reads every gpu-trace*.jsonl in DIR (one per process the leg ran) and folds it. An error when
// there is none or one cannot be read; the message names the file.
Result<LegGpuTrace> AnalyzeLegDir(const std::string& dir, std::optional<RegionNs> region);

}  // namespace vouch::gputrace
