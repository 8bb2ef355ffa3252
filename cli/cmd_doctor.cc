// vouch doctor: is this machine fit to measure? GPUs and their static state, current clocks
// and event reasons, other compute processes, free device memory, free disk, the lock, the
// boot id. Exit 0 when fit, 1 with the reasons.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "clock/measure.h"
#include "common.h"
#include "lock/lock.h"
#include "number_flag.h"
#include "roof_check.h"
#include "util/escape.h"
#include "util/fs.h"
#include "util/host.h"
#include "util/json_io.h"
#include "util/strings.h"

namespace vouch::cli {

int CmdDoctor(const GlobalOptions& g, std::vector<std::string> args) {
  CLI::App app{"Readiness report: is this machine fit to measure?", "doctor"};
  bool json = false;
  double disk_budget_gib = 1.0;
  double low_mem_gib = 1.0;
  std::string dir = ".";
  std::vector<int> asked;
  AddGpuOption(app, asked,
               "GPUs you will measure on (default: those CUDA_VISIBLE_DEVICES names, else all); "
               "a busy GPU outside them is a warning, not a problem");
  app.add_flag("--json", json, "machine-readable output");
  app.add_option("--disk-budget-gib", disk_budget_gib,
                 "free disk needed where evidence goes (1 GiB)")
      ->check(NumberFlag(NotNegative(kMaxGib)));
  app.add_option("--dir", dir, "where evidence will be written (for the free-disk check)");
  app.add_option("--low-device-memory-gib", low_mem_gib,
                 "warn when a GPU has less free memory than this (1 GiB)")
      ->check(NumberFlag(NotNegative(kMaxGib)));
  bool calibrate = false;
  app.add_flag("--calibrate", calibrate,
               "measure each GPU's device-to-device copy bandwidth (a few seconds, CUDA driver "
               "API) and keep it for this boot: metrics above it are refused (`vouch help roof`)");
  if (int rc = Parse(app, args); rc >= 0) return rc;

  std::vector<std::string> problems, warnings;
  nlohmann::json report;
  HostInfo host = ReadHostInfo();
  report["host"] = {{"hostname", host.hostname},
                    {"kernel", host.kernel},
                    {"cpu", host.cpu},
                    {"boot_id", host.boot_id},
                    {"load_1m", LoadAverage1m()}};
  auto dev = OpenDevice(g);
  if (!dev) return kExitError;
  Device& d = *dev;
  report["device"] = d.Describe();
  report["simulated"] = d.Simulated();
  report["boot_id"] = d.BootId();
  if (d.Count() == 0) problems.push_back("no GPU found");
  std::vector<int> chosen;
  std::string source;
  if (d.Count() > 0) {
    auto sel = ChooseGpus(asked, d, {});
    if (!sel) {
      if (!asked.empty()) {
        fmt::print(stderr, "vouch doctor: {}\n", sel.error().message);
        return kExitUsage;
      }
      problems.push_back(sel.error().message);
    } else {
      chosen = sel->gpus;
      source = sel->source;
      for (const auto& n : sel->notes) warnings.push_back(n);
    }
  }
  report["gpu_selection"] = {{"gpus", chosen}, {"source", source}};
  if (calibrate) return CalibrateGpus(d, chosen);
  nlohmann::json gpus = nlohmann::json::array();
  for (int i = 0; i < d.Count(); ++i) {
    bool measured = std::find(chosen.begin(), chosen.end(), i) != chosen.end();
    StaticState st = d.Static(i);
    Sample now = d.Poll(i);
    nlohmann::json gj = {{"static", ToJson(st)}, {"now", ToJson(now)}};
    if (now.reasons) gj["now"]["reason_names"] = ReasonNames(*now.reasons);
    auto mem = d.Memory(i);
    if (mem) {
      gj["memory"] = {{"total_bytes", mem->total_bytes},
                      {"free_bytes", mem->free_bytes},
                      {"used_bytes", mem->used_bytes}};
      if (mem->free_bytes < static_cast<std::uint64_t>(low_mem_gib * (1ull << 30)))
        warnings.push_back(
            fmt::format("GPU {}: only {} of device memory free; on unified-memory and WDDM systems "
                        "allocations then spill silently and bandwidth falls off a cliff",
                        i, HumanBytes(static_cast<double>(mem->free_bytes))));
    } else {
      gj["memory"] = mem.error().message;
    }
    auto procs = d.Processes(i);
    nlohmann::json pj = nlohmann::json::array();
    if (procs) {
      for (const auto& p : *procs) {
        if (p.pid == static_cast<std::uint32_t>(::getpid())) continue;
        pj.push_back(
            {{"pid", p.pid},
             {"name", p.name},
             {"used_bytes", p.used_bytes ? nlohmann::json(*p.used_bytes) : nlohmann::json()}});
        std::string busy = fmt::format(
            "GPU {} is busy: compute process {} ({}) holds {}", i, p.pid, TerminalSafe(p.name),
            p.used_bytes ? HumanBytes(static_cast<double>(*p.used_bytes)) : "memory");
        if (measured)
          problems.push_back(busy + "; a busy GPU corrupts numbers. Stop it or wait for it");
        else
          warnings.push_back(busy + fmt::format(" (not a GPU to measure on: {})", source));
      }
    } else {
      warnings.push_back(
          fmt::format("GPU {}: cannot list compute processes: {}", i, procs.error().message));
    }
    gj["processes"] = pj;
    if (now.reasons) {
      for (std::uint64_t bit : {0x8ull, 0x20ull, 0x40ull, 0x80ull})
        if (*now.reasons & bit)
          warnings.push_back(fmt::format("GPU {}: clock event reason {} is active now: {}", i,
                                         ReasonName(bit), ReasonAdvice(bit)));
    }
    gpus.push_back(gj);
  }
  report["gpus"] = gpus;
  report["not_supported"] = d.NotSupported();

  auto free_disk = FreeDiskBytes(dir);
  if (free_disk) {
    report["disk"] = {{"dir", std::filesystem::absolute(dir).string()}, {"free_bytes", *free_disk}};
    if (*free_disk < static_cast<std::uint64_t>(disk_budget_gib * (1ull << 30)))
      problems.push_back(fmt::format(
          "only {} free under {} (budget {:.1f} GiB): a full disk does not fail loudly, it voids "
          "evidence; free space first",
          HumanBytes(static_cast<double>(*free_disk)), dir, disk_budget_gib));
  } else {
    problems.push_back(free_disk.error().message);
  }
  auto lock = ReadLockState(g.lock_path);
  if (lock) {
    report["lock"] = {{"file", g.lock_path}, {"held", lock->held}};
    if (lock->held && lock->holder) report["lock"]["holder"] = DescribeHolder(*lock->holder);
    if (lock->held)
      problems.push_back(fmt::format(
          "the measurement lock {} is held by {}: another measurement is running", g.lock_path,
          lock->holder ? DescribeHolder(*lock->holder) : "an unknown process"));
  } else {
    problems.push_back(lock.error().message);
  }
  report["problems"] = problems;
  report["warnings"] = warnings;
  report["fit"] = problems.empty();

  if (json) {
    fmt::print("{}\n", DumpJson(report, 2));
  } else {
    if (d.Simulated())
      fmt::print("SIMULATED DEVICE: {}\n", d.Describe());
    else
      fmt::print("device: {}\n", d.Describe());
    fmt::print("host {} ({}), boot id {}\n", TerminalSafe(host.hostname), TerminalSafe(host.kernel),
               TerminalSafe(d.BootId()));
    if (!chosen.empty())
      fmt::print("GPUs to measure on: {} ({})\n", fmt::join(chosen, ","), source);
    for (int i = 0; i < d.Count(); ++i) {
      const auto& gj = gpus[static_cast<size_t>(i)];
      const auto& st = gj["static"];
      const auto& now = gj["now"];
      auto num = [](const nlohmann::json& j, const char* k) {
        return j.contains(k) && !j[k].is_null() ? DumpJson(j[k]) : std::string("n/a");
      };
      // What the driver, another process or the host names is printed escaped (a newline in a
      // process's name must not start a line of its own).
      const auto text = [](const nlohmann::json& j) { return TerminalSafe(j.get<std::string>()); };
      fmt::print("GPU {}: {} {} bus {}\n", i, text(st["name"]), text(st["uuid"]),
                 text(st["pci_bus_id"]));
      fmt::print(
          "  driver {} (CUDA {}), max SM {} MHz, applications clock {} MHz, persistence {}\n",
          text(st["driver_version"]), text(st["cuda_driver_version"]), num(st, "max_sm_mhz"),
          num(st, "app_sm_mhz"), num(st, "persistence"));
      fmt::print(
          "  now: SM {} MHz, memory {} MHz, {} mW, util {} %, {} C, reasons {}\n",
          num(now, "sm_mhz"), num(now, "mem_mhz"), num(now, "power_mw"), num(now, "util_gpu_pct"),
          num(now, "temp_c"),
          !now.contains("reason_names") ? std::string("n/a")
          : now["reason_names"].empty()
              ? std::string("none")  // no bit set: said, not left blank
              : fmt::format("{}",
                            fmt::join(now["reason_names"].get<std::vector<std::string>>(), ",")));
      if (gj["memory"].is_object())
        fmt::print("  memory: {} free of {}\n",
                   HumanBytes(gj["memory"]["free_bytes"].get<double>()),
                   HumanBytes(gj["memory"]["total_bytes"].get<double>()));
      std::vector<std::string> procs;
      for (const auto& p : gj["processes"])
        procs.push_back(
            fmt::format("pid {} {}{}", p["pid"].get<std::uint32_t>(), text(p["name"]),
                        p["used_bytes"].is_number()
                            ? fmt::format(" (holds {})", HumanBytes(p["used_bytes"].get<double>()))
                            : std::string()));
      fmt::print("  compute processes: {}\n",
                 procs.empty() ? std::string("none") : fmt::format("{}", fmt::join(procs, ", ")));
    }
    if (free_disk)
      fmt::print("disk: {} free under {}\n", HumanBytes(static_cast<double>(*free_disk)), dir);
    fmt::print("lock {}: {}\n", g.lock_path, lock && lock->held ? "HELD" : "free");
    for (const auto& n : d.NotSupported()) fmt::print("not supported: {}\n", n);
    for (const auto& w : warnings) fmt::print("warning: {}\n", w);
    for (const auto& p : problems) fmt::print("NOT FIT: {}\n", p);
    if (problems.empty())
      fmt::print("fit to measure\n");
    else
      fmt::print("not fit to measure ({} problem(s))\n", problems.size());
  }
  return problems.empty() ? kExitOk : kExitError;
}

}  // namespace vouch::cli
