// Schema: the Nsight Systems "SQLite Export Schema Reference" (docs.nvidia.com,
// nsys-exporter/exported_data.html). Times are nanoseconds; names are StringIds ids;
// globalTid/globalPid serialise pid and tid as (pid << 24) | tid (with a high hardware id).
#include "trace/nsys_reader.h"

#include <algorithm>
#include <optional>
#include <system_error>
#include <thread>

#include "trace/nsys_db.h"
#include "trace/whole_fold.h"

namespace vouch::trace {
namespace {

using nsys_detail::Reader;

// The launch API calls of a folded read, on a connection and a thread of their own while the
// caller's reader steps the GPU tables (the two tables were about 45 % and 40 % of a whole-trace
// summary: 5 M + 5 M rows in 1.5 s of wall time instead of 2.4 on two cores). It writes only
// FOLD's API half (WholeFold::Api), interns names in a trace of its own (only to tell launches),
// and counts against the caller's instruction budget.
class RuntimeThread {
 public:
  RuntimeThread(const std::string& path, const NsysLimits& limits, Reader& main, WholeFold* fold)
      : reader_(path, limits, &names_only_, fold) {
    reader_.ShareBudgetWith(main);
    reader_.ReadTheFileOf(main);
    try {
      thread_ = std::thread([this] {
        status_ = reader_.Open();
        if (status_.ok()) status_ = reader_.Strings();
        if (status_.ok()) status_ = reader_.Runtime(kTable, ApiKind::kRuntime);
      });
    } catch (const std::system_error&) {  // no thread to be had: the caller reads it itself
    }
  }
  RuntimeThread(const RuntimeThread&) = delete;
  RuntimeThread& operator=(const RuntimeThread&) = delete;
  ~RuntimeThread() { (void)Join(); }
  bool started() const { return thread_.joinable() || joined_; }
  // Waits for the thread; its status, or the budget's error where the budget stopped it.
  Status Join() {
    if (thread_.joinable()) {
      thread_.join();
      joined_ = true;
    }
    if (auto e = reader_.BudgetError()) return *e;
    return status_;
  }
  static constexpr const char* kTable = "CUPTI_ACTIVITY_KIND_RUNTIME";

 private:
  Trace names_only_;
  Reader reader_;
  std::thread thread_;
  bool joined_ = false;
  Status status_ = OkStatus();
};

// Opens the file and checks its tables before any is read.
Status OpenAndCheck(Reader& r, const std::string& path) {
  if (auto s = r.Open(); !s.ok()) return s;
  static const char* kTables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                  "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
                                  "NVTX_EVENTS"};
  for (const char* name : kTables)
    if (auto s = r.RefuseNonTable(name); !s.ok()) return s;
  for (const char* name : {"StringIds", "TARGET_INFO_GPU"})
    if (auto s = r.RefuseNonTable(name); !s.ok()) return s;
  bool any = false;
  for (const char* name : kTables) any = any || r.Has(name);
  if (!any)
    return MakeError(
        "{}: none of the tables CUPTI_ACTIVITY_KIND_KERNEL/_MEMCPY/_MEMSET/_RUNTIME or NVTX_EVENTS "
        "is "
        "there: not an nsys export, or the capture traced no CUDA (nsys profile --trace=cuda,nvtx)",
        path);
  return OkStatus();
}

Status ReadAll(Reader& r, Trace& t, const std::string& path, const NsysLimits& limits,
               WholeFold* fold) {
  if (auto s = OpenAndCheck(r, path); !s.ok()) return s;
  if (auto s = r.Strings(); !s.ok()) return s;
  // The errors come in the order of a read in one thread: the GPU tables', then the runtime's.
  std::optional<RuntimeThread> runtime;
  if (fold && r.Has(RuntimeThread::kTable)) runtime.emplace(path, limits, r, fold);
  if (runtime && !runtime->started()) runtime.reset();
  Status gpu = r.GpuTable("CUPTI_ACTIVITY_KIND_KERNEL", GpuOpKind::kKernel);
  if (gpu.ok()) gpu = r.GpuTable("CUPTI_ACTIVITY_KIND_MEMCPY", GpuOpKind::kMemcpy);
  if (gpu.ok()) gpu = r.GpuTable("CUPTI_ACTIVITY_KIND_MEMSET", GpuOpKind::kMemset);
  Status api = runtime ? runtime->Join() : OkStatus();
  if (!gpu.ok()) return gpu;
  if (!api.ok()) return api;
  if (!runtime)
    if (auto s = r.Runtime(RuntimeThread::kTable, ApiKind::kRuntime); !s.ok()) return s;
  if (auto s = r.Nvtx(); !s.ok()) return s;
  r.Gpus();
  t.event_count = static_cast<std::int64_t>(t.ops.size() + t.api.size() + t.ranges.size());
  return OkStatus();
}

Result<Trace> ReadNsys(const std::string& path, const NsysLimits& limits, WholeFold* fold) {
  Trace t;
  t.path = path;
  t.format = "nsys";
  Reader r(path, limits, &t, fold);
  Status s = ReadAll(r, t, path, limits, fold);
  // A statement stopped by the budget fails in whatever way it fails: the budget is the cause.
  if (auto e = r.BudgetError()) return *e;
  if (!s.ok()) return s.error();
  return t;
}

// The window's summary or error as the trace read whole gives it, from a folded read (the
// whole-trace summary's, which keeps no op nor call), where the streamed read failed (STREAMED)
// or the window names no range: the same error, in the same order, as Summarize over the trace
// read whole (a read's error, then the duration totals', then the window's, listing the names).
Result<Summary> WindowAsReadWhole(const std::string& path, const SummaryOptions& opt,
                                  const NsysLimits& limits, std::optional<Error> streamed) {
  WholeFold fold;
  auto t = ReadNsys(path, limits, &fold);
  if (!t) return t.error();
  if (auto c = CheckFoldedTotals(*t, fold); !c.ok()) return c.error();
  auto s = Summarize(*t, opt);  // the trace without its ops and calls: only for the error
  if (!s) return s.error();
  if (streamed) return *streamed;
  return MakeError("{}: the window '{}' was not found in a first read but in a second", path,
                   opt.window);
}

// The window's instances (its NVTX ranges) are read first, then the runtime calls and the GPU
// ops stream into a WindowFold (window_fold.h); the kernels are read twice where an instance's
// came out of order.
Result<Summary> SummarizeWindow(const std::string& path, const SummaryOptions& opt,
                                const NsysLimits& limits) {
  Trace t;
  t.path = path;
  t.format = "nsys";
  Reader r(path, limits, &t);
  std::vector<std::string> range_names;
  NameTable side(&range_names);
  std::optional<WindowFold> fold;
  Status read = [&]() -> Status {
    if (auto s = OpenAndCheck(r, path); !s.ok()) return s;
    if (auto s = r.Strings(); !s.ok()) return s;
    if (auto s = r.Nvtx(&side); !s.ok()) return s;
    const auto want = std::find(range_names.begin(), range_names.end(), opt.window);
    if (want == range_names.end()) return OkStatus();
    fold.emplace(t.ranges, static_cast<std::uint32_t>(want - range_names.begin()));
    r.FoldWindow(&*fold);
    if (auto s = r.Runtime(RuntimeThread::kTable, ApiKind::kRuntime); !s.ok()) return s;
    fold->EndCalls();
    if (auto s = r.GpuTable("CUPTI_ACTIVITY_KIND_KERNEL", GpuOpKind::kKernel); !s.ok()) return s;
    if (auto s = r.GpuTable("CUPTI_ACTIVITY_KIND_MEMCPY", GpuOpKind::kMemcpy); !s.ok()) return s;
    if (auto s = r.GpuTable("CUPTI_ACTIVITY_KIND_MEMSET", GpuOpKind::kMemset); !s.ok()) return s;
    if (fold->NeedsKernelsAgain()) {
      if (auto s = r.GpuTable("CUPTI_ACTIVITY_KIND_KERNEL", GpuOpKind::kKernel, /*again=*/true);
          !s.ok())
        return s;
      fold->EndKernelsAgain();
    }
    r.Gpus();
    r.AdoptRangeNames(range_names);
    return OkStatus();
  }();
  if (auto e = r.BudgetError()) read = *e;
  if (!read.ok()) return WindowAsReadWhole(path, opt, limits, read.error());
  if (!fold || fold->instances() == 0) return WindowAsReadWhole(path, opt, limits, std::nullopt);
  return fold->Summarize(t, opt);
}

}  // namespace

Result<Trace> ReadNsysSqlite(const std::string& path, const NsysLimits& limits) {
  auto t = ReadNsys(path, limits, nullptr);
  if (t) ComputeExtent(&*t);
  return t;
}

Result<Summary> SummarizeNsysSqlite(const std::string& path, const SummaryOptions& opt,
                                    const NsysLimits& limits) {
  if (!opt.window.empty()) return SummarizeWindow(path, opt, limits);
  WholeFold fold;
  auto t = ReadNsys(path, limits, &fold);
  if (!t) return t.error();
  t->event_count += fold.ops + fold.api;
  return SummarizeFolded(*t, fold, opt);
}

}  // namespace vouch::trace
