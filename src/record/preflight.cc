#include "record/preflight.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "util/escape.h"
#include "util/fs.h"
#include "util/strings.h"

namespace vouch {

Preflight RunPreflight(Device& device, const std::vector<int>& gpus, bool allow_busy,
                       std::uint64_t disk_budget_bytes, const std::string& dir) {
  Preflight p;
  for (int g : gpus) {
    auto procs = device.Processes(g);
    if (!procs) {
      p.warnings.push_back(
          fmt::format("GPU {}: cannot list compute processes: {}", g, procs.error().message));
    } else {
      for (const auto& q : *procs) {
        if (q.pid == static_cast<std::uint32_t>(::getpid())) continue;
        p.busy_processes.push_back(
            {{"gpu", g},
             {"pid", q.pid},
             {"name", q.name},
             {"used_bytes", q.used_bytes ? nlohmann::json(*q.used_bytes) : nlohmann::json()}});
        // Another process names itself: escaped, so that its newline starts no line here.
        std::string what =
            fmt::format("GPU {} is busy: compute process {} ({})", g, q.pid, TerminalSafe(q.name));
        if (allow_busy)
          p.warnings.push_back(what + " (allowed by --allow-busy; numbers may be corrupted)");
        else
          p.problems.push_back(what +
                               ": a busy GPU corrupts numbers; stop it, or pass --allow-busy to "
                               "record it and go on");
      }
    }
    auto mem = device.Memory(g);
    if (mem && mem->free_bytes < (1ull << 30))
      p.warnings.push_back(
          fmt::format("GPU {}: only {} device memory free: on unified-memory and WDDM systems "
                      "allocations spill "
                      "silently and bandwidth falls off a cliff",
                      g, HumanBytes(static_cast<double>(mem->free_bytes))));
  }
  // The run directory may not exist yet: measure the nearest existing parent.
  std::error_code ec;
  std::filesystem::path probe_path = std::filesystem::absolute(dir, ec);
  while (probe_path.has_parent_path() && probe_path != probe_path.root_path() &&
         !std::filesystem::exists(probe_path, ec))
    probe_path = probe_path.parent_path();
  std::string probe = probe_path.string();
  auto free = FreeDiskBytes(probe);
  if (!free)
    p.problems.push_back(free.error().message);
  else if (*free < disk_budget_bytes)
    p.problems.push_back(
        fmt::format("only {} free under {} (budget {}): a full disk voids evidence without failing "
                    "loudly; free "
                    "space or lower --disk-budget-gib",
                    HumanBytes(static_cast<double>(*free)), probe,
                    HumanBytes(static_cast<double>(disk_budget_bytes))));
  p.ok = p.problems.empty();
  return p;
}

}  // namespace vouch
