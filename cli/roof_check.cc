#include "roof_check.h"

#include <fmt/format.h>

#include <algorithm>

#include "roof/calibrate.h"
#include "roof/roof.h"
#include "util/host.h"

namespace vouch::cli {

int RefuseAboveRoof(LegRecord& leg) {
  std::vector<Ceiling> ceilings;
  for (const auto& g : leg.window.gpus) {
    auto sheet = DatasheetCeilings(g.state.name);
    // Measured by vouch doctor --calibrate on this GPU in this boot, where they were.
    auto measured = ReadGpuCeilings(g.state.uuid, leg.window.boot_id);
    if (!measured)
      fmt::print(stderr, "vouch: warning: {} (ignored; run vouch doctor --calibrate again)\n",
                 measured.error().message);
    else
      sheet.insert(sheet.end(), measured->begin(), measured->end());
    // Several GPUs: each quantity's lowest peak (a per-GPU figure is bounded by the slowest).
    for (auto& c : sheet) {
      auto same = std::find_if(ceilings.begin(), ceilings.end(),
                               [&](const Ceiling& x) { return x.quantity == c.quantity; });
      if (same == ceilings.end())
        ceilings.push_back(c);
      else if (c.per_second < same->per_second)
        *same = c;
    }
  }
  if (ceilings.empty()) return 0;
  int refused = 0;
  for (const auto& m : leg.metrics) {
    if (m.text) continue;
    auto check = CheckRate(m.name, m.value, m.unit, 0, ceilings);
    if (!check || !check->refused) continue;
    ++refused;
    leg.valid = false;
    leg.reasons.push_back("refused: " + check->reason);
  }
  return refused;
}

int CalibrateGpus(Device& device, const std::vector<int>& gpus) {
  if (device.Simulated()) {
    fmt::print(stderr,
               "vouch doctor: --calibrate measures a real GPU; the simulated device has none (give "
               "its ceilings in {} instead)\n",
               CeilingsPath(device.Count() > 0 ? device.Static(0).uuid : "UUID"));
    return 1;
  }
  int rc = 0;
  for (int gpu : gpus) {
    const StaticState st = device.Static(gpu);
    auto copy = MeasureCopyBandwidth(st.uuid);
    if (!copy) {
      fmt::print(stderr, "vouch doctor: GPU {} ({}): {}\n", gpu, st.uuid, copy.error().message);
      rc = 1;
      continue;
    }
    GpuCeilings g{st.uuid, st.name, device.BootId(), UnixNowSeconds(), {*copy}};
    if (auto s = WriteGpuCeilings(g); !s) {
      fmt::print(stderr, "vouch doctor: {}\n", s.error().message);
      rc = 1;
      continue;
    }
    fmt::print(
        "GPU {} {} ({}): device-to-device copy {:.3f} TB/s (noise {:.1f} %), kept for boot {} "
        "in {}\n",
        gpu, st.name, st.uuid, copy->per_second / 1e12, 100 * copy->noise, g.boot_id,
        CeilingsPath(st.uuid));
    for (const auto& c : DatasheetCeilings(st.name))
      if (c.quantity == "memory_bandwidth")
        fmt::print("  datasheet ({}) memory bandwidth {:.2f} TB/s: the copy reaches {:.0f} %\n",
                   c.source, c.per_second / 1e12, 100 * copy->per_second / c.per_second);
  }
  return rc;
}

}  // namespace vouch::cli
