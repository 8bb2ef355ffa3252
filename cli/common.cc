#include "common.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "leg/executor.h"
#include "number_flag.h"
#include "util/fs.h"
#include "util/number.h"
#include "util/strings.h"

namespace vouch::cli {

std::unique_ptr<Device> OpenDevice(const GlobalOptions& g) {
  auto d = g.sim_path.empty() ? OpenNvml() : OpenSimulated(g.sim_path, "", 0);
  if (!d) {
    fmt::print(stderr, "vouch: {}\n", d.error().message);
    return nullptr;
  }
  return std::move(*d);
}

CLI::Option* AddMarkdownOption(CLI::App& app, std::string& markdown, const std::string& what) {
  return app.add_option(
      "--markdown", markdown,
      "also write " + what + " as Markdown to FILE (- for stdout instead of the text)");
}

bool WriteMarkdownFile(const std::string& markdown, const std::function<std::string()>& render,
                       std::string_view command) {
  if (markdown.empty() || markdown == "-") return true;
  if (auto st = WriteFileAtomic(markdown, render()); !st) {
    fmt::print(stderr, "vouch {}: {}\n", command, st.error().message);
    return false;
  }
  return true;
}

CLI::Option* AddGpuOption(CLI::App& app, std::vector<int>& gpus, const std::string& help) {
  return app.add_option("--gpu", gpus, help + "; a comma list or repeated: --gpu 0,1")
      ->delimiter(',');
}

Result<MeasureLock> TakeLock(const GlobalOptions& g, const std::string& command,
                             const std::string& measured, double timeout_s) {
  return MeasureLock::Acquire(
      g.lock_path, measured, timeout_s, [] { return Interrupted(); },
      [&](const std::optional<LockHolder>& h, double wait_s) {
        fmt::print(stderr,
                   "vouch {}: the measurement lock {} is held by {}; waiting up to {:g} s for it "
                   "(--lock-timeout)\n",
                   command, g.lock_path, h ? DescribeHolder(*h) : "an unknown process", wait_s);
      });
}

CLI::Validator NumberFlag(NumberRange range) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        auto v = ParseNumberIn(Trim(text), range, "the value");
        return v ? "" : v.error().message;
      },
      range.integer ? "INT" : "NUMBER");
}

CLI::Validator Seconds(double min_nonzero, double max) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        auto v = ParseFiniteDouble(Trim(text), "");
        if (!v || *v < 0 || *v > max || (*v != 0 && *v < min_nonzero))
          return min_nonzero > 0
                     ? fmt::format("'{}' is not a number of seconds: give 0 (never) or {} to {}",
                                   text, min_nonzero, max)
                     : fmt::format("'{}' is not a number of seconds: give 0 to {}", text, max);
        return "";
      },
      "SECONDS");
}

void WindowFlags::Add(CLI::App& app) {
  AddGpuOption(app, gpus,
               "GPUs to sample, each must be busy (default: those CUDA_VISIBLE_DEVICES names, "
               "else all, idle ones recorded as unused)");
  app.add_option("--interval-ms", interval_ms, "sampler poll period (10 ms)")
      ->check(NumberFlag({1, 1000}));
  // Finite, not negative, and a timeout of a leg at least 10 ms: 1e-10, -1 and nan are
  // mistakes, never "no timeout" (that is 0).
  app.add_option("--timeout", timeout_s,
                 "kill the command (a leg) after this many seconds (0: never)")
      ->check(Seconds(kMinTimeoutS, kMaxTimeoutS));
  app.add_option("--lock-timeout", lock_timeout_s, "wait this long for the measurement lock (60 s)")
      ->check(Seconds(0, kMaxTimeoutS));
  app.add_option("--lock-clocks", lock_clocks,
                 "lock the SM clock at MHZ under the measurement lock (opt-in; always reset)")
      ->check(NumberFlag(Count(1, 100000)));
  app.add_flag("--require-lock-clocks", require_lock_clocks, "fail if the clock lock is refused");
  app.add_flag("--gpu-trace", gpu_trace,
               "trace the command with the CUPTI tracer (libvouch_cupti.so): kernels, launches, "
               "NVTX ranges; gpu.* metrics (`vouch help gpu-trace`); launch-API records only with "
               "VOUCH_GPU_TRACE_API=on in the environment");
  app.add_option("--gpu-trace-lib", gpu_trace_lib,
                 "the tracer library (default: $VOUCH_CUPTI_LIB, else beside vouch or in ../lib)");
}

Result<std::string> FindTracerLibrary(const std::string& given) {
  namespace fs = std::filesystem;
  auto usable = [](const std::string& p) -> Result<std::string> {
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) return MakeError("{}: not a file", p);
    std::FILE* f = std::fopen(p.c_str(), "rb");
    if (!f) return MakeError("{}: cannot open: {}", p, std::strerror(errno));
    char magic[4] = {};
    std::size_t n = std::fread(magic, 1, 4, f);
    std::fclose(f);
    if (n != 4 || std::memcmp(magic,
                              "\x7f"
                              "ELF",
                              4) != 0)
      return MakeError("{}: not a shared library (no ELF header)", p);
    return fs::absolute(p).string();
  };
  if (!given.empty()) {
    auto r = usable(given);
    if (!r) return MakeError("--gpu-trace-lib {}", r.error().message);
    return r;
  }
  if (const char* env = std::getenv("VOUCH_CUPTI_LIB"); env && *env) {
    auto r = usable(env);
    if (!r) return MakeError("VOUCH_CUPTI_LIB: {}", r.error().message);
    return r;
  }
  std::vector<std::string> tried;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const auto& c : {exe.parent_path() / "libvouch_cupti.so",
                          exe.parent_path().parent_path() / "lib" / "libvouch_cupti.so"}) {
      tried.push_back(c.string());
      if (auto r = usable(c.string())) return r;
    }
  }
  return MakeError(
      "--gpu-trace: the tracer library libvouch_cupti.so was not found (looked at {}); it is "
      "built where a CUDA toolkit with CUPTI is found (cmake -DVOUCH_CUPTI=ON; "
      "scripts/portable.sh puts it in .carry/lib); name it with --gpu-trace-lib or "
      "VOUCH_CUPTI_LIB",
      tried.empty() ? std::string("nowhere: /proc/self/exe unreadable")
                    : fmt::format("{}", fmt::join(tried, ", ")));
}

void PolicyFlags::Add(CLI::App& app) {
  app.add_option("--min-busy-readings", min_busy_readings,
                 "policy: busy readings a window needs (30)")
      ->check(NumberFlag(Count(0, 100000000)));
  app.add_option("--min-busy-pct", min_busy_pct,
                 "policy: busy readings must be more than this percent of the window (50)")
      ->check(NumberFlag(Percent()));
  app.add_option("--max-spread-pct", max_spread_pct,
                 "policy: SM clock spread ceiling in percent (5)")
      ->check(NumberFlag(Percent()));
  app.add_option("--max-median-offset-pct", max_median_offset_pct,
                 "policy: pairing median offset in percent (1)")
      ->check(NumberFlag(Percent()));
  app.add_option("--max-mean-offset-pct", max_mean_offset_pct,
                 "policy: pairing mean offset in percent (1)")
      ->check(NumberFlag(Percent()));
  app.add_option("--memory-margin-pct", memory_margin_pct,
                 "policy: warn when a GPU's peak memory used comes within this percent of its "
                 "total (2)")
      ->check(NumberFlag(Percent()));
  app.add_option(
         "--max-throttled-pct", max_throttled_pct,
         "policy: a window is invalid when the driver's violation counters show one cause "
         "(power cap, thermal...) held the clocks down longer than this percent of it (off)")
      ->check(NumberFlag(Percent()));
}

Policy PolicyFlags::Apply(Policy p) const {
  if (min_busy_readings) p.min_busy_readings = *min_busy_readings;
  if (min_busy_pct) p.min_busy_fraction = *min_busy_pct / 100;
  if (max_spread_pct) p.max_spread = *max_spread_pct / 100;
  if (max_median_offset_pct) p.max_median_offset = *max_median_offset_pct / 100;
  if (max_mean_offset_pct) p.max_mean_offset = *max_mean_offset_pct / 100;
  if (memory_margin_pct) p.memory_margin = *memory_margin_pct / 100;
  if (max_throttled_pct) p.max_throttled_share = *max_throttled_pct / 100;
  return p;
}

Result<GpuSelection> ChooseGpus(const std::vector<int>& asked, Device& device,
                                const std::vector<std::pair<std::string, std::string>>& env,
                                bool honour_cuda_visible) {
  auto lookup = [&](const char* name) -> std::optional<std::string> {
    std::optional<std::string> v;
    if (const char* e = std::getenv(name)) v = e;
    for (const auto& [k, val] : env)
      if (k == name) v = val;
    return v;
  };
  std::vector<StaticState> states;
  for (int i = 0; i < device.Count(); ++i) states.push_back(device.Static(i));
  return SelectGpus(asked, honour_cuda_visible ? lookup("CUDA_VISIBLE_DEVICES") : std::nullopt,
                    lookup("CUDA_DEVICE_ORDER"), states);
}

}  // namespace vouch::cli
