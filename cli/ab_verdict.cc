#include "ab_verdict.h"

#include <fmt/format.h>

#include <map>

#include "ab_partial.h"
#include "clock/window.h"
#include "common.h"
#include "util/escape.h"
#include "util/json_io.h"
#include "util/redact.h"

namespace vouch::cli {
namespace {

std::vector<std::string> RedactEnv(const std::vector<std::string>& env) {
  std::vector<std::string> out;
  for (const auto& kv : env) {
    auto eq = kv.find('=');
    out.push_back(eq != std::string::npos && IsSecretName(kv.substr(0, eq))
                      ? kv.substr(0, eq) + "=<redacted>"
                      : kv);
  }
  return out;
}

nlohmann::json ArmJson(const Arm& a) {
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [k, v] : a.env) env[k] = IsSecretName(k) ? "<redacted>" : v;
  return {{"name", a.name}, {"argv", RedactArgv(a.argv)}, {"env", env}, {"shell", a.shell}};
}

Arm ArmFromJson(const nlohmann::json& j) {
  Arm a;
  a.name = j.at("name").get<std::string>();
  a.argv = j.at("argv").get<std::vector<std::string>>();
  for (const auto& [k, v] : j.at("env").items()) a.env.emplace_back(k, v.get<std::string>());
  a.shell = j.value("shell", false);
  return a;
}

}  // namespace

nlohmann::json AbPlanJson(const AbPlan& plan, bool change_not_on_gpu,
                          const std::vector<std::string>& a_env,
                          const std::vector<std::string>& b_env) {
  return {{"a", ArmJson(plan.a)},
          {"b", ArmJson(plan.b)},
          {"a_env", RedactEnv(a_env)},
          {"b_env", RedactEnv(b_env)},
          {"warmup", plan.warmup},
          {"pairs", plan.pairs},
          {"max_pairs", plan.max_pairs ? nlohmann::json(*plan.max_pairs) : nlohmann::json()},
          {"calibrate", plan.calibrate},
          {"band_log", plan.band.half_width_log},
          {"confidence", plan.confidence},
          {"allow_cross_boot", plan.allow_cross_boot},
          {"headline", plan.headline},
          {"seed", plan.seed},
          {"change_not_on_gpu", change_not_on_gpu}};
}

Result<RecordedAbPlan> AbPlanFromRecord(const nlohmann::json& rec, const std::string& where) {
  if (rec.value("kind", "") != "ab")
    return MakeError("{}: a '{}' record, not one of vouch ab", where, rec.value("kind", "?"));
  static const nlohmann::json kNone;
  const auto& extra = rec.contains("extra") ? rec["extra"] : kNone;
  if (!extra.is_object() || !extra.contains("ab_plan") || !extra["ab_plan"].is_object())
    return MakeError(
        "{}: the record keeps no A/B plan (extra.ab_plan; written by a vouch older than ab "
        "--from): its legs cannot be replayed",
        where);
  try {
    const auto& j = extra["ab_plan"];
    RecordedAbPlan r;
    r.plan.a = ArmFromJson(j.at("a"));
    r.plan.b = ArmFromJson(j.at("b"));
    r.a_env = j.value("a_env", std::vector<std::string>{});
    r.b_env = j.value("b_env", std::vector<std::string>{});
    r.plan.warmup = j.at("warmup").get<int>();
    r.plan.pairs = j.at("pairs").get<int>();
    if (j.contains("max_pairs") && j["max_pairs"].is_number_integer())
      r.plan.max_pairs = j["max_pairs"].get<int>();
    r.plan.calibrate = j.at("calibrate").get<int>();
    r.plan.band.half_width_log = j.at("band_log").get<double>();
    r.plan.confidence = j.at("confidence").get<double>();
    r.plan.allow_cross_boot = j.at("allow_cross_boot").get<bool>();
    r.plan.headline = j.at("headline").get<std::string>();
    r.plan.seed = j.at("seed").get<std::uint64_t>();
    r.change_not_on_gpu = j.value("change_not_on_gpu", false);
    auto pol = PolicyFromJson(rec.contains("policy") ? rec["policy"] : kNone, where + ": policy");
    if (!pol) return pol.error();
    r.plan.policy = *pol;
    return r;
  } catch (const nlohmann::json::exception& e) {
    return MakeError("{}: extra.ab_plan is malformed ({})", where, e.what());
  }
}

AbGpu CompareAbGpu(AbOutcome& out, const AbPlan& plan, ArmInput arms_a, ArmInput arms_b,
                   bool not_on_gpu, std::vector<std::string>& caveats,
                   nlohmann::json* arms_check_gpu) {
  auto say = [](const std::string& m) { fmt::print(stderr, "vouch ab: {}\n", m); };
  const Arm& a = plan.a;
  const Arm& b = plan.b;
  AbGpu res;
  std::vector<gputrace::LegGpuTrace> ta, tb;
  std::map<std::string, std::vector<std::string>> windows;  // arm -> "leg N valid"
  for (const auto& l : out.legs) {
    if (l.role != "measured" || l.gpu_trace.is_null()) continue;
    auto t = gputrace::LegGpuTraceFromJson(l.gpu_trace, fmt::format("leg {}", l.index + 1));
    if (!t) {
      say(t.error().message);
      continue;
    }
    (l.arm == a.name ? ta : tb).push_back(std::move(*t));
    windows[l.arm].push_back(fmt::format(
        "{}{}", l.index + 1, l.window.verdict.status == WindowStatus::kValid ? "" : "*"));
  }
  res.attribution = fmt::format(
      "clock windows: arm {} legs {}, arm {} legs {} (each leg's trace under its own window; * "
      "marks a window that was not valid); SM clock A median {:.0f} MHz, B median {:.0f} MHz",
      a.name, fmt::join(windows[a.name], ","), b.name, fmt::join(windows[b.name], ","),
      out.clock_a.median_mhz, out.clock_b.median_mhz);
  std::vector<gputrace::LegGpuTrace> all = ta;
  all.insert(all.end(), tb.begin(), tb.end());
  auto c =
      gputrace::CompareArms(ta, tb, gputrace::RangeOfMetric(out.headline, all), a.name, b.name);
  if (!c) {
    say("gpu trace: " + c.error().message);
    caveats.push_back("gpu trace: " + c.error().message);
    return res;
  }
  res.gpu = std::move(*c);
  auto& gpu = res.gpu;
  // The identity rule of src/ab, fed: per-kernel calls and time, and the multiset as a
  // behavioural control.
  arms_a.call_stats = gpu->call_stats_a;
  arms_b.call_stats = gpu->call_stats_b;
  if (gpu->identity != gputrace::Identity::kUnknown) {
    arms_a.behavioural["gpu.kernel_multiset"] = DumpJson(nlohmann::json(gpu->a_multiset));
    arms_b.behavioural["gpu.kernel_multiset"] = DumpJson(nlohmann::json(gpu->b_multiset));
  }
  if (arms_check_gpu)
    if (auto rep = CheckArms(arms_a, arms_b); rep)
      *arms_check_gpu = nlohmann::json::parse(RenderArmsJson(*rep));
  AbVerdict vv = out.decision.verdict;
  if (gpu->identity == gputrace::Identity::kIdentity) {
    if ((vv == AbVerdict::kBFaster || vv == AbVerdict::kBSlower) && !not_on_gpu) {
      out.decision.reasons.insert(
          out.decision.reasons.begin(),
          fmt::format("refused: the statistics said '{}', but {}; a faster/slower verdict "
                      "needs a change that ran on the GPU, or --change-not-on-gpu to state "
                      "that it is not on the GPU",
                      ToString(vv), gpu->summary));
      out.decision.verdict = AbVerdict::kRefused;
    } else if (not_on_gpu) {
      out.decision.reasons.push_back(
          "identity of the kernels accepted: --change-not-on-gpu states the change is not on "
          "the GPU");
    } else {
      out.decision.reasons.push_back(gpu->summary);
    }
  } else if (gpu->identity == gputrace::Identity::kMoved) {
    out.decision.reasons.push_back(gpu->summary);
  }
  return res;
}

nlohmann::json AbGpuJson(const AbGpu& g, bool not_on_gpu) {
  nlohmann::json j = gputrace::ToJson(*g.gpu);
  j["attribution"] = g.attribution;
  j["change_not_on_gpu"] = not_on_gpu;
  return j;
}

bool PrintAbVerdict(const AbPlan& plan, const AbOutcome& out, const nlohmann::json& v,
                    const AbReportContext& report, const AbGpu& g, bool json,
                    const std::string& markdown) {
  auto render_md = [&] {
    // What A and B were, first in the table (ab_partial.h).
    std::string md = WithArmsRows(RenderAbMarkdown(out, report.caveats),
                                  AbArmsMarkdownRows(plan, report.a_env, report.b_env));
    // Host noise (issue 23 item 5): the wall clock against GPU time, in the pull request too.
    if (auto hn = v.find("host_noise"); hn != v.end() && hn->is_object()) {
      if (hn->value("host_bound", false)) md += "\n- " + MarkdownCell(hn->value("text", "")) + "\n";
      if (auto ow = hn->find("opposite_ways"); ow != hn->end() && ow->is_string())
        md += "\n- " + MarkdownCell(ow->get<std::string>()) + "\n";
    }
    if (g.gpu) md += "\n" + gputrace::RenderComparisonMarkdown(*g.gpu, g.attribution);
    return md;
  };
  if (json)
    fmt::print("{}\n", DumpJson(v, 2));
  else if (markdown == "-")
    fmt::print("{}", render_md());
  else
    fmt::print("{}{}", RenderAbText(plan, out, report),
               g.gpu ? gputrace::RenderComparisonText(*g.gpu, g.attribution) : std::string());
  return WriteMarkdownFile(markdown, render_md, "ab");
}

int AbExitCode(AbVerdict v, const std::string& fail_on) {
  switch (v) {
    case AbVerdict::kBSlower:
      return fail_on == "slower" ? kAbFailOn : kAbDecided;
    case AbVerdict::kBFaster:
    case AbVerdict::kNoChange:
      return kAbDecided;
    case AbVerdict::kInconclusive:
      return kAbInconclusive;
    case AbVerdict::kRefused:
      return kAbRefused;
  }
  return kExitError;
}

}  // namespace vouch::cli
