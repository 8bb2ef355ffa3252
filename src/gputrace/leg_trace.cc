#include "gputrace/leg_trace.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "gputrace/trust.h"
#include "metrics/reserved.h"
#include "stats/ab_stats.h"
#include "trace/cupti_reader.h"
#include "trace/summary.h"

namespace vouch::gputrace {
namespace {

using trace::GpuOpKind;
using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>;

// Keeps at most this many per-instance values in a metric's samples (the record stays small).
constexpr std::size_t kMaxSamples = 100000;

std::uint64_t Key(std::int64_t pid, std::int64_t corr) {
  return (static_cast<std::uint64_t>(pid) << 40) ^ static_cast<std::uint64_t>(corr);
}

Metric Make(std::string name, double v, std::string unit, Better b) {
  Metric m;
  m.name = std::move(name);
  m.value = v;
  m.unit = std::move(unit);
  m.better = b;
  m.source = std::string(kGpuTraceSource);
  return m;
}

double Pct(const std::vector<double>& v, double q) {
  auto p = Percentile(v, q);
  return p ? *p : 0.0;
}

nlohmann::json MultisetJson(const KernelMultiset& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

}  // namespace

std::string MetricSafe(const std::string& name) {
  std::string out;
  for (char c : name) out += (c == ' ' || c == '\t' || c == '\n' || c == '\r') ? '_' : c;
  return out;
}

LegGpuTrace AnalyzeTrace(const trace::Trace& t, std::optional<RegionNs> region) {
  LegGpuTrace g;
  g.partial = t.partial;
  g.dropped = t.dropped_records;
  g.warnings = t.warnings;
  g.region_marked = region.has_value();
  g.region_begin_ns = region ? region->begin_ns : t.first_ns;
  g.region_end_ns = region ? region->end_ns : t.last_ns;
  auto in_region = [&](std::int64_t ts) {
    return !region || (ts >= region->begin_ns && ts < region->end_ns);
  };

  // Launch calls by (pid, correlation); GPU ops by the same key.
  std::unordered_map<std::uint64_t, std::uint32_t> api_by_corr;
  for (std::uint32_t i = 0; i < t.api.size(); ++i)
    if (t.api[i].correlation >= 0) api_by_corr.emplace(Key(t.api[i].pid, t.api[i].correlation), i);
  std::unordered_multimap<std::uint64_t, std::uint32_t> ops_by_corr;
  for (std::uint32_t i = 0; i < t.ops.size(); ++i)
    if (t.ops[i].correlation >= 0) ops_by_corr.emplace(Key(t.ops[i].pid, t.ops[i].correlation), i);
  // When the work was asked for: its launch call's start, else its own start.
  auto asked_at = [&](const trace::GpuOp& o) {
    if (o.correlation >= 0)
      if (auto it = api_by_corr.find(Key(o.pid, o.correlation)); it != api_by_corr.end())
        return t.api[it->second].start_ns;
    return o.start_ns;
  };

  Intervals region_kernels;
  for (const auto& o : t.ops) {
    if (!in_region(asked_at(o))) continue;
    switch (o.kind) {
      case GpuOpKind::kKernel: {
        ++g.kernels;
        if (o.graph_id != 0) ++g.graph_kernels;
        region_kernels.push_back({o.start_ns, o.end_ns});
        auto& k = g.by_kernel[t.Name(o.name_id)];
        ++k.count;
        k.total_ns += o.end_ns - o.start_ns;
        break;
      }
      case GpuOpKind::kMemcpy:
        ++g.memcpys;
        break;
      case GpuOpKind::kMemset:
        ++g.memsets;
        break;
    }
  }
  g.active_ns = trace::UnionLength(std::move(region_kernels));
  g.checks = ChecksOf(t, region);
  bool any_launch_api =
      std::any_of(t.api.begin(), t.api.end(), [](const auto& a) { return a.is_launch; });
  if (any_launch_api) {
    for (const auto& a : t.api)
      if (a.is_launch && in_region(a.start_ns)) ++g.launches;
  } else {
    // No launch-API records (the tracer's default since 2026-12-02, without
    // VOUCH_GPU_TRACE_API=on; or another tool wrote the trace): one launch per correlation id among
    // the region's kernels; a graph launch's kernels share its id, so it counts once, as its launch
    // call would.
    g.launches_from = "kernel correlation ids (the trace has no launch-API records)";
    std::unordered_set<std::uint64_t> seen;
    for (const auto& o : t.ops) {
      if (o.kind != GpuOpKind::kKernel || !in_region(o.start_ns)) continue;
      if (o.correlation < 0 || seen.insert(Key(o.pid, o.correlation)).second) ++g.launches;
    }
  }

  // NVTX ranges (host ranges) inside the region, by name.
  std::map<std::string, std::vector<const trace::Range*>> by_name;
  for (const auto& r : t.ranges)
    if (r.kind == trace::RangeKind::kCpu && in_region(r.start_ns))
      by_name[t.Name(r.name_id)].push_back(&r);
  // API calls sorted by start, for the instances' queries.
  std::vector<std::uint32_t> api_order(t.api.size());
  for (std::uint32_t i = 0; i < api_order.size(); ++i) api_order[i] = i;
  std::sort(api_order.begin(), api_order.end(),
            [&](auto x, auto y) { return t.api[x].start_ns < t.api[y].start_ns; });
  std::vector<std::uint32_t> op_order(t.ops.size());
  for (std::uint32_t i = 0; i < op_order.size(); ++i) op_order[i] = i;
  std::sort(op_order.begin(), op_order.end(),
            [&](auto x, auto y) { return t.ops[x].start_ns < t.ops[y].start_ns; });

  // 0: launched from the instance's own thread; 1: from any thread of its process; 2: kernels
  // that start inside it.
  auto kernels_of = [&](const trace::Range& r, int how) {
    std::vector<std::uint32_t> out;
    if (how < 2) {
      auto first = std::lower_bound(
          api_order.begin(), api_order.end(), r.start_ns,
          [&](std::uint32_t i, std::int64_t ts) { return t.api[i].start_ns < ts; });
      for (auto p = first; p != api_order.end() && t.api[*p].start_ns < r.end_ns; ++p) {
        const auto& a = t.api[*p];
        if (a.pid != r.pid || (how == 0 && a.tid != r.tid)) continue;
        auto [b, e] = ops_by_corr.equal_range(Key(a.pid, a.correlation));
        for (auto q = b; q != e; ++q)
          if (t.ops[q->second].kind == GpuOpKind::kKernel) out.push_back(q->second);
      }
    } else {
      auto first = std::lower_bound(
          op_order.begin(), op_order.end(), r.start_ns,
          [&](std::uint32_t i, std::int64_t ts) { return t.ops[i].start_ns < ts; });
      for (auto p = first; p != op_order.end() && t.ops[*p].start_ns < r.end_ns; ++p)
        if (t.ops[*p].kind == GpuOpKind::kKernel && t.ops[*p].pid == r.pid) out.push_back(*p);
    }
    return out;
  };
  static constexpr const char* kHow[] = {
      "kernels launched (by correlation id) from API calls inside each instance, same thread",
      "kernels launched (by correlation id) from API calls inside each instance, any thread of "
      "its process (the trace's range and API thread ids differ)",
      "kernels that start inside each instance (the trace has no launch calls inside the ranges)"};

  for (auto& [name, inst] : by_name) {
    std::sort(inst.begin(), inst.end(),
              [](const auto* x, const auto* y) { return x->start_ns < y->start_ns; });
    RangeFigures rf;
    rf.name = name;
    rf.instances = static_cast<std::int64_t>(inst.size());
    int how = 0;
    for (; how < 2; ++how) {
      bool any = std::any_of(inst.begin(), inst.end(),
                             [&](const auto* r) { return !kernels_of(*r, how).empty(); });
      if (any) break;
    }
    rf.attribution = kHow[how];
    std::map<KernelMultiset, std::int64_t> shapes;
    std::vector<const KernelMultiset*> shape_of;  // per instance (map nodes do not move)
    std::vector<double> counts;
    std::map<std::string, KernelMean> sums;
    for (const auto* r : inst) {
      auto ks = kernels_of(*r, how);
      Intervals iv;
      KernelMultiset ms;
      for (auto i : ks) {
        const auto& o = t.ops[i];
        iv.push_back({o.start_ns, o.end_ns});
        const std::string& kn = t.Name(o.name_id);
        ++ms[kn];
        sums[kn].count += 1;
        sums[kn].ns += static_cast<double>(o.end_ns - o.start_ns);
      }
      rf.active_ns.push_back(static_cast<double>(trace::UnionLength(std::move(iv))));
      counts.push_back(static_cast<double>(ks.size()));
      auto [shape, fresh] = shapes.try_emplace(std::move(ms), 0);
      (void)fresh;
      ++shape->second;
      shape_of.push_back(&shape->first);
    }
    rf.median_ns = Pct(rf.active_ns, 50);
    rf.p10_ns = Pct(rf.active_ns, 10);
    rf.p90_ns = Pct(rf.active_ns, 90);
    rf.spread_pct = rf.median_ns > 0 ? (rf.p90_ns - rf.p10_ns) / rf.median_ns * 100 : 0;
    rf.kernels_median = Pct(counts, 50);
    std::int64_t best = 0;
    for (const auto& [ms, n] : shapes)
      if (n > best) {
        best = n;
        rf.modal = ms;
      }
    rf.modal_fraction =
        rf.instances ? static_cast<double>(best) / static_cast<double>(rf.instances) : 0;
    for (std::size_t i = 0; i < shape_of.size(); ++i) {
      if (*shape_of[i] == rf.modal) continue;
      ++rf.odd_instances;
      if (rf.odd.size() < kMaxOddInstances)
        rf.odd.push_back({static_cast<std::int64_t>(i + 1), static_cast<std::int64_t>(counts[i])});
    }
    for (const auto& [ms, n] : shapes) rf.mixes.push_back({ms, n});
    std::stable_sort(rf.mixes.begin(), rf.mixes.end(),
                     [](const auto& x, const auto& y) { return x.instances > y.instances; });
    if (rf.mixes.size() > kMaxMixes) rf.mixes.resize(kMaxMixes);
    for (auto& [kn, m] : sums) {
      m.count /= static_cast<double>(rf.instances);
      m.ns /= static_cast<double>(rf.instances);
    }
    rf.per_instance = std::move(sums);
    g.ranges.push_back(std::move(rf));
  }
  return g;
}

std::vector<Metric> GpuTraceMetrics(const LegGpuTrace& g) {
  std::vector<Metric> out;
  out.push_back(Make("gpu.active_ns", static_cast<double>(g.active_ns), "ns", Better::kLower));
  out.push_back(Make("gpu.kernels", static_cast<double>(g.kernels), "", Better::kNone));
  out.push_back(Make("gpu.graph_kernels", static_cast<double>(g.graph_kernels), "", Better::kNone));
  out.push_back(Make("gpu.launches", static_cast<double>(g.launches), "", Better::kNone));
  for (const auto& r : g.ranges) {
    std::string n = MetricSafe(r.name);
    Metric m = Make("gpu.active_ns_per." + n, r.median_ns, "ns", Better::kLower);
    m.samples.assign(r.active_ns.begin(),
                     r.active_ns.begin() +
                         static_cast<std::ptrdiff_t>(std::min(r.active_ns.size(), kMaxSamples)));
    out.push_back(std::move(m));
    out.push_back(Make("gpu.active_ns_per." + n + ".spread_pct", r.spread_pct, "%", Better::kNone));
    out.push_back(Make("gpu.kernels_per." + n, r.kernels_median, "", Better::kNone));
  }
  if (g.tracer_cost)
    out.push_back(
        Make("gpu.tracer_cost_fraction", g.tracer_cost->fraction, "fraction", Better::kNone));
  return out;
}

nlohmann::json ToJson(const LegGpuTrace& g) {
  nlohmann::json kernels = nlohmann::json::object();
  for (const auto& [k, a] : g.by_kernel)
    kernels[k] = {{"count", a.count}, {"total_ns", a.total_ns}};
  nlohmann::json ranges = nlohmann::json::array();
  for (const auto& r : g.ranges) {
    nlohmann::json per = nlohmann::json::object();
    for (const auto& [k, m] : r.per_instance) per[k] = {{"count", m.count}, {"ns", m.ns}};
    nlohmann::json odd = nlohmann::json::array();
    for (const auto& o : r.odd) odd.push_back({{"instance", o.instance}, {"kernels", o.kernels}});
    nlohmann::json mixes = nlohmann::json::array();
    for (const auto& m : r.mixes)
      mixes.push_back({{"instances", m.instances}, {"kernels", MultisetJson(m.kernels)}});
    ranges.push_back({{"name", r.name},
                      {"odd", odd},
                      {"odd_instances", r.odd_instances},
                      {"instances", r.instances},
                      {"active_ns_median", r.median_ns},
                      {"active_ns_p10", r.p10_ns},
                      {"active_ns_p90", r.p90_ns},
                      {"spread_pct", r.spread_pct},
                      {"kernels_median", r.kernels_median},
                      {"modal_multiset", MultisetJson(r.modal)},
                      {"modal_fraction", r.modal_fraction},
                      {"mixes", mixes},
                      {"per_instance", per},
                      {"attribution", r.attribution}});
  }
  nlohmann::json cost;
  if (g.tracer_cost)
    cost = {{"api", g.tracer_cost->api_mode},
            {"per_launch_ns", g.tracer_cost->per_launch_ns},
            {"per_launch_source", g.tracer_cost->per_launch_source},
            {"launches", g.launches},
            {"cost_ns", g.tracer_cost->cost_ns},
            {"fraction_of_region", g.tracer_cost->fraction},
            {"warn_above", kTracerCostWarnFraction},
            {"warning", g.tracer_cost->warning}};
  return {{"schema", "vouch.gpu_trace"},
          {"tracer_api", g.tracer_api},
          {"tracer_cost", cost},
          {"version", 1},
          {"files", g.files},
          {"partial", g.partial},
          {"dropped_records", g.dropped},
          {"warnings", g.warnings},
          {"region",
           {{"marked", g.region_marked},
            {"begin_unix_ns", g.region_begin_ns},
            {"end_unix_ns", g.region_end_ns}}},
          {"active_ns", g.active_ns},
          {"kernels", g.kernels},
          {"graph_kernels", g.graph_kernels},
          {"launches", g.launches},
          {"launches_from", g.launches_from},
          {"memcpys", g.memcpys},
          {"memsets", g.memsets},
          {"by_kernel", kernels},
          {"ranges", ranges},
          {"tracer_checks", ChecksToJson(g.checks)},
          {"refused", g.refused}};
}

Result<LegGpuTrace> LegGpuTraceFromJson(const nlohmann::json& j, const std::string& where) {
  try {
    if (j.value("schema", "") != "vouch.gpu_trace" || j.value("version", 0) != 1)
      return MakeError("{}: not a vouch.gpu_trace version 1 object", where);
    LegGpuTrace g;
    g.files = j.at("files").get<std::vector<std::string>>();
    g.partial = j.at("partial").get<bool>();
    g.dropped = j.at("dropped_records").get<std::int64_t>();
    g.warnings = j.at("warnings").get<std::vector<std::string>>();
    const auto& reg = j.at("region");
    g.region_marked = reg.at("marked").get<bool>();
    g.region_begin_ns = reg.at("begin_unix_ns").get<std::int64_t>();
    g.region_end_ns = reg.at("end_unix_ns").get<std::int64_t>();
    g.active_ns = j.at("active_ns").get<std::int64_t>();
    g.kernels = j.at("kernels").get<std::int64_t>();
    g.graph_kernels = j.at("graph_kernels").get<std::int64_t>();
    g.launches = j.at("launches").get<std::int64_t>();
    g.launches_from = j.value("launches_from", g.launches_from);  // absent before 2026-12-01
    g.memcpys = j.at("memcpys").get<std::int64_t>();
    g.memsets = j.at("memsets").get<std::int64_t>();
    g.tracer_api = j.value("tracer_api", "");
    // Both absent before 2026-12-06.
    auto checks = ChecksFromJson(j.value("tracer_checks", nlohmann::json()), where);
    if (!checks) return checks.error();
    g.checks = std::move(*checks);
    g.refused = j.value("refused", std::vector<std::string>{});
    if (const auto c = j.find("tracer_cost"); c != j.end() && c->is_object()) {
      TracerCost tc;
      tc.api_mode = c->at("api").get<std::string>();
      tc.per_launch_ns = c->at("per_launch_ns").get<double>();
      tc.per_launch_source = c->at("per_launch_source").get<std::string>();
      tc.cost_ns = c->at("cost_ns").get<double>();
      tc.fraction = c->at("fraction_of_region").get<double>();
      tc.warning = c->at("warning").get<std::string>();
      g.tracer_cost = tc;
    }
    for (const auto& [k, v] : j.at("by_kernel").items())
      g.by_kernel[k] = {v.at("count").get<std::int64_t>(), v.at("total_ns").get<std::int64_t>()};
    for (const auto& r : j.at("ranges")) {
      RangeFigures rf;
      rf.name = r.at("name").get<std::string>();
      rf.instances = r.at("instances").get<std::int64_t>();
      rf.median_ns = r.at("active_ns_median").get<double>();
      rf.p10_ns = r.at("active_ns_p10").get<double>();
      rf.p90_ns = r.at("active_ns_p90").get<double>();
      rf.spread_pct = r.at("spread_pct").get<double>();
      rf.kernels_median = r.at("kernels_median").get<double>();
      for (const auto& [k, v] : r.at("modal_multiset").items()) rf.modal[k] = v.get<std::int64_t>();
      rf.modal_fraction = r.at("modal_fraction").get<double>();
      for (const auto& [k, v] : r.at("per_instance").items())
        rf.per_instance[k] = {v.at("count").get<double>(), v.at("ns").get<double>()};
      rf.attribution = r.at("attribution").get<std::string>();
      for (const auto& o : r.value("odd", nlohmann::json::array()))  // absent before 2026-12
        rf.odd.push_back(
            {o.at("instance").get<std::int64_t>(), o.at("kernels").get<std::int64_t>()});
      rf.odd_instances = r.value("odd_instances", std::int64_t{0});
      for (const auto& m : r.value("mixes", nlohmann::json::array())) {  // absent before issue 35
        RangeFigures::Mix mix;
        mix.instances = m.at("instances").get<std::int64_t>();
        for (const auto& [k, v] : m.at("kernels").items()) mix.kernels[k] = v.get<std::int64_t>();
        rf.mixes.push_back(std::move(mix));
      }
      g.ranges.push_back(std::move(rf));
    }
    return g;
  } catch (const nlohmann::json::exception& e) {
    return MakeError("{}: malformed vouch.gpu_trace object: {}", where, e.what());
  }
}

std::string RenderLegGpuTraceText(const LegGpuTrace& g, const std::string& attribution) {
  std::string o = fmt::format("GPU trace ({}; {})\n", fmt::join(g.files, ", "), attribution);
  o += fmt::format(
      "  {}: {} kernels ({} from CUDA graphs), {} launch{}, {} copies, {} sets; GPU-active "
      "{:.3f} ms\n",
      g.region_marked ? "measured region" : "whole trace", g.kernels, g.graph_kernels, g.launches,
      g.launches_from == kLaunchesFromApi ? " calls" : "es (by kernel correlation id)", g.memcpys,
      g.memsets, static_cast<double>(g.active_ns) / 1e6);
  for (const auto& r : g.ranges)
    o += fmt::format(
        "  range '{}': {} instances, GPU-active per instance median {:.1f} us (p10 {:.1f}, p90 "
        "{:.1f}, spread {:.1f} %), {} kernels per instance\n",
        r.name, r.instances, r.median_ns / 1e3, r.p10_ns / 1e3, r.p90_ns / 1e3, r.spread_pct,
        r.kernels_median);
  if (g.tracer_cost)
    o += fmt::format(
        "  tracer cost (estimated): {:.3f} ms, {:.2f} % of the region ({:.0f} ns per "
        "launch, {})\n",
        g.tracer_cost->cost_ns / 1e6, g.tracer_cost->fraction * 100, g.tracer_cost->per_launch_ns,
        g.tracer_cost->per_launch_source);
  for (const auto& r : g.refused) o += fmt::format("  refused: {}\n", r);
  for (const auto& w : g.warnings) o += fmt::format("  warning: {}\n", w);
  if (g.tracer_cost && !g.tracer_cost->warning.empty())
    o += fmt::format("  warning: {}\n", g.tracer_cost->warning);
  if (g.dropped > 0)
    o += fmt::format("  CUPTI dropped {} record(s): the figures are lower bounds\n", g.dropped);
  return o;
}

Result<LegGpuTrace> AnalyzeLegDir(const std::string& dir, std::optional<RegionNs> region) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string n = it->path().filename().string();
    if (n.rfind("gpu-trace", 0) == 0 && n.find(".jsonl") != std::string::npos &&
        it->is_regular_file(ec))
      files.push_back(it->path().string());
  }
  if (ec) return MakeError("{}: cannot list: {}", dir, ec.message());
  if (files.empty())
    return MakeError(
        "{}: the tracer wrote no gpu-trace*.jsonl: the command never initialised CUDA, or "
        "CUDA_INJECTION64_PATH was not honoured (a container dropping the variable, a static "
        "CUDA runtime without injection support)",
        dir);
  std::sort(files.begin(), files.end());
  std::vector<trace::Trace> traces;
  std::set<std::string> api_modes;
  for (const auto& f : files) {
    // The tracer's mode, from the header (the reader keeps only what it needs of it).
    std::ifstream in(f);
    std::string first;
    std::getline(in, first);
    auto h = nlohmann::json::parse(first, nullptr, false);
    api_modes.insert(h.is_object() && h.contains("api") && h["api"].is_string()
                         ? h["api"].get<std::string>()
                         : std::string());
    auto t = trace::ReadCuptiTrace(f);
    if (!t) return t.error();
    traces.push_back(std::move(*t));
  }
  auto merged = trace::MergeTraces(std::move(traces), dir);
  // The range checks `trace summarize` applies: no time or sum past 2^62 ns in a leg either.
  if (auto st = trace::CheckDurationTotals(merged); !st) return st.error();
  LegGpuTrace g = AnalyzeTrace(merged, region);
  for (const auto& f : files) g.files.push_back(fs::path(f).filename().string());
  // One mode for the leg; processes that disagree: the costlier (launch-API records on).
  g.tracer_api = api_modes.count("launch") ? "launch" : api_modes.count("") ? "" : "off";
  return g;
}

}  // namespace vouch::gputrace
