#include "gputrace/trust.h"

#include <fmt/format.h>

#include <algorithm>

namespace vouch::gputrace {
namespace {

constexpr const char* kWhatToDo =
    "every gpu.* figure of this leg is refused (a zero would be a lie): run the traced leg "
    "without the program's own profiler (torch.profiler, Kineto on-demand tracing, nsys, ncu, "
    "compute-sanitizer; e.g. behind a flag the leg does not set) and profile in a separate run";

// Kernel launches counted inside [B, E]: between the first count line at or after B and the
// last at or before E. Lines come every 100 ms while launches go on, so a region shorter than
// that may show none: a lower bound, never more than happened.
std::int64_t LaunchesInside(const std::vector<std::pair<std::int64_t, std::int64_t>>& marks,
                            std::int64_t b, std::int64_t e) {
  auto first = std::lower_bound(marks.begin(), marks.end(), b,
                                [](const auto& m, std::int64_t ts) { return m.first < ts; });
  auto last = std::upper_bound(marks.begin(), marks.end(), e,
                               [](std::int64_t ts, const auto& m) { return ts < m.first; });
  if (first == marks.end() || last == marks.begin()) return 0;
  --last;
  if (last <= first) return 0;
  return std::max<std::int64_t>(0, last->second - first->second);
}

}  // namespace

std::vector<ProcessCheck> ChecksOf(const trace::Trace& t, std::optional<RegionNs> region) {
  std::vector<ProcessCheck> out;
  for (const auto& c : t.tracer_checks) {
    ProcessCheck p;
    p.pid = c.pid;
    p.counting = c.counting;
    p.subscribe_error = c.subscribe_error;
    p.other_subscriber = c.other_subscriber;
    p.lost = c.lost;
    p.footer = c.footer;
    p.kernel_launches = c.kernel_launches;
    p.kernel_records = c.kernel_records;
    p.cupti = c.cupti;
    if (c.counting) {
      if (region)
        p.region_launches = LaunchesInside(c.marks, region->begin_ns, region->end_ns);
      else if (c.footer && c.kernel_launches >= 0)
        p.region_launches = c.kernel_launches;
      else if (!c.marks.empty())
        p.region_launches = c.marks.back().second;
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::string> TraceRefusals(const LegGpuTrace& g, const WindowSummary* window) {
  std::vector<std::string> out;
  std::int64_t region_launches = 0;
  for (const auto& p : g.checks) {
    if (!p.subscribe_error.empty())
      out.push_back(fmt::format(
          "pid {}: the tracer could not subscribe to CUPTI ({}{}): another CUPTI client is in "
          "the process; {}",
          p.pid, p.subscribe_error,
          p.other_subscriber.empty() ? "" : fmt::format(", held by '{}'", p.other_subscriber),
          kWhatToDo));
    if (!p.lost.empty())
      out.push_back(fmt::format(
          "pid {}: {} vanished while the process ran (another CUPTI client tore CUPTI down: "
          "torch.profiler's Kineto does at its end); {}",
          p.pid, p.lost, kWhatToDo));
    if (p.counting && p.footer && p.kernel_launches >= 0 && p.kernel_records >= 0 &&
        p.kernel_records < p.kernel_launches)
      out.push_back(fmt::format(
          "pid {}: the tracer counted {} kernel launches and received {} kernel records: "
          "another CUPTI client in the process (torch.profiler, Kineto, nsys, a sanitizer) took "
          "the other {}; {}",
          p.pid, p.kernel_launches, p.kernel_records, p.kernel_launches - p.kernel_records,
          kWhatToDo));
    if (p.counting) region_launches += p.region_launches;
  }
  const char* where = g.region_marked ? "the measured region" : "the traced run";
  if (g.kernels == 0 && region_launches > 0)
    out.push_back(fmt::format(
        "{} had at least {} kernel launches (counted by the tracer) and the trace holds no "
        "kernel in it: the records went elsewhere; {}",
        where, region_launches, kWhatToDo));
  if (g.kernels == 0 && window)
    for (const auto& w : window->gpus)
      if (w.fold.busy_readings > 0) {
        out.push_back(fmt::format(
            "GPU {} was busy in {} of {} readings over {} and the trace holds no kernel in it: "
            "the tracer did not see this work; {}",
            w.fold.gpu, w.fold.busy_readings, w.fold.readings, where, kWhatToDo));
        break;
      }
  return out;
}

nlohmann::json ChecksToJson(const std::vector<ProcessCheck>& checks) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& p : checks)
    a.push_back({{"pid", p.pid},
                 {"counting", p.counting},
                 {"subscribe_error", p.subscribe_error},
                 {"other_subscriber", p.other_subscriber},
                 {"lost", p.lost},
                 {"footer", p.footer},
                 {"kernel_launches", p.kernel_launches},
                 {"kernel_records", p.kernel_records},
                 {"region_launches", p.region_launches},
                 {"cupti", p.cupti}});
  return a;
}

Result<std::vector<ProcessCheck>> ChecksFromJson(const nlohmann::json& checks,
                                                 const std::string& where) {
  std::vector<ProcessCheck> out;
  if (checks.is_null()) return out;
  if (!checks.is_array()) return MakeError("{}: \"tracer_checks\" is not an array", where);
  try {
    for (const auto& c : checks) {
      ProcessCheck p;
      p.pid = c.at("pid").get<std::int64_t>();
      p.counting = c.at("counting").get<bool>();
      p.subscribe_error = c.at("subscribe_error").get<std::string>();
      p.other_subscriber = c.at("other_subscriber").get<std::string>();
      p.lost = c.at("lost").get<std::string>();
      p.footer = c.at("footer").get<bool>();
      p.kernel_launches = c.at("kernel_launches").get<std::int64_t>();
      p.kernel_records = c.at("kernel_records").get<std::int64_t>();
      p.region_launches = c.at("region_launches").get<std::int64_t>();
      p.cupti = c.value("cupti", "");
      out.push_back(std::move(p));
    }
  } catch (const nlohmann::json::exception& e) {
    return MakeError("{}: malformed \"tracer_checks\": {}", where, e.what());
  }
  return out;
}

}  // namespace vouch::gputrace
