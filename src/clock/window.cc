#include "clock/window.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "util/bounded_file.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "util/strings.h"

namespace vouch {
namespace {

// Rules compare at their boundary: 5 % passes, 5.0001 % does not. The tolerance only
// absorbs the rounding of (max - min) / median in binary floating point.
constexpr double kEps = 1e-12;

std::string Pct(double x) { return fmt::format("{:.2f} %", 100 * x); }

std::string DominantReasonAdvice(const Fold& f) {
  std::string worst;
  double share = 0;
  for (const auto& [name, frac] : f.busy_fraction_by_reason) {
    if (name == "gpu_idle") continue;
    if (frac > share) {
      share = frac;
      worst = name;
    }
  }
  if (worst.empty()) return "no clock event reason was active: the driver moved the clock itself";
  for (int b = 0; b < 64; ++b) {
    if (ReasonName(1ull << b) == worst)
      return fmt::format("reason {} in {:.0f} % of busy readings: {}", worst, 100 * share,
                         ReasonAdvice(1ull << b));
  }
  return "";
}

}  // namespace

const char* ToString(WindowStatus s) {
  switch (s) {
    case WindowStatus::kValid:
      return "valid";
    case WindowStatus::kInvalid:
      return "invalid";
    case WindowStatus::kIdle:
      return "idle";
  }
  return "?";
}

double RelativeOffset(double a, double b) {
  double lo = std::min(a, b);
  if (!(lo > 0)) return std::nan("");
  return std::fabs(a - b) / lo;
}

// The leg's own allocations (not the free figure before it) nearly filled the GPU.
std::optional<std::string> MemoryWarning(const GpuWindow& g, const Policy& p,
                                         const std::string& prefix) {
  const auto& peak = g.fold.peak_mem_used_bytes;
  const auto& total = g.state.total_mem_bytes;
  if (!peak || !total || *total == 0) return std::nullopt;
  const double used = static_cast<double>(*peak) / static_cast<double>(*total);
  if (used < 1 - p.memory_margin) return std::nullopt;
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  return fmt::format(
      "{}peak memory used {:.2f} of {:.2f} GiB ({:.1f} %) is within {:g} % of the GPU's total: "
      "the leg's own allocations nearly filled it; where memory is unified or WDDM-managed the "
      "next allocation spills silently into host memory and bandwidth collapses, so check the "
      "number against a run with headroom",
      prefix, static_cast<double>(*peak) / kGiB, static_cast<double>(*total) / kGiB, 100 * used,
      100 * p.memory_margin);
}

std::vector<std::string> JudgeFold(const Fold& f, const Policy& p, const std::string& prefix) {
  std::vector<std::string> r;
  if (f.busy_readings < p.min_busy_readings) {
    r.push_back(fmt::format(
        "{}only {} busy readings (the policy needs at least {}): at a {:.0f} ms update period "
        "the GPU was seen busy for about {:.1f} s; give the command more work (more iterations) "
        "so the window holds at least {:.1f} s of GPU work",
        prefix, f.busy_readings, p.min_busy_readings, 1000 * f.update_period_s,
        f.busy_readings * f.update_period_s, p.min_busy_readings * f.update_period_s));
  }
  if (f.busy_fraction <= p.min_busy_fraction + kEps) {
    r.push_back(fmt::format(
        "{}busy readings are {} of the window ({} of {}); the policy needs more than {}: the "
        "GPU sat idle for most of the window (start-up, loading, host work); mark the measured "
        "region with {{\"event\":\"begin\"}} and {{\"event\":\"end\"}} lines on VOUCH_METRICS, "
        "or give the command more GPU work",
        prefix, Pct(f.busy_fraction), f.busy_readings, f.readings, Pct(p.min_busy_fraction)));
  }
  if (!f.sm_mhz) {
    r.push_back(
        fmt::format("{}no SM clock reading in the busy part of the window: the device did "
                    "not report the SM clock, so no number can be clock-attributed",
                    prefix));
  } else if (f.spread && *f.spread > p.max_spread + kEps) {
    r.push_back(fmt::format(
        "{}SM clock spread {} ({:.0f}-{:.0f} MHz around a median of {:.0f}) is above the {} "
        "ceiling: the clock wandered during the window ({}); a number taken over it cannot be "
        "attributed to one clock",
        prefix, Pct(*f.spread), f.sm_mhz->min, f.sm_mhz->max, f.sm_mhz->median, Pct(p.max_spread),
        DominantReasonAdvice(f)));
  }
  return r;
}

WindowVerdict JudgeWindow(const std::vector<GpuWindow>& gpus, const Policy& p,
                          const std::string& source) {
  WindowVerdict v;
  if (gpus.empty()) {
    v.status = WindowStatus::kIdle;
    v.reasons.push_back("no GPU was sampled");
    return v;
  }
  int busy_gpus = 0;
  for (const auto& g : gpus)
    if (g.fold.busy_readings > 0) ++busy_gpus;
  bool several = gpus.size() > 1;
  std::string named_by = source.empty() ? "it was named" : fmt::format("{} names it", source);
  for (const auto& g : gpus) {
    const Fold& f = g.fold;
    GpuVerdict gv;
    gv.gpu = f.gpu;
    std::string prefix = several ? fmt::format("GPU {}: ", f.gpu) : "";
    if (f.busy_readings == 0) {
      if (several && !g.named && busy_gpus > 0) {
        gv.status = "unused";
        v.notes.push_back(fmt::format(
            "GPU {} sat idle throughout ({} readings): not used by the command, not judged", f.gpu,
            f.readings));
      } else {
        gv.status = "idle";
        std::string why =
            several && g.named
                ? fmt::format(
                      "GPU {} sat idle for the whole window (no busy reading in {}) although {}: "
                      "the command did not use it (a rank that failed, waited or fell back?), so "
                      "the window cannot stand for a run on these GPUs",
                      f.gpu, f.readings, named_by)
                : fmt::format(
                      "GPU {}: no busy reading in {} readings ({} polls): the GPU was idle for "
                      "the whole window (idle reason set or utilization 0); did the command use "
                      "this GPU?",
                      f.gpu, f.readings, f.polls);
        gv.reasons.push_back(why);
        v.reasons.push_back(why);
      }
      v.gpus.push_back(std::move(gv));
      continue;
    }
    gv.reasons = JudgeFold(f, p, prefix);
    if (p.max_throttled_share && g.throttle)
      if (auto why = ThrottleRefusal(*g.throttle, *p.max_throttled_share))
        gv.reasons.push_back(prefix + *why);
    gv.status = gv.reasons.empty() ? "valid" : "invalid";
    v.reasons.insert(v.reasons.end(), gv.reasons.begin(), gv.reasons.end());
    if (f.polls_slower_than_updates)
      v.warnings.push_back(fmt::format(
          "{}polled every {:.0f} ms, slower than the driver's update period ({:.0f} ms, the "
          "policy's: polls this slow cannot measure it): about {} of {} readings were missed and "
          "the window counts only the {} it saw; poll at half the period or faster "
          "(--interval-ms 10, the default)",
          prefix, 1000 * f.poll_interval_s, 1000 * f.update_period_s, f.missed_readings,
          f.missed_readings + f.readings, f.readings));
    else if (f.missed_readings > 0)
      v.notes.push_back(fmt::format("{}{} driver readings fell between polls (sampler stalled?)",
                                    prefix, f.missed_readings));
    if (auto w = MemoryWarning(g, p, prefix)) v.warnings.push_back(*w);
    for (const auto& d : f.driver)
      if (d.missed > 0)
        v.warnings.push_back(
            fmt::format("{}the polls missed {} of {} driver readings of {} (every {:.0f} ms by the "
                        "driver's own "
                        "timestamps, nvmlDeviceGetSamples)",
                        prefix, d.missed, d.readings, d.quantity, 1000 * d.period_s));
    if (!f.period_measured && !f.polls_slower_than_updates)
      v.notes.push_back(
          fmt::format("{}too few value changes to measure the update period; assumed {:.0f} ms",
                      prefix, 1000 * f.update_period_s));
    v.gpus.push_back(std::move(gv));
  }
  if (busy_gpus == 0)
    v.status = WindowStatus::kIdle;
  else
    v.status = v.reasons.empty() ? WindowStatus::kValid : WindowStatus::kInvalid;
  return v;
}

namespace {
std::optional<double> Pacing(const WindowSummary& w, bool mean) {
  std::optional<double> out;
  for (const auto& g : w.gpus) {
    if (g.fold.busy_readings == 0 || !g.fold.sm_mhz) continue;
    double x = mean ? g.fold.sm_mhz->mean : g.fold.sm_mhz->median;
    if (!std::isfinite(x)) continue;
    if (!out || x < *out) out = x;
  }
  return out;
}
}  // namespace

std::optional<double> PacingClockMean(const WindowSummary& w) { return Pacing(w, true); }
std::optional<double> PacingClockMedian(const WindowSummary& w) { return Pacing(w, false); }

nlohmann::json ToJson(const WindowSummary& w) {
  nlohmann::json gpus = nlohmann::json::array();
  for (size_t i = 0; i < w.gpus.size(); ++i) {
    const auto& g = w.gpus[i];
    nlohmann::json gj = {{"static", ToJson(g.state)}, {"fold", ToJson(g.fold)}, {"named", g.named}};
    if (g.throttle) gj["throttle"] = ToJson(*g.throttle);
    if (i < w.verdict.gpus.size())
      gj["verdict"] = {{"status", w.verdict.gpus[i].status},
                       {"reasons", w.verdict.gpus[i].reasons}};
    gpus.push_back(std::move(gj));
  }
  nlohmann::json j = {
      {"schema", "vouch.window"},
      {"schema_version", w.schema_version},
      {"simulated", w.simulated},
      {"device", w.device},
      {"host", {{"hostname", w.hostname}, {"kernel", w.kernel}, {"boot_id", w.boot_id}}},
      {"command", w.command},
      {"started_unix_s", w.started_unix_s},
      {"ended_unix_s", w.ended_unix_s},
      {"policy", ToJson(w.policy)},
      {"gpus", gpus},
      {"gpu_source", w.gpu_source},
      {"caveats", w.caveats},
      {"samples_file", w.samples_file},
      {"verdict",
       {{"status", ToString(w.verdict.status)},
        {"reasons", w.verdict.reasons},
        {"notes", w.verdict.notes},
        {"warnings", w.verdict.warnings}}}};
  if (w.region_begin_unix_s && w.region_end_unix_s)
    j["region"] = {{"begin_unix_s", *w.region_begin_unix_s}, {"end_unix_s", *w.region_end_unix_s}};
  else
    j["region"] = nullptr;
  return j;
}

const JsonSchema& WindowSummarySchema() {
  const JsonSchema strings = JsonSchema::Array(JsonSchema::String());
  static const JsonSchema s = JsonSchema::Object({
      Must("schema", JsonSchema::String()),
      Must("schema_version", JsonSchema::Integer(0, 1000000)),
      Must("simulated", JsonSchema::Bool()),
      May("device", JsonSchema::String()),
      Must("host", JsonSchema::Object({May("hostname", JsonSchema::String()),
                                       May("kernel", JsonSchema::String()),
                                       May("boot_id", JsonSchema::String())})),
      May("command", strings),
      May("started_unix_s", JsonSchema::Number()),
      May("ended_unix_s", JsonSchema::Number()),
      Must("policy", PolicySchema()),
      Must("gpus", JsonSchema::Array(JsonSchema::Object(
                       {Must("static", StaticStateSchema()), Must("fold", FoldSchema()),
                        May("named", JsonSchema::Bool()), May("throttle", ThrottleFoldSchema()),
                        May("verdict", JsonSchema::Object({Must("status", JsonSchema::String()),
                                                           May("reasons", strings)}))}))),
      May("gpu_source", JsonSchema::String()),
      May("caveats", strings),
      May("samples_file", JsonSchema::String()),
      May("region", JsonSchema::Object({Must("begin_unix_s", JsonSchema::Number()),
                                        Must("end_unix_s", JsonSchema::Number())})
                        .OrNull()),
      Must("verdict",
           JsonSchema::Object({Must("status", JsonSchema::String()), May("reasons", strings),
                               May("notes", strings), May("warnings", strings)})),
  });
  return s;
}

Status CheckWindowHeader(const nlohmann::json& j, std::string_view where) {
  if (!j.is_object()) return MakeError("{}: not a window summary (expected a JSON object)", where);
  auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_string() || *schema != "vouch.window")
    return MakeError("{}: not a vouch window summary (schema is not 'vouch.window')", where);
  auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer() || *version != 1)
    return MakeError("{}: window schema version {} is not one this vouch reads (1); upgrade vouch",
                     where, version == j.end() ? std::string("(none)") : DumpJson(*version));
  return OkStatus();
}

namespace {

// The summary of J, whose header and WindowSummarySchema were checked: the policy, static
// states and folds are parts of that schema, so none of them is walked again.
WindowSummary WindowSummaryOfChecked(const nlohmann::json& j) {
  WindowSummary w;
  w.simulated = j.at("simulated").get<bool>();
  w.device = j.value("device", "");
  const auto& h = j.at("host");
  w.hostname = h.value("hostname", "");
  w.kernel = h.value("kernel", "");
  w.boot_id = h.value("boot_id", "");
  w.command = j.value("command", std::vector<std::string>{});
  w.started_unix_s = j.value("started_unix_s", 0.0);
  w.ended_unix_s = j.value("ended_unix_s", 0.0);
  w.policy = PolicyFromCheckedJson(j.at("policy"));
  for (const auto& g : j.at("gpus")) {
    w.gpus.push_back({StaticStateFromCheckedJson(g.at("static")), FoldFromCheckedJson(g.at("fold")),
                      g.value("named", false), std::nullopt});
    if (g.contains("throttle"))
      w.gpus.back().throttle = ThrottleFoldFromCheckedJson(g.at("throttle"));
    if (g.contains("verdict")) {
      const auto& gv = g.at("verdict");
      w.verdict.gpus.push_back({w.gpus.back().fold.gpu, gv.at("status").get<std::string>(),
                                gv.value("reasons", std::vector<std::string>{})});
    }
  }
  w.gpu_source = j.value("gpu_source", "");
  w.caveats = j.value("caveats", std::vector<std::string>{});
  w.samples_file = j.value("samples_file", "");
  if (j.contains("region") && j["region"].is_object()) {
    w.region_begin_unix_s = j["region"].at("begin_unix_s").get<double>();
    w.region_end_unix_s = j["region"].at("end_unix_s").get<double>();
  }
  const auto& v = j.at("verdict");
  std::string status = v.at("status").get<std::string>();
  w.verdict.status = status == "valid"     ? WindowStatus::kValid
                     : status == "invalid" ? WindowStatus::kInvalid
                                           : WindowStatus::kIdle;
  w.verdict.reasons = v.value("reasons", std::vector<std::string>{});
  w.verdict.notes = v.value("notes", std::vector<std::string>{});
  w.verdict.warnings = v.value("warnings", std::vector<std::string>{});
  return w;
}

}  // namespace

Result<WindowSummary> WindowSummaryFromJson(const nlohmann::json& j, const std::string& where) {
  if (auto h = CheckWindowHeader(j, where); !h) return h.error();
  if (auto ok = WindowSummarySchema().Check(j, where); !ok) return ok.error();
  return WindowSummaryOfChecked(j);
}

Result<WindowSummary> WindowSummaryFromCheckedJson(const nlohmann::json& j,
                                                   const std::string& where) {
  // The schema does not fix the header's values: they are checked here, always.
  if (auto h = CheckWindowHeader(j, where); !h) return h.error();
  return WindowSummaryOfChecked(j);
}

Result<WindowSummary> ReadWindowSummary(const std::string& path) {
  auto j = ReadJsonFile(path, kMaxRecordFileBytes);
  if (!j) return j.error();
  return WindowSummaryFromJson(*j, path);
}

std::string RenderWindowText(const WindowSummary& w) {
  std::string out;
  if (w.simulated)
    out += fmt::format("SIMULATED DEVICE: {}\n", w.device);
  else
    out += fmt::format("device: {}\n", w.device);
  out += fmt::format("host {} boot {}\n", w.hostname, w.boot_id);
  if (w.region_begin_unix_s)
    out += fmt::format("judged over the measured region ({:.2f} s of a {:.2f} s window)\n",
                       *w.region_end_unix_s - *w.region_begin_unix_s,
                       w.ended_unix_s - w.started_unix_s);
  if (!w.gpu_source.empty()) out += fmt::format("GPUs sampled: {}\n", w.gpu_source);
  for (size_t i = 0; i < w.gpus.size(); ++i) {
    const auto& g = w.gpus[i];
    const Fold& f = g.fold;
    std::string status;
    if (i < w.verdict.gpus.size() && w.gpus.size() > 1) {
      const std::string& st = w.verdict.gpus[i].status;
      status = st == "unused" ? ": unused (idle, not named: not judged)"
               : st == "idle" ? ": IDLE (named, but never busy)"
                              : ": " + st;
    }
    out += fmt::format("GPU {} {} ({}){}\n", f.gpu, g.state.name, g.state.uuid, status);
    out += fmt::format(
        "  readings {} ({} polls, update period {:.0f} ms{}), busy {} ({:.1f} %), idle {}, missed "
        "{}\n",
        f.readings, f.polls, 1000 * f.update_period_s,
        f.period_measured             ? " measured"
        : f.polls_slower_than_updates ? fmt::format(" assumed: polled every {:.0f} ms, too slow to "
                                                    "measure it",
                                                    1000 * f.poll_interval_s)
                                      : std::string(" assumed"),
        f.busy_readings, 100 * f.busy_fraction, f.idle_readings, f.missed_readings);
    if (f.sm_mhz)
      out += fmt::format(
          "  SM clock (busy) min {:.0f} median {:.0f} mean {:.1f} max {:.0f} MHz, spread {:.2f} "
          "%\n",
          f.sm_mhz->min, f.sm_mhz->median, f.sm_mhz->mean, f.sm_mhz->max,
          100 * f.spread.value_or(0));
    if (f.mem_mhz) out += fmt::format("  memory clock median {:.0f} MHz\n", f.mem_mhz->median);
    if (g.throttle) out += "  " + RenderThrottleLine(*g.throttle) + "\n";
    for (const auto& d : f.driver)
      out += fmt::format(
          "  driver samples ({}): {} readings every {:.0f} ms, {} missed by the polls\n",
          d.quantity, d.readings, 1000 * d.period_s, d.missed);
    if (f.power_mw)
      out += fmt::format("  power median {:.1f} W, max {:.1f} W\n", f.power_mw->median / 1000,
                         f.power_mw->max / 1000);
    if (!f.busy_fraction_by_reason.empty()) {
      out += "  event reasons while busy:";
      for (const auto& [name, frac] : f.busy_fraction_by_reason)
        out += fmt::format(" {} {:.0f} %", name, 100 * frac);
      out += "\n";
    }
    if (g.state.max_sm_mhz)
      out += fmt::format("  max SM clock {} MHz, applications clock {} MHz, persistence {}\n",
                         *g.state.max_sm_mhz,
                         g.state.app_sm_mhz ? fmt::format("{}", *g.state.app_sm_mhz) : "n/a",
                         g.state.persistence ? (*g.state.persistence ? "on" : "off") : "n/a");
  }
  out += fmt::format("verdict: {}\n", ToString(w.verdict.status));
  for (const auto& r : w.verdict.reasons) out += fmt::format("  - {}\n", r);
  for (const auto& n : w.verdict.warnings) out += fmt::format("  warning: {}\n", n);
  for (const auto& n : w.verdict.notes) out += fmt::format("  note: {}\n", n);
  for (const auto& c : w.caveats) out += fmt::format("  caveat: {}\n", c);
  return out;
}

PairVerdict PairWindows(const WindowSummary& a, const WindowSummary& b, const Policy& p,
                        bool allow_cross_boot) {
  PairVerdict v;
  auto add = [&](std::string rule, std::string va, std::string vb, bool pass,
                 bool waivable = false) {
    PairRule r{std::move(rule), std::move(va), std::move(vb), pass, false};
    if (!pass && waivable && allow_cross_boot) r.waived = true;
    v.rules.push_back(std::move(r));
  };
  auto opt = [](const auto& o) { return o ? fmt::format("{}", *o) : std::string("n/a"); };
  // Each window's own status under its own column; "-" where the rule says nothing.
  add("window A valid", ToString(a.verdict.status), "-", a.verdict.status == WindowStatus::kValid);
  add("window B valid", "-", ToString(b.verdict.status), b.verdict.status == WindowStatus::kValid);
  if (a.simulated != b.simulated)
    add("both simulated or both real", a.simulated ? "simulated" : "real",
        b.simulated ? "simulated" : "real", false);
  // GPU by GPU, matched by UUID: the same GPUs, each with the same static state, and each
  // busy GPU on the same clock. A GPU idle in both windows is not compared on its clock.
  auto uuids = [](const WindowSummary& w) {
    std::vector<std::string> u;
    for (const auto& g : w.gpus) u.push_back(g.state.uuid);
    return u;
  };
  auto sorted = [](std::vector<std::string> u) {
    std::sort(u.begin(), u.end());
    return u;
  };
  bool same_set = sorted(uuids(a)) == sorted(uuids(b)) && !a.gpus.empty();
  bool several = a.gpus.size() > 1 || b.gpus.size() > 1;
  if (!same_set || several)
    add("the same GPUs (UUIDs)", fmt::format("{}", fmt::join(uuids(a), ",")),
        fmt::format("{}", fmt::join(uuids(b), ",")), same_set);
  for (const auto& ga : a.gpus) {
    auto it = std::find_if(b.gpus.begin(), b.gpus.end(),
                           [&](const GpuWindow& x) { return x.state.uuid == ga.state.uuid; });
    if (it == b.gpus.end()) continue;
    const auto& gb = *it;
    std::string g = several ? fmt::format("GPU {}: ", ga.state.index) : "";
    if (!several) add("GPU (UUID)", ga.state.uuid, gb.state.uuid, ga.state.uuid == gb.state.uuid);
    add(g + "driver", ga.state.driver_version, gb.state.driver_version,
        ga.state.driver_version == gb.state.driver_version);
    add(g + "max SM clock (MHz)", opt(ga.state.max_sm_mhz), opt(gb.state.max_sm_mhz),
        ga.state.max_sm_mhz == gb.state.max_sm_mhz);
    add(g + "applications clock (MHz)", opt(ga.state.app_sm_mhz), opt(gb.state.app_sm_mhz),
        ga.state.app_sm_mhz == gb.state.app_sm_mhz);
    add(g + "persistence mode", opt(ga.state.persistence), opt(gb.state.persistence),
        ga.state.persistence == gb.state.persistence);
    bool busy_a = ga.fold.busy_readings > 0, busy_b = gb.fold.busy_readings > 0;
    if (several && !busy_a && !busy_b) {
      add(g + "used in either window", "idle (unused)", "idle (unused)", true);
      continue;
    }
    if (several && busy_a != busy_b) {
      auto used = [](const Fold& f) {
        return f.busy_readings > 0 ? fmt::format("busy ({} readings)", f.busy_readings)
                                   : std::string("idle throughout");
      };
      add(g + "used in both windows", used(ga.fold), used(gb.fold), false);
      continue;
    }
    const auto& sa = ga.fold.sm_mhz;
    const auto& sb = gb.fold.sm_mhz;
    if (!sa || !sb) {
      add(g + "busy SM clock recorded", sa ? "yes" : "no", sb ? "yes" : "no", false);
      continue;
    }
    double med = RelativeOffset(sa->median, sb->median);
    add(g + fmt::format("SM clock median offset <= {}", Pct(p.max_median_offset)),
        fmt::format("{:.1f} MHz", sa->median), fmt::format("{:.1f} MHz ({})", sb->median, Pct(med)),
        med <= p.max_median_offset + kEps);
    // A window recorded without a mean is refused, not skipped: the excursions below the
    // median are the part that does not cancel between arms.
    bool has_mean = std::isfinite(sa->mean) && std::isfinite(sb->mean);
    if (!has_mean) {
      add(g + "SM clock mean recorded", std::isfinite(sa->mean) ? "yes" : "no (re-record it)",
          std::isfinite(sb->mean) ? "yes" : "no (re-record it)", false);
    } else {
      double mean = RelativeOffset(sa->mean, sb->mean);
      add(g + fmt::format("SM clock mean offset <= {}", Pct(p.max_mean_offset)),
          fmt::format("{:.1f} MHz", sa->mean), fmt::format("{:.1f} MHz ({})", sb->mean, Pct(mean)),
          mean <= p.max_mean_offset + kEps);
    }
  }
  add("boot id", a.boot_id, b.boot_id, a.boot_id == b.boot_id && !a.boot_id.empty(), true);
  v.paired = true;
  for (const auto& r : v.rules) {
    if (r.waived)
      v.caveats.push_back(
          fmt::format("cross-boot pair ({} vs {}) allowed by --allow-cross-boot: the SM clock can "
                      "differ between "
                      "boots without announcing it; only the boot id was waived",
                      a.boot_id, b.boot_id));
    else if (!r.pass)
      v.paired = false;
  }
  return v;
}

nlohmann::json ToJson(const PairVerdict& p) {
  nlohmann::json rules = nlohmann::json::array();
  for (const auto& r : p.rules)
    rules.push_back(
        {{"rule", r.rule}, {"a", r.a}, {"b", r.b}, {"pass", r.pass}, {"waived", r.waived}});
  return {{"paired", p.paired}, {"rules", rules}, {"caveats", p.caveats}};
}

std::string RenderPairText(const PairVerdict& p) {
  std::string out;
  size_t w = 4;
  for (const auto& r : p.rules) w = std::max(w, r.rule.size());
  for (const auto& r : p.rules)
    out += fmt::format("  {:<6} {:<{}}  A: {}  B: {}\n",
                       r.waived ? "WAIVED" : (r.pass ? "pass" : "FAIL"), r.rule, w, r.a, r.b);
  for (const auto& c : p.caveats) out += fmt::format("  caveat: {}\n", c);
  out += p.paired ? "pair: comparable\n" : "pair: REFUSED (the windows are not comparable)\n";
  return out;
}

std::string RenderPairMarkdown(const PairVerdict& p) {
  std::string out = "| rule | verdict | A | B |\n|---|---|---|---|\n";
  for (const auto& r : p.rules)
    out += fmt::format("| {} | {} | {} | {} |\n", MarkdownCell(r.rule),
                       r.waived ? "WAIVED" : (r.pass ? "pass" : "**FAIL**"), MarkdownCell(r.a),
                       MarkdownCell(r.b));
  for (const auto& c : p.caveats) out += fmt::format("\n> caveat: {}\n", MarkdownCell(c));
  out += p.paired ? "\n**pair: comparable**\n"
                  : "\n**pair: REFUSED** (the windows are not comparable)\n";
  return out;
}

}  // namespace vouch
