#include "metrics/formats.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "metrics/json_doc.h"
#include "metrics/json_util.h"
#include "util/json_io.h"
#include "util/number.h"
#include "util/strings.h"

namespace vouch {
namespace {

using metrics_detail::BoolOr;
using metrics_detail::Describe;
using metrics_detail::Guarded;
using metrics_detail::StringOr;
using nlohmann::json;

Result<json> ParseJsonDocument(std::string_view text, std::string_view path,
                               std::string_view tool) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return MakeError(
        "{}: empty: the {} output has no results (did the tool fail or write "
        "elsewhere?)",
        path, tool);
  if (auto at = FindExcessiveNesting(text, kMaxJsonDepth); at != std::string_view::npos)
    return MakeError("{}: nested deeper than {} levels (at byte {}); not {} output", path,
                     kMaxJsonDepth, at, tool);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    bool non_finite = text.find("NaN") != text.npos || text.find("Infinity") != text.npos;
    return MakeError(
        "{}: not valid {} JSON{} ({})", path, tool,
        non_finite ? "; it contains NaN or Infinity, which is not a usable number" : "", e.what());
  }
}

// A finite number from a JSON value, or an error naming the field.
// Nanoseconds in one Google Benchmark time_unit; 0 for a unit it does not write.
double TimeUnitNs(std::string_view unit) {
  return unit == "ns" ? 1 : unit == "us" ? 1e3 : unit == "ms" ? 1e6 : unit == "s" ? 1e9 : 0;
}

Result<double> FiniteNumber(const json& v, std::string_view path, std::string_view what) {
  if (!v.is_number()) return MakeError("{}: {} is not a number (got {})", path, what, Describe(v));
  double d = v.get<double>();
  if (!std::isfinite(d)) return MakeError("{}: {} is not finite", path, what);
  return d;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// ---- llama-bench ----------------------------------------------------------------------------

Result<std::vector<double>> NumberArray(const json& obj, const char* key, std::string_view path,
                                        std::string_view where) {
  std::vector<double> out;
  auto it = obj.find(key);
  if (it == obj.end()) return out;
  if (!it->is_array()) return MakeError("{}: {}: \"{}\" is not an array", path, where, key);
  for (const auto& x : *it) {
    auto d = FiniteNumber(x, path, fmt::format("{}: an element of \"{}\"", where, key));
    if (!d) return d.error();
    out.push_back(*d);
  }
  return out;
}

// The properties llama.cpp's own comparison script keys its results by
// (scripts/compare-llama-bench.py, LLAMA_BENCH_KEY_PROPERTIES, ggml-org/llama.cpp at
// 05f3b204), less n_prompt, n_gen and n_depth, which the test name carries. Two results are
// the same measurement only when all of these are equal.
constexpr const char* kLlamaKeyProperties[] = {
    "cpu_info",       "gpu_info",   "backends",      "n_gpu_layers", "tensor_buft_overrides",
    "model_filename", "model_type", "n_batch",       "n_ubatch",     "embeddings",
    "cpu_mask",       "cpu_strict", "poll",          "n_threads",    "type_k",
    "type_v",         "use_mmap",   "no_kv_offload", "split_mode",   "main_gpu",
    "tensor_split",   "flash_attn"};

std::string PropertyText(const json& v) {
  return v.is_string() ? v.get<std::string>() : DumpJson(v);
}

std::map<std::string, std::string> LlamaConfig(const json& o) {
  std::map<std::string, std::string> config;
  for (const char* k : kLlamaKeyProperties)
    if (auto it = o.find(k); it != o.end()) config[k] = PropertyText(*it);
  return config;
}

Result<std::vector<Metric>> LlamaFromObjects(const std::vector<json>& objs, std::string_view path,
                                             std::string_view source) {
  std::vector<Metric> out;
  for (size_t i = 0; i < objs.size(); ++i)
    if (!objs[i].is_object()) return MakeError("{}: result {} is not a JSON object", path, i + 1);
  // The key properties that differ between results of this output (a -b 256,512 sweep, two
  // -m models): they go into the metric name, so that a sweep in another order names the same
  // configuration the same way.
  std::vector<std::string> varying;
  for (const char* k : kLlamaKeyProperties) {
    std::set<std::string> values;
    for (const auto& o : objs) {
      auto it = o.find(k);
      values.insert(it == o.end() ? std::string("\x01"
                                                "absent")
                                  : PropertyText(*it));
    }
    if (values.size() > 1) varying.push_back(k);
  }
  std::map<std::string, int> seen;
  for (size_t i = 0; i < objs.size(); ++i) {
    const json& o = objs[i];
    std::string where = fmt::format("result {}", i + 1);
    for (const char* k : {"n_prompt", "n_gen", "avg_ts", "avg_ns"})
      if (!o.contains(k))
        return MakeError(
            "{}: {} has no \"{}\": not llama-bench JSON output (use -o json or -o "
            "jsonl)",
            path, where, k);
    if (!o["n_prompt"].is_number_integer() || !o["n_gen"].is_number_integer())
      return MakeError("{}: {}: n_prompt and n_gen must be integers", path, where);
    auto n_prompt = o["n_prompt"].get<long long>();
    auto n_gen = o["n_gen"].get<long long>();
    long long n_depth = 0;
    if (auto d = o.find("n_depth"); d != o.end() && d->is_number_integer())
      n_depth = d->get<long long>();
    std::string test;
    if (n_prompt > 0 && n_gen > 0)
      test = fmt::format("pp{}+tg{}", n_prompt, n_gen);
    else if (n_prompt > 0)
      test = fmt::format("pp{}", n_prompt);
    else if (n_gen > 0)
      test = fmt::format("tg{}", n_gen);
    else
      return MakeError("{}: {} has n_prompt = n_gen = 0: nothing was measured", path, where);
    if (n_depth > 0) test += fmt::format("@d{}", n_depth);
    std::map<std::string, std::string> config = LlamaConfig(o);
    if (!varying.empty()) {
      std::vector<std::string> parts;
      for (const auto& k : varying) {
        auto it = config.find(k);
        parts.push_back(fmt::format("{}={}", k, it == config.end() ? "-" : it->second));
      }
      test += fmt::format("[{}]", fmt::join(parts, ","));
    }
    if (int n = ++seen[test]; n > 1) test += fmt::format("[{}]", n);

    auto ts = FiniteNumber(o["avg_ts"], path, where + ": avg_ts");
    if (!ts) return ts.error();
    auto ns = FiniteNumber(o["avg_ns"], path, where + ": avg_ns");
    if (!ns) return ns.error();
    auto samples_ts = NumberArray(o, "samples_ts", path, where);
    if (!samples_ts) return samples_ts.error();
    auto samples_ns = NumberArray(o, "samples_ns", path, where);
    if (!samples_ns) return samples_ns.error();
    out.push_back(Metric{test + ".tokens_per_s", *ts, "tok/s", Better::kHigher, std::string(source),
                         std::move(*samples_ts), std::nullopt, config});
    out.push_back(Metric{test + ".duration_ns", *ns, "ns", Better::kLower, std::string(source),
                         std::move(*samples_ns), std::nullopt, config});
  }
  if (out.empty()) return MakeError("{}: llama-bench output holds no results", path);
  return out;
}

// llama-bench's other outputs, and lines some backends print before the JSON on stdout
// (ggml_vulkan: "Found 1 Vulkan devices:"). Returns the offset where the JSON starts, or an
// error that says what the output is and what to do.
Result<size_t> LlamaJsonStart(std::string_view text, std::string_view path) {
  constexpr const char* kDo = "run llama-bench with -o json (or -o jsonl)";
  size_t at = 0;
  int skipped = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    std::string_view line = text.substr(at, end == text.npos ? text.npos : end - at);
    size_t first = line.find_first_not_of(" \t\r");
    if (first != line.npos) {
      std::string_view l = line.substr(first);
      if (l[0] == '[' || l[0] == '{') return at + first;
      if (l[0] == '|')
        return MakeError(
            "{}:{}: this is llama-bench's Markdown table (its default output, -o md); vouch reads "
            "its JSON: {}",
            path, skipped + 1, kDo);
      if (l.substr(0, 13) == "build_commit,")
        return MakeError(
            "{}:{}: this is llama-bench's CSV output (-o csv); vouch reads its JSON: {}", path,
            skipped + 1, kDo);
      if (l.substr(0, 12) == "CREATE TABLE")
        return MakeError(
            "{}:{}: this is llama-bench's SQL output (-o sql); vouch reads its JSON: {}", path,
            skipped + 1, kDo);
    }
    ++skipped;  // a banner line (a backend's device list): not part of the results
    if (end == text.npos) break;
    at = end + 1;
  }
  return MakeError("{}: no llama-bench JSON in the output ({} lines of other text): {}", path,
                   skipped, kDo);
}

}  // namespace

static Result<std::vector<Metric>> ParseLlamaBenchImpl(std::string_view text,
                                                       std::string_view path) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return MakeError("{}: empty: llama-bench wrote no results (did it fail? see its stderr)", path);
  auto start = LlamaJsonStart(text, path);
  if (!start) return start.error();
  // Line numbers in errors count the skipped banner lines too.
  const int line_offset =
      static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(*start), '\n'));
  text.remove_prefix(*start);
  size_t first = 0;
  std::string source = fmt::format("llama-bench {}", path);
  std::vector<json> objs;
  if (text[first] == '[') {
    auto doc = ParseJsonDocument(text, path, "llama-bench");
    if (!doc) return doc.error();
    for (auto& o : *doc) objs.push_back(std::move(o));
    return LlamaFromObjects(objs, path, source);
  }
  // JSONL: one object per line. llama-bench's stdout may also carry other lines (e.g. a
  // progress line) only with --progress, which goes to stderr; so every non-blank line
  // must be an object.
  LineReader lines(text);
  LineReader::Line l;
  while (lines.Next(&l)) {
    if (l.text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const int line_no = l.number + line_offset;
    if (FindExcessiveNesting(l.text, kMaxJsonDepth) != std::string_view::npos)
      return MakeError("{}:{}: nested deeper than {} levels; not a llama-bench JSONL line", path,
                       line_no, kMaxJsonDepth);
    try {
      objs.push_back(json::parse(l.text));
    } catch (const json::exception& e) {
      if (!l.terminated)
        return MakeError(
            "{}:{}: the last line is truncated (no newline, not valid JSON): "
            "llama-bench likely stopped mid-write",
            path, line_no);
      return MakeError("{}:{}: not a llama-bench JSONL line ({})", path, line_no, e.what());
    }
  }
  return LlamaFromObjects(objs, path, source);
}

// ---- Google Benchmark ------------------------------------------------------------------------

// Google Benchmark's other outputs on stdout: its CSV (--benchmark_format=csv, a header of
// field names) and its console table (the default: a rule of dashes, then "Benchmark  Time
// CPU  Iterations"). An error that names the output and the fix, or nullopt.
static std::optional<Error> GbenchNotJson(std::string_view text, std::string_view path) {
  constexpr const char* kFix =
      "vouch reads its JSON: run the benchmark with --benchmark_format=json (or write a file "
      "with --benchmark_out=FILE --benchmark_out_format=json)";
  LineReader lines(text);
  LineReader::Line l;
  while (lines.Next(&l)) {
    std::string_view t = l.text;
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    if (t.empty() || t.front() == '{' || t.front() == '[') {
      if (!t.empty()) return std::nullopt;
      continue;
    }
    if (t.substr(0, 26) == "name,iterations,real_time,")
      return Error{
          fmt::format("{}:{}: this is Google Benchmark's CSV output "
                      "(--benchmark_format=csv); {}",
                      path, l.number, kFix)};
    if (t.substr(0, 9) == "Benchmark" && t.find("Time") != t.npos && t.find("Iterations") != t.npos)
      return Error{
          fmt::format("{}:{}: this is Google Benchmark's console output (its default "
                      "table); {}",
                      path, l.number, kFix)};
  }
  return std::nullopt;
}

static Result<std::vector<Metric>> ParseGoogleBenchmarkImpl(std::string_view text,
                                                            std::string_view path) {
  if (auto other = GbenchNotJson(text, path)) return *other;
  auto doc = ParseJsonDocument(text, path, "Google Benchmark");
  if (!doc) return doc.error();
  if (!doc->is_object() || !doc->contains("benchmarks") || !(*doc)["benchmarks"].is_array())
    return MakeError(
        "{}: no \"benchmarks\" array: not Google Benchmark JSON (use "
        "--benchmark_format=json or --benchmark_out_format=json)",
        path);
  // Fields that are not counters (docs/json_format.md of google/benchmark).
  static const std::set<std::string> kNotCounters = {"name",
                                                     "family_index",
                                                     "per_family_instance_index",
                                                     "run_name",
                                                     "run_type",
                                                     "repetitions",
                                                     "repetition_index",
                                                     "threads",
                                                     "iterations",
                                                     "real_time",
                                                     "cpu_time",
                                                     "time_unit",
                                                     "aggregate_name",
                                                     "aggregate_unit",
                                                     "label",
                                                     "error_occurred",
                                                     "error_message",
                                                     "skipped",
                                                     "skip_message",
                                                     "big_o",
                                                     "cpu_coefficient",
                                                     "real_coefficient",
                                                     "rms",
                                                     "allocs_per_iter",
                                                     "max_bytes_used",
                                                     "total_allocated_bytes",
                                                     "net_heap_growth"};
  std::string source = fmt::format("gbench {}", path);
  std::vector<Metric> out;
  std::map<std::string, size_t> index;  // metric name -> position in out
  auto add = [&](const std::string& name, double v, const std::string& unit, Better b) {
    auto it = index.find(name);
    if (it == index.end()) {
      index[name] = out.size();
      out.push_back(Metric{name, v, unit, b, source, {v}, std::nullopt});
    } else {
      out[it->second].samples.push_back(v);
    }
  };
  size_t i = 0;
  std::vector<std::string> errored;  // "BM_X: message"
  for (const auto& b : (*doc)["benchmarks"]) {
    ++i;
    if (!b.is_object() || !b.contains("name") || !b["name"].is_string())
      return MakeError("{}: benchmark {} has no string \"name\"", path, i);
    std::string name = b["name"].get<std::string>();
    // SkipWithError writes error_occurred: true; SkipWithMessage writes it false (since 1.8)
    // or "skipped". An error is a failure of the leg, a skip is the benchmark's own choice.
    if (BoolOr(b, "error_occurred", false)) {
      std::string msg = StringOr(b, "error_message", "");
      errored.push_back(msg.empty() ? name : fmt::format("{} ({})", name, msg));
      continue;
    }
    if (BoolOr(b, "skipped", false) || !StringOr(b, "error_message", "").empty()) continue;
    if (b.contains("big_o") || b.contains("rms")) continue;  // complexity fits, not timings
    // A spread aggregate is never better for being larger: stddev keeps the unit of what it
    // measures, cv (stddev / mean) is a dimensionless fraction. A rate's stddev is not a rate
    // that is better when higher.
    const std::string aggregate = StringOr(b, "aggregate_name", "");
    const bool cv = aggregate == "cv";
    const bool spread = cv || aggregate == "stddev";
    for (const char* k : {"real_time", "cpu_time"}) {
      if (!b.contains(k)) continue;
      auto d = FiniteNumber(b[k], path, fmt::format("benchmark '{}' {}", name, k));
      if (!d) return d.error();
      std::string unit = cv ? "fraction" : StringOr(b, "time_unit", "ns");
      std::string mname = fmt::format("{}.{}", name, k);
      double v = *d;
      // Repetitions pool under the first one's unit: a later one in another unit is converted
      // (5 ms is 5000 us, never 5000 ms), and one that cannot be converted is refused.
      if (auto it = index.find(mname); it != index.end() && out[it->second].unit != unit) {
        const std::string& first = out[it->second].unit;
        double from = TimeUnitNs(unit), to = TimeUnitNs(first);
        if (from == 0 || to == 0)
          return MakeError(
              "{}: benchmark '{}' {}: time_unit '{}' where an earlier repetition has '{}'; "
              "the two cannot be pooled",
              path, name, k, unit, first);
        auto c = ScaleFinite(v, from / to, fmt::format("{}: benchmark '{}' {}", path, name, k));
        if (!c) return c.error();
        v = *c;
        unit = first;
      }
      add(mname, v, unit, Better::kLower);
    }
    for (const auto& [key, v] : b.items()) {
      if (kNotCounters.count(key) || !v.is_number()) continue;
      auto d = FiniteNumber(v, path, fmt::format("benchmark '{}' {}", name, key));
      if (!d) return d.error();
      std::string unit;
      Better better = Better::kNone;
      if (key == "items_per_second") unit = "items/s", better = Better::kHigher;
      if (key == "bytes_per_second") unit = "B/s", better = Better::kHigher;
      if (spread) better = Better::kLower;
      if (cv) unit = "fraction";
      add(fmt::format("{}.{}", name, key), *d, unit, better);
    }
  }
  if (!errored.empty())
    return MakeError(
        "{}: {} benchmark{} failed (SkipWithError): {}; its numbers are not results, so the leg "
        "has none",
        path, errored.size(), errored.size() == 1 ? "" : "s",
        fmt::join(errored.begin(), errored.begin() + std::min<size_t>(errored.size(), 5), "; "));
  if (out.empty()) return MakeError("{}: Google Benchmark output holds no usable results", path);
  for (auto& m : out) {
    if (m.samples.size() > 1)
      m.value = Median(m.samples);
    else
      m.samples.clear();  // one run: no per-repetition spread to expose
  }
  return out;
}

// ---- nvbench ---------------------------------------------------------------------------------

static Result<std::vector<Metric>> ParseNvbenchImpl(std::string_view text, std::string_view path) {
  auto doc = ParseJsonDocument(text, path, "nvbench");
  if (!doc) return doc.error();
  if (!doc->is_object() || !doc->contains("benchmarks") || !(*doc)["benchmarks"].is_array())
    return MakeError("{}: no \"benchmarks\" array: not nvbench --json output", path);
  if (auto v = doc->find("meta"); v != doc->end() && v->is_object()) {
    json::json_pointer at("/version/json/major");
    long long major = 1;
    if (v->contains(at) && v->at(at).is_number_integer()) major = v->at(at).get<long long>();
    if (major != 1)
      return MakeError("{}: nvbench JSON format version {} is not supported (1.x is); update vouch",
                       path, major);
  }
  std::string source = fmt::format("nvbench {}", path);
  std::vector<Metric> out;
  for (const auto& b : (*doc)["benchmarks"]) {
    if (!b.is_object() || !b.contains("name") || !b["name"].is_string())
      return MakeError("{}: a benchmark has no string \"name\"", path);
    std::string bname = b["name"].get<std::string>();
    auto states = b.find("states");
    if (states == b.end() || !states->is_array())
      return MakeError(
          "{}: benchmark '{}': \"states\" is not an array (an nvbench older than "
          "JSON format 1.0?)",
          path, bname);
    for (const auto& st : *states) {
      if (!st.is_object())
        return MakeError("{}: benchmark '{}': a state is not an object", path, bname);
      if (BoolOr(st, "is_skipped", false)) continue;
      std::string sname = StringOr(st, "name", "");
      auto sums = st.find("summaries");
      if (sums == st.end() || sums->is_null()) continue;
      if (!sums->is_array())
        return MakeError("{}: benchmark '{}' state '{}': \"summaries\" is not an array", path,
                         bname, sname);
      for (const auto& s : *sums) {
        if (!s.is_object() || !s.contains("tag") || !s["tag"].is_string()) continue;
        std::string tag = s["tag"].get<std::string>();
        auto data = s.find("data");
        if (data == s.end() || !data->is_array()) continue;
        const json* value = nullptr;
        std::string type;
        for (const auto& d : *data)
          if (d.is_object() && StringOr(d, "name", "") == "value") {
            auto v = d.find("value");  // const operator[] on a missing key is undefined
            value = v == d.end() ? nullptr : &*v;
            type = StringOr(d, "type", "");
          }
        if (!value || value->is_null() || (type != "float64" && type != "int64")) continue;
        std::string name = fmt::format("{}[{}].{}", bname, sname, tag);
        double x = 0;
        if (value->is_string()) {
          // nvbench writes numbers as strings to keep their precision.
          auto d = ParseFiniteDouble(value->get_ref<const std::string&>(),
                                     fmt::format("{}: {}", path, name));
          if (!d) return d.error();
          x = *d;
        } else if (value->is_number()) {
          x = value->get<double>();
        } else {
          return MakeError("{}: {}: value is neither a number nor a numeric string", path, name);
        }
        if (!std::isfinite(x)) return MakeError("{}: {}: value is not finite", path, name);
        std::string hint = StringOr(s, "hint", "");
        std::string unit;
        Better better = Better::kNone;
        if (hint == "duration") unit = "s", better = Better::kLower;
        if (hint == "item_rate") unit = "items/s", better = Better::kHigher;
        if (hint == "byte_rate") unit = "B/s", better = Better::kHigher;
        if (hint == "sample_size") unit = "count";
        if (hint == "percentage") unit = "fraction";
        if (tag.find("stdev") != std::string::npos) better = Better::kLower;
        // Time spent measuring, not a property of the code under test.
        if (tag.find("walltime") != std::string::npos) better = Better::kNone;
        out.push_back(Metric{name, x, unit, better, source, {}, std::nullopt});
      }
    }
  }
  if (out.empty()) return MakeError("{}: nvbench output holds no measured states", path);
  return out;
}

Result<std::vector<Metric>> ParseLlamaBench(std::string_view text, std::string_view path) {
  return Guarded(ParseLlamaBenchImpl, text, path, "llama-bench");
}
Result<std::vector<Metric>> ParseGoogleBenchmark(std::string_view text, std::string_view path) {
  return Guarded(ParseGoogleBenchmarkImpl, text, path, "Google Benchmark");
}
Result<std::vector<Metric>> ParseNvbench(std::string_view text, std::string_view path) {
  return Guarded(ParseNvbenchImpl, text, path, "nvbench");
}

}  // namespace vouch
