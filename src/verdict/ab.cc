#include "verdict/ab.h"

#include <fmt/format.h>

#include <functional>
#include <map>

#include "clock/window.h"
#include "gputrace/host_noise.h"
#include "record/leg_runner.h"
#include "util/json_io.h"

namespace vouch::verdict {
namespace {

// Rule 2: the arms' kernel multisets and per-kernel diff.
AbGpu CompareGpu(const AbPlan& plan, AbOutcome& out, const AbRules& rules,
                 std::vector<std::string>& caveats, std::map<int, gputrace::LegGpuTrace>& traces) {
  const Arm& a = plan.a;
  const Arm& b = plan.b;
  AbGpu res;
  std::vector<gputrace::LegGpuTrace> ta, tb;
  std::map<std::string, std::vector<std::string>> windows;  // arm -> "leg N valid"
  for (const auto& l : out.legs) {
    if (l.role != "measured" || l.gpu_trace.is_null()) continue;
    auto t = gputrace::LegGpuTraceFromJson(l.gpu_trace, fmt::format("leg {}", l.index + 1));
    if (!t) {
      caveats.push_back("gpu trace: " + t.error().message);
      continue;
    }
    traces[l.index] = *t;
    (l.arm == a.name ? ta : tb).push_back(std::move(*t));
    windows[l.arm].push_back(fmt::format(
        "{}{}", l.index + 1, l.window.verdict.status == WindowStatus::kValid ? "" : "*"));
  }
  if (ta.empty() && tb.empty()) return res;
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
    caveats.push_back("gpu trace: " + c.error().message);
    return res;
  }
  res.gpu = std::move(*c);
  const auto& gpu = res.gpu;
  AbVerdict vv = out.decision.verdict;
  if (gpu->identity == gputrace::Identity::kIdentity) {
    if ((vv == AbVerdict::kBFaster || vv == AbVerdict::kBSlower) && !rules.change_not_on_gpu) {
      out.decision.reasons.insert(
          out.decision.reasons.begin(),
          fmt::format("refused: the statistics gave a direction, but {}; a faster/slower verdict "
                      "needs a change that ran on the GPU, or --change-not-on-gpu to state "
                      "that it is not on the GPU",
                      gpu->summary));
      out.decision.verdict = AbVerdict::kRefused;
    } else if (rules.change_not_on_gpu) {
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

// Rule 3's input: each arm's valid measured legs' headline values and kernel-mix labels.
ArmLegValues ArmValues(const AbOutcome& out, const Arm& arm, const std::string& range,
                       const std::map<int, gputrace::LegGpuTrace>& traces) {
  ArmLegValues v;
  v.name = arm.name;
  for (const auto& l : out.legs) {
    if (l.arm != arm.name || l.role != "measured" || !l.valid) continue;
    const Metric* m = FindMetric(l.metrics, out.headline);
    if (!m || m->is_text()) continue;
    v.values.push_back(m->value);
    v.unit = m->unit;
    auto t = traces.find(l.index);
    v.mixes.push_back(t == traces.end() || range.empty() ? "" : KernelMixLabel(t->second, range));
  }
  return v;
}

}  // namespace

std::string KernelMixLabel(const gputrace::LegGpuTrace& t, const std::string& range) {
  for (const auto& r : t.ranges) {
    if (r.name != range || r.modal.empty()) continue;
    std::int64_t kernels = 0;
    std::string key;
    for (const auto& [name, n] : r.modal) {
      kernels += n;
      key += fmt::format("{}\x1f{}\x1e", name, n);
    }
    return fmt::format("{} kernels per '{}' (mix {:04x})", kernels, range,
                       std::hash<std::string>{}(key)&0xffff);
  }
  return "";
}

AbFinal FinishAb(const AbPlan& plan, AbOutcome& out, const AbRules& rules,
                 std::vector<std::string> caveats) {
  AbFinal f;
  std::map<int, gputrace::LegGpuTrace> traces;
  f.gpu = CompareGpu(plan, out, rules, caveats, traces);
  // Rule 3: modes across process spawns.
  const std::string range = f.gpu.gpu ? f.gpu.gpu->basis_range : "";
  if (!out.headline.empty()) {
    f.modes = RuleOnModes(out.headline, ArmValues(out, plan.a, range, traces),
                          ArmValues(out, plan.b, range, traces), out.better,
                          out.band.half_width_log, plan.confidence, rules.allow_modes, "compare");
    ApplyModesRuling(f.modes, out.decision);
  }
  // Rule 4: host noise, a wall-clock headline against the traced legs' GPU time.
  nlohmann::json legs = nlohmann::json::array();
  for (const auto& l : out.legs) legs.push_back(ToJson(l));
  if (auto hn = gputrace::AssessHostNoise(legs, out.headline)) {
    f.host_noise = hn->ToJson();
    if (hn->host_bound) out.decision.reasons.push_back(hn->text);
    auto ow =
        gputrace::OppositeWays(legs, *hn, plan.a.name, plan.b.name, out.better == Better::kHigher);
    if (ow) {
      out.decision.reasons.push_back(*ow);
      f.host_noise["opposite_ways"] = *ow;
    } else if (!hn->traced && out.decision.verdict == AbVerdict::kInconclusive) {
      out.decision.reasons.push_back(gputrace::HostNoiseAdvice(std::nullopt));
    }
  }
  f.verdict = AbVerdictJson(plan, out, caveats);
  if (!f.host_noise.is_null()) f.verdict["host_noise"] = f.host_noise;
  if (f.modes.any()) f.verdict["modes"] = f.modes.ToJson();
  f.verdict["decided_by"] = f.modes.by_rank ? "rank (modes)" : "paired statistics";
  if (f.gpu.gpu) {
    f.verdict["gpu"] = gputrace::ToJson(*f.gpu.gpu);
    f.verdict["gpu"]["attribution"] = f.gpu.attribution;
    f.verdict["gpu"]["change_not_on_gpu"] = rules.change_not_on_gpu;
  }
  f.verdict["rules"] = {{"change_not_on_gpu", rules.change_not_on_gpu},
                        {"allow_modes", rules.allow_modes}};
  f.caveats = std::move(caveats);
  return f;
}

int AbExitCode(AbVerdict v, bool fail_on_slower) {
  switch (v) {
    case AbVerdict::kBSlower:
      return fail_on_slower ? kAbFailOn : kAbDecided;
    case AbVerdict::kBFaster:
    case AbVerdict::kNoChange:
      return kAbDecided;
    case AbVerdict::kInconclusive:
      return kAbInconclusive;
    case AbVerdict::kRefused:
      return kAbRefused;
  }
  return kAbRefused;
}

}  // namespace vouch::verdict
