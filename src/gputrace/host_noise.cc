#include "gputrace/host_noise.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <vector>

#include "gputrace/leg_trace.h"
#include "stats/ab_stats.h"

namespace vouch::gputrace {
namespace {

using json = nlohmann::json;

std::optional<double> ValueOf(const json& leg, const std::string& name) {
  for (const auto& m : leg.value("metrics", json::array()))
    if (m.value("name", "") == name && m.contains("value") && m["value"].is_number())
      return m["value"].get<double>();
  return std::nullopt;
}

bool Counts(const json& leg) {
  return leg.value("role", "") == "measured" && leg.value("valid", false);
}

// Per arm, in order of first appearance: the legs' values of NAME (positive only).
std::map<std::string, std::vector<double>> ByArm(const json& legs, const std::string& name) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& l : legs) {
    if (!Counts(l)) continue;
    if (auto v = ValueOf(l, name); v && *v > 0) out[l.value("arm", "")].push_back(*v);
  }
  return out;
}

// The sd of logs within each arm, pooled (degrees of freedom as weights), in percent.
std::optional<double> PooledSpreadPct(const std::map<std::string, std::vector<double>>& arms) {
  double ss = 0;
  double df = 0;
  for (const auto& [arm, v] : arms) {
    if (v.size() < 2) continue;
    double mean = 0;
    for (double x : v) mean += std::log(x);
    mean /= static_cast<double>(v.size());
    for (double x : v) ss += (std::log(x) - mean) * (std::log(x) - mean);
    df += static_cast<double>(v.size() - 1);
  }
  if (df < 1) return std::nullopt;
  return 100 * std::sqrt(ss / df);
}

double Median(std::vector<double> v) {
  auto p = Percentile(v, 50);
  return p ? *p : 0.0;
}

std::string Pct(double p) {
  if (p < 0.1) return fmt::format("{:.3f} %", p);
  return p < 1 ? fmt::format("{:.2f} %", p) : fmt::format("{:.1f} %", p);
}

}  // namespace

json HostNoise::ToJson() const {
  return {{"headline", headline},
          {"traced", traced},
          {"gpu_metric", gpu_metric},
          {"gpu_active_share", traced ? json(gpu_share) : json()},
          {"headline_spread_pct", headline_spread},
          {"gpu_spread_pct", traced ? json(gpu_spread) : json()},
          {"host_bound", host_bound},
          {"text", text}};
}

std::optional<HostNoise> AssessHostNoise(const json& legs, const std::string& headline) {
  if (headline.empty() || headline.rfind("gpu.", 0) == 0 || !legs.is_array()) return std::nullopt;
  auto spread = PooledSpreadPct(ByArm(legs, headline));
  if (!spread) return std::nullopt;
  HostNoise h;
  h.headline = headline;
  h.headline_spread = *spread;
  // Traced: every counted leg has its fold. The GPU metric: the range with the most GPU time
  // (instances x median, summed over legs), present in every counted leg.
  std::vector<double> shares;
  std::map<std::string, double> weight;
  std::map<std::string, int> present;
  int counted = 0;
  bool traced = true;
  for (const auto& l : legs) {
    if (!Counts(l)) continue;
    ++counted;
    const json& g = l.contains("gpu_trace") ? l["gpu_trace"] : json();
    if (!g.is_object() || !g.contains("region")) {
      traced = false;
      continue;
    }
    double span = g["region"].value("end_unix_ns", 0.0) - g["region"].value("begin_unix_ns", 0.0);
    if (span > 0) shares.push_back(g.value("active_ns", 0.0) / span);
    for (const auto& r : g.value("ranges", json::array())) {
      std::string m = "gpu.active_ns_per." + MetricSafe(r.value("name", ""));
      weight[m] += r.value("active_ns_median", 0.0) * r.value("instances", 0.0);
      ++present[m];
    }
  }
  h.traced = traced && counted > 0 && !shares.empty();
  if (!h.traced) return h;
  h.gpu_share = Median(shares);
  h.gpu_metric = "gpu.active_ns";
  double best = 0;
  for (const auto& [m, w] : weight)
    if (present[m] == counted && w > best) {
      best = w;
      h.gpu_metric = m;
    }
  auto gs = PooledSpreadPct(ByArm(legs, h.gpu_metric));
  if (!gs) {
    h.traced = false;
    return h;
  }
  h.gpu_spread = *gs;
  h.host_bound = h.gpu_share < kHostBoundShare && h.headline_spread >= kHostNoiseFloorPct &&
                 h.headline_spread >= kHostNoiseRatio * h.gpu_spread;
  if (h.host_bound)
    h.text = fmt::format(
        "host noise: the GPU was active {} of the measured region (median over legs), and "
        "{} spread {} leg to leg against {} for {} (GPU time{}): the wall clock carries the "
        "host's noise; the GPU-time headline is {} (--headline {})",
        Pct(100 * h.gpu_share), headline, Pct(h.headline_spread), Pct(h.gpu_spread), h.gpu_metric,
        h.gpu_metric == "gpu.active_ns" ? " over the region" : " per NVTX range instance",
        h.gpu_metric, h.gpu_metric);
  return h;
}

std::optional<std::string> OppositeWays(const json& legs, const HostNoise& h,
                                        const std::string& arm_a, const std::string& arm_b,
                                        bool higher_is_better) {
  if (!h.traced || h.gpu_metric.empty()) return std::nullopt;
  auto head = ByArm(legs, h.headline);
  auto gpu = ByArm(legs, h.gpu_metric);
  if (head[arm_a].empty() || head[arm_b].empty() || gpu[arm_a].empty() || gpu[arm_b].empty())
    return std::nullopt;
  const double ha = Median(head[arm_a]), hb = Median(head[arm_b]);
  const double ga = Median(gpu[arm_a]), gb = Median(gpu[arm_b]);
  if (ga <= 0 || ha == hb) return std::nullopt;
  const double gpu_change = 100 * (gb / ga - 1);  // > 0: B did more GPU work
  if (std::fabs(gpu_change) < std::max(1.0, 2 * h.gpu_spread)) return std::nullopt;
  const bool b_better_wall = higher_is_better ? hb > ha : hb < ha;
  const bool b_better_gpu = gb < ga;
  if (b_better_wall == b_better_gpu) return std::nullopt;
  const std::string unit = h.gpu_metric == "gpu.active_ns" ? "per region" : "per step";
  return fmt::format(
      "the wall clock and GPU time {} point opposite ways: {} did {:.1f} % {} GPU work {} ({} "
      "median {:.1f} against {:.1f} us) yet had the {} median {} ({:.4g} against {:.4g}){}",
      unit, arm_b, std::fabs(gpu_change), gpu_change > 0 ? "more" : "less", unit, h.gpu_metric,
      gb / 1e3, ga / 1e3, hb > ha ? "higher" : "lower", h.headline, hb, ha,
      h.host_bound ? fmt::format(", under host noise ({} spread {} leg to leg, GPU time {})",
                                 h.headline, Pct(h.headline_spread), Pct(h.gpu_spread))
                   : std::string());
}

std::string HostNoiseAdvice(const std::optional<HostNoise>& h) {
  if (h && h->traced) {
    if (h->host_bound) return h->text;
    return fmt::format(
        "the traced legs: GPU active {} of the region; {} spread {} leg to leg, {} {}",
        Pct(100 * h->gpu_share), h->headline, Pct(h->headline_spread), h->gpu_metric,
        Pct(h->gpu_spread));
  }
  return "if the GPU is busy a small share of the measured region (a host-bound loop), the wall "
         "clock carries the host's noise: run with --gpu-trace and gate on "
         "gpu.active_ns_per.RANGE (GPU time per NVTX range instance; mark the step with an NVTX "
         "range)";
}

void EstimateTracerCost(LegGpuTrace* g, std::optional<double> override_ns) {
  TracerCost c;
  c.api_mode = g->tracer_api;
  if (override_ns) {
    c.per_launch_ns = *override_ns;
    c.per_launch_source = "VOUCH_TRACER_LAUNCH_COST_NS";
  } else if (g->tracer_api == "off") {
    c.per_launch_ns = kTracerLaunchCostLeanNs;
    c.per_launch_source = "H200 default, launch-API records off";
  } else {
    c.per_launch_ns = kTracerLaunchCostApiNs;
    c.per_launch_source = g->tracer_api == "launch"
                              ? "H200 default, launch-API records on"
                              : "H200 default, launch-API records on (the header does not say)";
  }
  c.cost_ns = static_cast<double>(g->launches) * c.per_launch_ns;
  const double span = static_cast<double>(g->region_end_ns - g->region_begin_ns);
  c.fraction = span > 0 ? c.cost_ns / span : 0;
  if (c.fraction > kTracerCostWarnFraction)
    c.warning = fmt::format(
        "the tracer's estimated cost is {:.1f} % of the measured region ({} launches x {:.0f} ns "
        "over {:.3f} ms), above {:.0f} %: its wall-clock figures carry it{}",
        100 * c.fraction, g->launches, c.per_launch_ns, span / 1e6, 100 * kTracerCostWarnFraction,
        g->tracer_api == "off" ? "" : "; VOUCH_GPU_TRACE_API=off costs about 0.35 us per launch");
  g->tracer_cost = c;
}

Result<std::optional<double>> TracerLaunchCostOverride() {
  const char* v = std::getenv("VOUCH_TRACER_LAUNCH_COST_NS");
  if (!v || !*v) return std::optional<double>();
  char* end = nullptr;
  double x = std::strtod(v, &end);
  if (end == v || *end != '\0' || !std::isfinite(x) || x < 0)
    return MakeError("VOUCH_TRACER_LAUNCH_COST_NS={}: not a number of nanoseconds >= 0", v);
  return std::optional<double>(x);
}

}  // namespace vouch::gputrace
