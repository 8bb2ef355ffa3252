// One trace model shared by every reader (Kineto JSON, Nsight Systems SQLite, vouch's CUPTI
// tracer's JSON lines).
// Plain structs: readers fill them, summary.h folds them. Times are integer nanoseconds
// on the trace's own clock; CPU and GPU events of one trace share that clock.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "util/result.h"

namespace vouch::trace {

enum class GpuOpKind : std::uint8_t { kKernel, kMemcpy, kMemset };
enum class ApiKind : std::uint8_t { kRuntime, kDriver };
// kCpu: a host range (Kineto user_annotation, NVTX push/pop or start/end).
// kGpu: the same range projected on the GPU timeline (Kineto gpu_user_annotation).
enum class RangeKind : std::uint8_t { kCpu, kGpu };

// A kernel, memory copy or memory set on one device and stream.
struct GpuOp {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t correlation = -1;  // links to the ApiCall that launched it; -1 unknown
  std::int64_t stream = -1;
  std::uint64_t bytes = 0;  // copies and sets
  std::uint32_t name_id = 0;
  std::int32_t device = -1;
  std::int32_t pid = -1;       // process that launched it (-1 unknown; Kineto keeps one process)
  std::uint32_t graph_id = 0;  // the CUDA graph it was launched from (0: none, or not known)
  GpuOpKind kind = GpuOpKind::kKernel;
};

// A CUDA runtime or driver API call on a host thread.
struct ApiCall {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t correlation = -1;
  std::int64_t pid = -1;
  std::int64_t tid = -1;
  std::uint32_t name_id = 0;
  ApiKind kind = ApiKind::kRuntime;
  bool is_launch = false;  // cudaLaunchKernel*, cuLaunchKernel*, cudaGraphLaunch, ...
};

// A named range: an annotation or NVTX range.
struct Range {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t pid = -1;          // kGpu: the device
  std::int64_t tid = -1;          // kGpu: the stream
  std::int64_t external_id = -1;  // Kineto pairs a CPU range with its GPU range by it
  std::uint32_t name_id = 0;
  RangeKind kind = RangeKind::kCpu;
};

// What vouch's CUPTI tracer says about its own view of one process (docs/gpu-trace.md, "Another
// CUPTI client"): whether it counted launches itself (the callback API), whether its CUPTI
// subscription held, and the launches it counted against the kernel records it received. Only
// vouch-cupti traces carry it; one per traced process.
struct TracerSelfCheck {
  std::int64_t pid = -1;
  std::string file;
  bool counting = false;         // header "launch_count": "on": the counts below mean something
  std::string subscribe_error;   // the tracer's CUPTI subscription failed (header), with...
  std::string other_subscriber;  // ...the client CUPTI named as holding it
  std::string lost;              // the subscription vanished while the process ran ("lost" line)
  std::int64_t lost_ns = 0;
  bool footer = false;
  std::int64_t kernel_launches = -1;  // footer: kernel launches counted (not graph, not captured)
  std::int64_t kernel_records = -1;   // footer: records of those kernels received
  // (time, cumulative kernel launches) from the tracer's "lc" lines, in file order.
  std::vector<std::pair<std::int64_t, std::int64_t>> marks;
  std::string cupti;  // the CUPTI it ran on: "13.0 /path/libcupti.so.13 (why)", where said
};

struct Trace {
  std::string path;
  std::string format;  // "kineto", "nsys" or "vouch-cupti"
  // Interned names; GpuOp/ApiCall/Range refer to them by index.
  std::vector<std::string> names;
  std::vector<GpuOp> ops;
  std::vector<ApiCall> api;
  std::vector<Range> ranges;
  std::vector<std::string> devices;  // device names, by index, where the file says
  // Events the summary does not use, by category (cpu_op, ac2g, ...): counted, not kept.
  std::map<std::string, std::int64_t> skipped_by_category;
  // Categories vouch does not know at all: counted and reported, never guessed at.
  std::map<std::string, std::int64_t> unknown_categories;
  std::int64_t event_count = 0;  // events read from the file, all kinds
  // What the capture itself says about its completeness: a partial file (the process did not
  // exit cleanly), records the profiler dropped. Summaries repeat these warnings.
  bool partial = false;
  std::int64_t dropped_records = 0;
  std::vector<std::string> warnings;
  std::string command;  // the traced process's command line, where the file says
  std::vector<TracerSelfCheck> tracer_checks;  // vouch-cupti only: one per process
  // Earliest start and latest end over every timed event (CPU and GPU).
  std::int64_t first_ns = 0;
  std::int64_t last_ns = 0;

  const std::string& Name(std::uint32_t id) const { return names[id]; }
};

// Interns names while a reader runs (heterogeneous lookup: no string copy per event).
class NameTable {
 public:
  explicit NameTable(std::vector<std::string>* names) : names_(names) {}
  std::uint32_t Intern(std::string_view name);

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string>* names_;
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> index_;
  // In front of the map: a trace repeats a few hundred names millions of times, and hashing
  // a 100-byte kernel name per event cost more than the check of a cached one.
  static constexpr std::size_t kCacheSlots = 1024;
  std::vector<std::uint32_t> cache_ = std::vector<std::uint32_t>(kCacheSlots, UINT32_MAX);
};

// Every reader refuses a time at or beyond +-2^62 ns (146 years; epoch-based timestamps are
// ~2^60.6): with both ends of an event inside it, end - start cannot overflow 64 bits.
inline constexpr std::int64_t kMaxTimeNs = std::int64_t{1} << 62;
inline bool TimeInRange(std::int64_t ns) { return ns > -kMaxTimeNs && ns < kMaxTimeNs; }
// Refuses a trace with a time beyond +-kMaxTimeNs, or whose GPU operations' or API calls'
// durations add up to kMaxTimeNs or more: then no sum a summary forms over one window
// overflows either. The error names the file. Summarize calls it on every trace.
Status CheckDurationTotals(const Trace& trace);
// Its error for the GPU operations' (OPS) or the API calls' durations.
Error DurationTotalsError(const std::string& path, bool ops);

// True for API names that launch GPU work (for the launch-overlap figure).
bool IsLaunchApi(std::string_view name);
// Sets first_ns/last_ns from every event.
void ComputeExtent(Trace* trace);

}  // namespace vouch::trace
