#include "common.h"

#include <fmt/format.h>

namespace vouch::cli {

std::unique_ptr<Device> OpenDevice(const GlobalOptions& g) {
  auto d = g.sim_path.empty() ? OpenNvml() : OpenSimulated(g.sim_path, "", 0);
  if (!d) {
    fmt::print(stderr, "vouch: {}\n", d.error().message);
    return nullptr;
  }
  return std::move(*d);
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

Result<std::vector<int>> CheckGpus(const std::vector<int>& asked, int count) {
  std::vector<int> out;
  if (asked.empty()) {
    for (int i = 0; i < count; ++i) out.push_back(i);
    return out;
  }
  for (int g : asked) {
    if (g < 0 || g >= count)
      return MakeError("--gpu {}: the device has {} GPU(s), numbered 0..{}", g, count, count - 1);
    out.push_back(g);
  }
  return out;
}

}  // namespace vouch::cli
