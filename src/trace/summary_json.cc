// The summary and diff as JSON (the --json documents); summary.cc computes them.
#include <fmt/format.h>

#include <functional>
#include <string>

#include "trace/summary.h"
#include "util/json_io.h"

namespace vouch::trace {

namespace {
nlohmann::json FiguresToJson(const Figures& f) {
  nlohmann::json j;
  j["elapsed_ns"] = f.elapsed_ns;
  j["gpu_span_ns"] = f.gpu_span_ns;
  j["kernel_sum_ns"] = f.kernel_sum_ns;
  j["kernel_union_ns"] = f.kernel_union_ns;
  j["kernel_busy_percent_of_span"] = f.busy_percent();
  j["gpu_operation_count"] = f.gpu_op_count;
  j["kernel_count"] = f.kernel_count;
  j["launch_gaps"] = {{"positive_gap_count", f.gaps.count},
                      {"total_ns", f.gaps.total_ns},
                      {"average_ns", f.gaps.average_ns()},
                      {"maximum_ns", f.gaps.max_ns}};
  j["cpu_gpu_overlap"] = {
      {"scope", "CUDA kernel-launch API intervals intersected with GPU kernel intervals"},
      {"launch_api_count", f.launch_api_count},
      {"launch_api_union_ns", f.launch_api_union_ns},
      {"launch_api_gpu_overlap_ns", f.launch_api_overlap_ns},
      {"launch_api_overlap_percent", f.launch_overlap_percent()}};
  j["memcpy"] = {{"count", f.memcpy_count}, {"total_ns", f.memcpy_ns}, {"bytes", f.memcpy_bytes}};
  j["memset"] = {{"count", f.memset_count}, {"total_ns", f.memset_ns}, {"bytes", f.memset_bytes}};
  return j;
}
nlohmann::json Opt(std::optional<double> v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
}  // namespace

namespace {

// The document without its per-instance array (INSTANCES false) or with it.
nlohmann::json SummaryJson(const Summary& s, bool instances);

// TEXT with INDENT spaces after every newline: a dump(2) nested at that depth.
void AppendIndented(std::string* out, const std::string& text, std::size_t indent) {
  std::size_t pos = 0;
  for (;;) {
    std::size_t nl = text.find('\n', pos);
    out->append(text, pos, nl == std::string::npos ? std::string::npos : nl + 1 - pos);
    if (nl == std::string::npos) return;
    out->append(indent, ' ');
    pos = nl + 1;
  }
}

}  // namespace

nlohmann::json SummaryToJson(const Summary& s) { return SummaryJson(s, true); }

void StreamSummaryJson(const Summary& s, const std::function<void(std::string_view)>& sink) {
  // The same bytes as DumpJson(SummaryToJson(s), 2), with the instances written one at a time:
  // 100k instances as one JSON tree were 5x the trace file in memory.
  nlohmann::json j = SummaryJson(s, false);
  if (!s.instances.empty()) j["instances"] = nullptr;  // its place in the key order
  std::string out = "{";
  bool first = true;
  auto flush = [&](bool force) {
    if (force || out.size() >= (std::size_t{1} << 16)) {
      sink(out);
      out.clear();
    }
  };
  for (auto it = j.begin(); it != j.end(); ++it) {
    out += first ? "\n  " : ",\n  ";
    first = false;
    out += DumpJson(nlohmann::json(it.key()));
    out += ": ";
    if (it.key() != "instances") {
      AppendIndented(&out, DumpJson(it.value(), 2), 2);
      continue;
    }
    out += "[";
    for (std::size_t k = 0; k < s.instances.size(); ++k) {
      const Instance& i = s.instances[k];
      auto f = FiguresToJson(i.figures);
      f["index"] = i.index;
      f["start_ns"] = i.start_ns;
      out += k ? ",\n    " : "\n    ";
      AppendIndented(&out, DumpJson(f, 2), 4);
      flush(false);
    }
    out += "\n  ]";
  }
  out += first ? "}" : "\n}";
  flush(true);
}

namespace {

nlohmann::json SummaryJson(const Summary& s, bool with_instances) {
  nlohmann::json j;
  j["path"] = s.path;
  j["format"] = s.format;
  j["window"] = s.window.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.window);
  j["attribution"] = s.attribution;
  j["clock_window"] = s.clock_window;
  j["empty"] = s.empty();
  j["totals"] = FiguresToJson(s.total);
  j["instance_count"] = s.instances.size();
  if (!s.instances.empty()) {
    if (with_instances) {
      auto& arr = j["instances"] = nlohmann::json::array();
      for (const auto& i : s.instances) {
        auto f = FiguresToJson(i.figures);
        f["index"] = i.index;
        f["start_ns"] = i.start_ns;
        arr.push_back(f);
      }
    }
    double n = static_cast<double>(s.instances.size());
    j["per_instance_mean"] = {{"elapsed_ns", static_cast<double>(s.total.elapsed_ns) / n},
                              {"gpu_span_ns", static_cast<double>(s.total.gpu_span_ns) / n},
                              {"kernel_sum_ns", static_cast<double>(s.total.kernel_sum_ns) / n},
                              {"kernel_union_ns", static_cast<double>(s.total.kernel_union_ns) / n},
                              {"kernel_count", static_cast<double>(s.total.kernel_count) / n}};
  }
  auto& k = j["kernels"] = nlohmann::json::array();
  for (const auto& r : s.kernels)
    k.push_back({{"name", r.name},
                 {"component", r.component},
                 {"count", r.count},
                 {"total_ns", r.total_ns},
                 {"mean_ns", r.mean_ns},
                 {"median_ns", r.median_ns},
                 {"min_ns", r.min_ns},
                 {"max_ns", r.max_ns},
                 {"mixture", r.mixture},
                 {"percent_of_kernel_time", r.percent_of_kernel_time}});
  j["mixture_rule"] = fmt::format("max >= {} x median with at least {} launches",
                                  kMixtureMaxOverMedian, kMixtureMinCount);
  j["rules"] = s.rules_source;
  auto& c = j["components"] = nlohmann::json::object();
  for (const auto& r : s.components)
    c[r.name] = {{"milliseconds", static_cast<double>(r.total_ns) / 1e6},
                 {"total_ns", r.total_ns},
                 {"percent_of_kernel_time", r.percent_of_kernel_time},
                 {"launches", r.launches},
                 {"top_kernel", r.top_kernel}};
  auto& rk = j["bottleneck_ranking"] = nlohmann::json::array();
  for (const auto& r : s.ranking)
    rk.push_back({{"name", r.name},
                  {"kind", r.kind},
                  {"milliseconds", static_cast<double>(r.total_ns) / 1e6},
                  {"percent_of_kernel_time", Opt(r.percent_of_kernel_time)},
                  {"percent_of_span", r.percent_of_span}});
  j["phases"] = s.phases;
  j["skipped_events_by_category"] = s.skipped_by_category;
  j["unknown_categories"] = s.unknown_categories;
  j["warnings"] = s.warnings;
  return j;
}

}  // namespace

nlohmann::json DiffToJson(const Diff& d) {
  nlohmann::json j;
  j["a"] = {{"path", d.a.path},
            {"window", d.a.window},
            {"instances", d.a.instances.size()},
            {"clock_window", d.a.clock_window}};
  j["b"] = {{"path", d.b.path},
            {"window", d.b.window},
            {"instances", d.b.instances.size()},
            {"clock_window", d.b.clock_window}};
  if (d.length_a) j["lengths"] = {*d.length_a, *d.length_b};
  auto& h = j["headline"] = nlohmann::json::object();
  for (const auto& r : d.headline)
    h[r.name] = {{"previous", r.a},
                 {"current", r.b},
                 {"absolute_change", r.change()},
                 {"percent_change", Opt(r.percent_change())}};
  auto rows = [&](const std::vector<DiffRow>& v) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : v) {
      nlohmann::json x = {{"name", r.name},
                          {"status", r.status},
                          {"previous_ns", r.a_ns},
                          {"current_ns", r.b_ns},
                          {"previous_count", r.a_count},
                          {"current_count", r.b_count},
                          {"absolute_change_ns", r.change_ns()},
                          {"percent_change", Opt(r.percent_change())}};
      if (r.ns_per_unit_length) {
        x["ns_per_unit_length"] = *r.ns_per_unit_length;
        x["fixed_ns"] = Opt(r.fixed_ns);
        x["growth"] = r.growth;
      }
      arr.push_back(x);
    }
    return arr;
  };
  j["components"] = rows(d.components);
  j["kernels"] = rows(d.kernels);
  j["added_kernels"] = d.added;
  j["removed_kernels"] = d.removed;
  j["warnings"] = d.warnings;
  return j;
}

}  // namespace vouch::trace
