// Whether a leg's GPU trace may be quoted at all. A process can hold a second CUPTI client (the
// program's own torch.profiler, PyTorch's on-demand Kineto, nsys, a sanitizer): CUPTI then hands
// the activity records to whichever client registered last, or tears down the tracer's
// subscription, and the trace silently misses the work (issue 35: gpu.kernels 0 while 22,100
// copies ran). The tracer counts kernel launches itself (the callback API, which the other
// client does not take over) and says so in its header, "lc" lines and footer
// (docs/gpu-trace.md, "Another CUPTI client"); this rule compares them with the records, and the
// region with the sampler's view of the GPU. Pure: a leg's record (its vouch.gpu_trace object
// and its window) gives the same answer as the run that wrote it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "clock/window.h"
#include "gputrace/leg_trace.h"
#include "trace/model.h"
#include "util/result.h"

namespace vouch::gputrace {

// The processes' self-checks of T, each with the kernel launches it counted inside REGION (a
// lower bound: the launches between the first and the last count line inside it; the whole
// trace when REGION is null).
std::vector<ProcessCheck> ChecksOf(const trace::Trace& t, std::optional<RegionNs> region);

// Why G's figures are not this leg's, one reason per finding, each with what to do; empty when
// nothing refuses them. WINDOW (the leg's sampled window over the same region; null when not
// sampled) adds the rule that a region whose GPU was busy holds kernels:
//   - a process whose tracer could not subscribe to CUPTI, or lost its subscription;
//   - a process that received fewer kernel records than it counted kernel launches;
//   - a region with kernel launches counted and no kernel in the trace;
//   - a region in which a GPU of the window was busy and the trace holds no kernel.
std::vector<std::string> TraceRefusals(const LegGpuTrace& g, const WindowSummary* window);

nlohmann::json ChecksToJson(const std::vector<ProcessCheck>& checks);
// CHECKS absent (a record written before 2026-12-06) gives none.
Result<std::vector<ProcessCheck>> ChecksFromJson(const nlohmann::json& checks,
                                                 const std::string& where);

}  // namespace vouch::gputrace
