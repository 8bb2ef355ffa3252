// SGLang bench_serving (JSONL) and GuideLLM (benchmarks.json): the serving results of vllm's
// peers, read into the same shape as vllm's (metrics/formats_serving.h).
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "metrics/formats_serving.h"
#include "metrics/json_doc.h"
#include "stats/serving_load.h"
#include "util/json_io.h"

namespace vouch {
namespace {

using metrics_detail::Describe;
using nlohmann::json;
using serving_detail::NumberAt;

struct PeerKnown {
  const char* key;
  const char* unit;
  Better better;
};

// {mean,median,std,pNN[.N]}_{ttft,tpot,itl,e2e_latency}_ms, the latency statistics SGLang
// writes.
bool IsSglangLatencyKey(const std::string& key) {
  for (const char* what : {"_ttft_ms", "_tpot_ms", "_itl_ms", "_e2e_latency_ms"}) {
    const std::string tail = what;
    if (key.size() <= tail.size() || key.compare(key.size() - tail.size(), tail.size(), tail))
      continue;
    const std::string stat = key.substr(0, key.size() - tail.size());
    if (stat == "mean" || stat == "median" || stat == "std") return true;
    return stat.size() >= 2 && stat[0] == 'p' &&
           stat.find_first_not_of("0123456789.", 1) == std::string::npos && stat[1] != '.' &&
           stat.back() != '.';
  }
  return false;
}

Result<json> ParsePythonJson(std::string_view text, std::string_view path, std::string_view tool) {
  const std::string clean = serving_detail::PythonJsonText(text);
  if (auto at = FindExcessiveNesting(clean, kMaxJsonDepth); at != std::string_view::npos)
    return MakeError("{}: nested deeper than {} levels (at byte {}); not {} output", path,
                     kMaxJsonDepth, at, tool);
  return metrics_detail::ReadToolJson(clean, path, tool);
}

Result<std::vector<Metric>> ParseSglangImpl(std::string_view text, std::string_view path) {
  // bench_serving appends one line per run to its --output-file: the last line is this run.
  std::string_view last;
  int line_no = 0, last_no = 0;
  for (std::size_t at = 0; at <= text.size();) {
    std::size_t end = text.find('\n', at);
    std::string_view line = text.substr(at, end == text.npos ? text.npos : end - at);
    ++line_no;
    if (line.find_first_not_of(" \t\r") != line.npos) last = line, last_no = line_no;
    if (end == text.npos) break;
    at = end + 1;
  }
  if (last.empty())
    return MakeError(
        "{}: empty: no SGLang bench_serving results (did it fail or write "
        "elsewhere?)",
        path);
  const std::string where = fmt::format("{}:{}", path, last_no);
  auto doc = ParsePythonJson(last, where, "SGLang bench_serving");
  if (!doc) return doc.error();
  if (!doc->is_object() || !doc->contains("request_throughput") ||
      (!doc->contains("mean_e2e_latency_ms") && !doc->contains("concurrency")))
    return MakeError(
        "{}: not an SGLang bench_serving result (python -m sglang.bench_serving --output-file "
        "FILE appends one JSON line per run)",
        where);
  static const PeerKnown kKnown[] = {
      {"request_throughput", "req/s", Better::kHigher},
      {"input_throughput", "tok/s", Better::kHigher},
      {"output_throughput", "tok/s", Better::kHigher},
      {"total_throughput", "tok/s", Better::kHigher},
      {"duration", "s", Better::kNone},
      {"completed", "count", Better::kNone},
      {"failed", "count", Better::kLower},
      {"total_input_tokens", "tokens", Better::kNone},
      {"total_output_tokens", "tokens", Better::kNone},
      {"total_output_tokens_retokenized", "tokens", Better::kNone},
      {"concurrency", "count", Better::kNone},
      {"accept_length", "tokens", Better::kNone},
  };
  auto times = ReadVllmRequestTimes(*doc, where);
  if (!times) return times.error();
  const std::string source = fmt::format("sglang {}", path);
  std::vector<Metric> out;
  for (const auto& [key, v] : doc->items()) {
    const PeerKnown* known = nullptr;
    for (const auto& k : kKnown)
      if (key == k.key) known = &k;
    if (!known && !IsSglangLatencyKey(key)) continue;
    if (v.is_null()) continue;  // a NaN in the file, or not measured
    auto d = metrics_detail::OptionalFinite(*doc, key.c_str(), where, "the result");
    if (!d) return d.error();
    if (known)
      out.push_back(Metric{key, **d, known->unit, known->better, source, {}, std::nullopt});
    else
      out.push_back(Metric{key, **d, "ms", Better::kLower, source, {}, std::nullopt});
  }
  if (!times->ttft_ms.empty())
    out.push_back(Metric{
        "max_ttft_ms", times->ttft_ms.back(), "ms", Better::kNone, source, {}, std::nullopt});
  auto load =
      serving_detail::ServingLoadOf(*doc, *times, where, "mean_e2e_latency_ms", "concurrency");
  if (!load) return load.error();
  if (*load) out.push_back(ServingLoadMetric(AssessServingLoad(**load), source));
  return out;
}

// ---- GuideLLM ----

// OBJ[A][B]... as an object, or nullptr.
const json* JsonAt(const json& obj, std::initializer_list<const char*> keys) {
  const json* at = &obj;
  for (const char* k : keys) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(k);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

std::optional<double> NumberAtPath(const json& obj, std::initializer_list<const char*> keys) {
  const json* v = JsonAt(obj, keys);
  if (!v || !v->is_number() || !std::isfinite(v->get<double>())) return std::nullopt;
  return v->get<double>();
}

// The strategy's name as GuideLLM prints it: synchronous, concurrent@8, throughput,
// constant@6.00, poisson@2.50.
std::string StrategyName(const json& s) {
  const std::string type = metrics_detail::StringOr(s, "type_", "");
  if (type == "constant" || type == "poisson")
    if (auto r = NumberAt(s, "rate")) return fmt::format("{}@{:.2f}", type, *r);
  if (type == "concurrent")
    if (auto n = NumberAt(s, "streams")) return fmt::format("concurrent@{:g}", *n);
  return type;
}

// The percentiles GuideLLM writes and the level each is of: p001 is the 0.1th, p999 the 99.9th.
constexpr std::pair<const char*, const char*> kGuidellmPercentiles[] = {
    {"p001", "p0.1"}, {"p01", "p1"},  {"p05", "p5"},    {"p10", "p10"},
    {"p25", "p25"},   {"p50", "p50"}, {"p75", "p75"},   {"p90", "p90"},
    {"p95", "p95"},   {"p99", "p99"}, {"p999", "p99.9"}};

Status AddDistribution(const json& metrics, const char* key, const std::string& what, double scale,
                       const std::string& prefix, std::string_view path, const std::string& source,
                       std::vector<Metric>* out) {
  const json* d = JsonAt(metrics, {key, "successful"});
  if (!d || d->is_null()) return OkStatus();
  const std::string bench = prefix.substr(0, prefix.size() - 1);
  if (!d->is_object())
    return MakeError("{}: benchmark {}: {}.successful is not an object (got {})", path, bench, key,
                     Describe(*d));
  auto add = [&](const std::string& name, const json* v, Better better) -> Status {
    if (!v || v->is_null()) return OkStatus();
    if (!v->is_number() || !std::isfinite(v->get<double>()))
      return MakeError("{}: benchmark {}: {}: {} is not a finite number (got {})", path, bench, key,
                       name, Describe(*v));
    out->push_back(
        Metric{prefix + name, v->get<double>() * scale, "ms", better, source, {}, std::nullopt});
    return OkStatus();
  };
  for (auto [stat, name] : {std::pair<const char*, const char*>{"mean", "mean"},
                            {"median", "median"},
                            {"std_dev", "std"}})
    if (auto s = add(fmt::format("{}_{}_ms", name, what), JsonAt(*d, {stat}), Better::kLower); !s)
      return s;
  if (what != "itl")  // the slowest request; ITLs are per token, not per request
    if (auto s = add(fmt::format("max_{}_ms", what), JsonAt(*d, {"max"}), Better::kNone); !s)
      return s;
  for (auto [key_p, level] : kGuidellmPercentiles)
    if (auto s = add(fmt::format("{}_{}_ms", level, what), JsonAt(*d, {"percentiles", key_p}),
                     Better::kLower);
        !s)
      return s;
  return OkStatus();
}

Result<std::vector<Metric>> ParseGuidellmImpl(std::string_view text, std::string_view path) {
  if (auto first = text.find_first_not_of(" \t\r\n");
      first != text.npos && text[first] != '{' && text[first] != '[')
    return MakeError(
        "{}: not GuideLLM's JSON report (its YAML, CSV or HTML output?): run guidellm benchmark "
        "with --output-path FILE.json",
        path);
  auto doc = ParsePythonJson(text, path, "GuideLLM");
  if (!doc) return doc.error();
  const json* benchmarks = doc->is_object() ? JsonAt(*doc, {"benchmarks"}) : nullptr;
  if (!benchmarks || !benchmarks->is_array())
    return MakeError(
        "{}: no \"benchmarks\" array: not GuideLLM's benchmarks.json (guidellm benchmark "
        "--output-path FILE.json)",
        path);
  const std::string source = fmt::format("guidellm {}", path);
  std::vector<Metric> out;
  std::map<std::string, int> seen;
  for (std::size_t i = 0; i < benchmarks->size(); ++i) {
    const json& b = (*benchmarks)[i];
    if (!b.is_object()) return MakeError("{}: benchmark {} is not an object", path, i + 1);
    const json* strategy = JsonAt(b, {"config", "strategy"});
    if (!strategy) strategy = JsonAt(b, {"args", "strategy"});  // GuideLLM before 0.4
    std::string name = strategy && strategy->is_object() ? StrategyName(*strategy) : "";
    if (name.empty()) name = fmt::format("benchmark{}", i + 1);
    if (int n = ++seen[name]; n > 1) name += fmt::format("[{}]", n);
    const std::string prefix = name + "/";
    const json* metrics = JsonAt(b, {"metrics"});
    if (!metrics || !metrics->is_object())
      return MakeError("{}: benchmark {} ({}) has no \"metrics\" object", path, i + 1, name);
    const json* totals = JsonAt(*metrics, {"request_totals"});
    if (!totals) totals = JsonAt(b, {"scheduler_metrics", "requests_made"});
    if (!totals) totals = JsonAt(b, {"run_stats", "requests_made"});
    auto completed = totals ? NumberAt(*totals, "successful") : std::nullopt;
    if (!completed)
      return MakeError("{}: benchmark {} ({}) says no request count (metrics.request_totals)", path,
                       i + 1, name);
    const double errored = NumberAt(*totals, "errored").value_or(0);
    const double incomplete = NumberAt(*totals, "incomplete").value_or(0);
    auto add = [&](const std::string& n, double v, const char* unit, Better better) {
      out.push_back(Metric{prefix + n, v, unit, better, source, {}, std::nullopt});
    };
    add("completed", *completed, "count", Better::kNone);
    add("failed", errored, "count", Better::kLower);
    add("incomplete", incomplete, "count", Better::kNone);
    for (auto [key, n, unit] : {std::tuple<const char*, const char*, const char*>{
                                    "requests_per_second", "requests_per_second", "req/s"},
                                {"output_tokens_per_second", "output_tokens_per_second", "tok/s"},
                                {"tokens_per_second", "tokens_per_second", "tok/s"}})
      if (auto v = NumberAtPath(*metrics, {key, "successful", "mean"}))
        add(n, *v, unit, Better::kHigher);
    auto in_flight = NumberAtPath(*metrics, {"request_concurrency", "successful", "mean"});
    if (in_flight) add("request_concurrency", *in_flight, "count", Better::kNone);
    for (auto [key, what, scale] :
         {std::tuple<const char*, const char*, double>{"time_to_first_token_ms", "ttft", 1},
          {"time_per_output_token_ms", "tpot", 1},
          {"inter_token_latency_ms", "itl", 1},
          {"request_latency", "e2el", 1000}})
      if (auto s = AddDistribution(*metrics, key, what, scale, prefix, path, source, &out); !s)
        return s.error();
    std::optional<double> duration = NumberAt(b, "duration");
    if (!duration) {
      auto s = NumberAtPath(b, {"scheduler_metrics", "measure_start_time"});
      auto e = NumberAtPath(b, {"scheduler_metrics", "measure_end_time"});
      if (s && e) duration = *e - *s;
    }
    if (duration) add("duration", *duration, "s", Better::kNone);
    // The load it offered: constant and poisson a rate; synchronous one request at a time;
    // concurrent N streams; throughput everything at once (up to max_concurrency).
    if (strategy && strategy->is_object() && duration && *duration > 0) {
      const std::string type = metrics_detail::StringOr(*strategy, "type_", "");
      ServingLoad l;
      bool known = true;
      if (type == "constant" || type == "poisson")
        l.offered_rate = NumberAt(*strategy, "rate");
      else if (type == "synchronous")
        l.max_concurrency = 1;
      else if (type == "concurrent")
        l.max_concurrency = NumberAt(*strategy, "streams");
      else if (type == "throughput")
        l.max_concurrency = NumberAt(*strategy, "max_concurrency");
      else
        known = false;
      if (known && ((type != "constant" && type != "poisson") || l.offered_rate)) {
        l.completed = *completed;
        l.sent = *completed + errored + incomplete;
        l.duration_s = *duration;
        l.mean_latency_s = NumberAtPath(*metrics, {"request_latency", "successful", "mean"});
        l.mean_in_flight = in_flight;
        Metric m = ServingLoadMetric(AssessServingLoad(l), source);
        m.name = prefix + m.name;
        out.push_back(std::move(m));
      }
    }
  }
  if (out.empty()) return MakeError("{}: GuideLLM report holds no benchmarks", path);
  return out;
}

}  // namespace

Result<std::vector<Metric>> ParseSglangBenchServing(std::string_view text, std::string_view path) {
  return metrics_detail::Guarded(ParseSglangImpl, text, path, "SGLang bench_serving");
}

Result<std::vector<Metric>> ParseGuidellm(std::string_view text, std::string_view path) {
  return metrics_detail::Guarded(ParseGuidellmImpl, text, path, "GuideLLM");
}

}  // namespace vouch
