#include "common.h"

#include <fmt/format.h>

#include <cstdlib>

#include "leg/executor.h"

namespace vouch::cli {

std::unique_ptr<Device> OpenDevice(const GlobalOptions& g) {
  auto d = g.sim_path.empty() ? OpenNvml() : OpenSimulated(g.sim_path, "", 0);
  if (!d) {
    fmt::print(stderr, "vouch: {}\n", d.error().message);
    return nullptr;
  }
  return std::move(*d);
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

void WindowFlags::Add(CLI::App& app) {
  AddGpuOption(app, gpus,
               "GPUs to sample, each must be busy (default: those CUDA_VISIBLE_DEVICES names, "
               "else all, idle ones recorded as unused)");
  app.add_option("--interval-ms", interval_ms, "sampler poll period (10 ms)")
      ->check(CLI::Range(1.0, 1000.0));
  app.add_option("--timeout", timeout_s,
                 "kill the command (a leg) after this many seconds (0: never)");
  app.add_option("--lock-timeout", lock_timeout_s,
                 "wait this long for the measurement lock (60 s)");
  app.add_option("--lock-clocks", lock_clocks,
                 "lock the SM clock at MHZ under the measurement lock (opt-in; always reset)");
  app.add_flag("--require-lock-clocks", require_lock_clocks, "fail if the clock lock is refused");
}

void PolicyFlags::Add(CLI::App& app) {
  app.add_option("--min-busy-readings", min_busy_readings,
                 "policy: busy readings a window needs (30)");
  app.add_option("--min-busy-pct", min_busy_pct,
                 "policy: busy readings must be more than this percent of the window (50)");
  app.add_option("--max-spread-pct", max_spread_pct,
                 "policy: SM clock spread ceiling in percent (5)");
  app.add_option("--max-median-offset-pct", max_median_offset_pct,
                 "policy: pairing median offset in percent (1)");
  app.add_option("--max-mean-offset-pct", max_mean_offset_pct,
                 "policy: pairing mean offset in percent (1)");
}

Policy PolicyFlags::Apply(Policy p) const {
  if (min_busy_readings) p.min_busy_readings = *min_busy_readings;
  if (min_busy_pct) p.min_busy_fraction = *min_busy_pct / 100;
  if (max_spread_pct) p.max_spread = *max_spread_pct / 100;
  if (max_median_offset_pct) p.max_median_offset = *max_median_offset_pct / 100;
  if (max_mean_offset_pct) p.max_mean_offset = *max_mean_offset_pct / 100;
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
