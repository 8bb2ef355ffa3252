#include "metrics/formats_serving.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "metrics/formats.h"
#include "metrics/json_doc.h"
#include "stats/serving_load.h"
#include "util/json_io.h"

namespace vouch {
namespace {

using metrics_detail::FiniteArray;
using metrics_detail::OptionalFinite;
using nlohmann::json;
using serving_detail::NumberAt;

// {mean,median,std,pNN[.N]}_{ttft,tpot,itl,e2el}_ms, the latency statistics vllm writes.
bool IsVllmLatencyKey(std::string_view key) {
  constexpr std::string_view kSuffix = "_ms";
  if (key.size() <= kSuffix.size() || key.substr(key.size() - kSuffix.size()) != kSuffix)
    return false;
  key.remove_suffix(kSuffix.size());
  size_t us = key.find('_');
  if (us == key.npos) return false;
  std::string_view stat = key.substr(0, us), what = key.substr(us + 1);
  if (what != "ttft" && what != "tpot" && what != "itl" && what != "e2el") return false;
  if (stat == "mean" || stat == "median" || stat == "std") return true;
  if (stat.size() < 2 || stat[0] != 'p') return false;
  std::string_view num = stat.substr(1);
  size_t dot = num.find('.');
  auto digits = [](std::string_view d) {
    return !d.empty() && d.find_first_not_of("0123456789") == d.npos;
  };
  return dot == num.npos ? digits(num) : digits(num.substr(0, dot)) && digits(num.substr(dot + 1));
}

Result<json> ParseVllmJson(std::string_view text, std::string_view path) {
  if (auto at = FindExcessiveNesting(text, kMaxJsonDepth); at != std::string_view::npos)
    return MakeError("{}: nested deeper than {} levels (at byte {}); not vllm bench serve output",
                     path, kMaxJsonDepth, at);
  return metrics_detail::ReadToolJson(text, path, "vllm bench serve");
}

Result<std::vector<Metric>> ParseVllmImpl(std::string_view text, std::string_view path) {
  auto doc = ParseVllmJson(text, path);
  if (!doc) return doc.error();
  if (!doc->is_object())
    return MakeError("{}: not a vllm bench serve result (expected a JSON object)", path);
  struct Known {
    const char* key;
    const char* unit;
    Better better;
  };
  static const Known kKnown[] = {
      {"request_throughput", "req/s", Better::kHigher},
      {"request_goodput", "req/s", Better::kHigher},
      {"output_throughput", "tok/s", Better::kHigher},
      {"total_token_throughput", "tok/s", Better::kHigher},
      {"input_throughput", "tok/s", Better::kHigher},
      {"max_output_tokens_per_s", "tok/s", Better::kHigher},
      {"max_concurrent_requests", "count", Better::kNone},
      {"duration", "s", Better::kNone},
      {"completed", "count", Better::kNone},
      {"failed", "count", Better::kLower},
      {"total_input_tokens", "tokens", Better::kNone},
      {"total_output_tokens", "tokens", Better::kNone},
  };
  if (!doc->contains("request_throughput") && !doc->contains("output_throughput"))
    return MakeError(
        "{}: no request_throughput or output_throughput: not a vllm bench serve "
        "result file (run it with --save-result)",
        path);
  auto times = ReadVllmRequestTimes(*doc, path);
  if (!times) return times.error();
  std::string source = fmt::format("vllm {}", path);
  std::vector<Metric> out;
  for (const auto& [raw_key, v] : doc->items()) {
    // benchmark_serving.py wrote "request_goodput:" (with a colon) until vllm fixed the key;
    // result files from before the fix are still read.
    const std::string key = raw_key == "request_goodput:" ? "request_goodput" : raw_key;
    if (raw_key == "request_goodput:" && doc->contains("request_goodput")) continue;
    const Known* known = nullptr;
    for (const auto& k : kKnown)
      if (key == k.key) known = &k;
    bool latency = !known && IsVllmLatencyKey(key);
    if (!known && !latency) continue;
    if (v.is_null()) continue;  // e.g. request_goodput without --goodput: not measured
    auto d = OptionalFinite(*doc, raw_key.c_str(), path, "the result");
    if (!d) return d.error();
    if (known) {
      out.push_back(Metric{key, **d, known->unit, known->better, source, {}, std::nullopt});
      continue;
    }
    out.push_back(Metric{key, **d, "ms", Better::kLower, source, {}, std::nullopt});
  }
  // The slowest request of each per-request time: the order-statistic bound of a percentile
  // the count cannot support is stated from it (stats/percentiles.h). A statistic of one
  // request, not a figure to gate: no direction.
  for (const auto& [what, v] :
       {std::pair<const char*, const std::vector<double>*>{"ttft", &times->ttft_ms},
        {"tpot", &times->tpot_ms},
        {"e2el", &times->e2el_ms}})
    if (!v->empty() && !doc->contains(fmt::format("max_{}_ms", what)))
      out.push_back(Metric{fmt::format("max_{}_ms", what),
                           v->back(),
                           "ms",
                           Better::kNone,
                           source,
                           {},
                           std::nullopt});
  auto load = serving_detail::ServingLoadOf(*doc, *times, path, "mean_e2el_ms", nullptr);
  if (!load) return load.error();
  if (*load) out.push_back(ServingLoadMetric(AssessServingLoad(**load), source));
  return out;
}

}  // namespace

namespace serving_detail {

std::optional<double> NumberAt(const json& doc, const char* key) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_number()) return std::nullopt;
  double d = it->get<double>();
  return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}

static double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// vllm's main_async writes request_rate inf as the string "inf".
Result<std::optional<ServingLoad>> ServingLoadOf(const json& doc, const VllmRequestTimes& t,
                                                 std::string_view path,
                                                 const char* mean_latency_ms_key,
                                                 const char* in_flight_key) {
  auto rate = doc.find("request_rate");
  if (rate == doc.end()) return std::optional<ServingLoad>();
  ServingLoad l;
  if (rate->is_string()) {
    if (rate->get_ref<const std::string&>() != "inf") return std::optional<ServingLoad>();
  } else if (rate->is_number() && std::isfinite(rate->get<double>()) && rate->get<double>() > 0) {
    l.offered_rate = rate->get<double>();
  } else {
    return MakeError("{}: \"request_rate\" is neither a positive number nor \"inf\"", path);
  }
  l.max_concurrency = NumberAt(doc, "max_concurrency");
  auto completed = NumberAt(doc, "completed"), duration = NumberAt(doc, "duration");
  if (!completed || !duration) return std::optional<ServingLoad>();
  l.completed = *completed;
  l.sent = *completed + NumberAt(doc, "failed").value_or(0);
  l.duration_s = *duration;
  if (in_flight_key) l.mean_in_flight = NumberAt(doc, in_flight_key);
  if (auto e2el = NumberAt(doc, mean_latency_ms_key))
    l.mean_latency_s = *e2el / 1000;
  else if (!t.e2el_ms.empty())
    l.mean_latency_s = Mean(t.e2el_ms) / 1000;
  else if (auto ttft = NumberAt(doc, "mean_ttft_ms"), tpot = NumberAt(doc, "mean_tpot_ms"),
           out = NumberAt(doc, "total_output_tokens");
           ttft && tpot && out && *completed > 0)
    l.mean_latency_s = (*ttft + *tpot * std::max(0.0, *out / *completed - 1)) / 1000;
  if (auto starts = doc.find("start_times"); starts != doc.end() && starts->is_array()) {
    auto s = FiniteArray(doc, "start_times", path, "per-request results");
    if (!s) return s.error();
    if (s->size() >= 2)
      l.send_span_s =
          *std::max_element(s->begin(), s->end()) - *std::min_element(s->begin(), s->end());
  }
  return std::optional<ServingLoad>(l);
}

std::string PythonJsonText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size())
        out += text[++i];
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (text.substr(i, 3) == "NaN") {
      out += "null";
      i += 2;
      continue;
    } else if (text.substr(i, 9) == "-Infinity") {
      out += "\"-inf\"";
      i += 8;
      continue;
    } else if (text.substr(i, 8) == "Infinity") {
      out += "\"inf\"";
      i += 7;
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace serving_detail

Result<VllmRequestTimes> ReadVllmRequestTimes(const json& doc, std::string_view path) {
  VllmRequestTimes t;
  const char* where = "per-request results";
  auto ttfts = FiniteArray(doc, "ttfts", path, where);
  if (!ttfts) return ttfts.error();
  auto lat = FiniteArray(doc, "latencies", path, where);
  if (!lat) return lat.error();
  auto lens = FiniteArray(doc, "output_lens", path, where);
  if (!lens) return lens.error();
  const std::size_t n = std::max(ttfts->size(), lat->size());
  if (n == 0) return t;
  auto errors = doc.find("errors");
  // Without "errors" (a result saved without --save-detailed keeps "latencies" alone) a failed
  // request is the one whose latency vllm left at 0.
  auto failed = [&](std::size_t i) {
    if (errors == doc.end() || !errors->is_array() || i >= errors->size())
      return !lat->empty() && !((*lat)[i] > 0);
    const json& e = (*errors)[i];
    return !(e.is_null() || (e.is_string() && e.get_ref<const std::string&>().empty()));
  };
  for (auto [name, size] : {std::pair<const char*, std::size_t>{"ttfts", ttfts->size()},
                            {"latencies", lat->size()},
                            {"output_lens", lens->size()}})
    if (size != 0 && size != n)
      return MakeError("{}: \"{}\" holds {} values where another per-request array holds {}", path,
                       name, size, n);
  if (errors != doc.end() && !errors->is_null() && (!errors->is_array() || errors->size() != n))
    return MakeError("{}: \"errors\" is not an array of one entry per request ({})", path, n);
  for (std::size_t i = 0; i < n; ++i) {
    if (failed(i)) continue;
    if (!ttfts->empty()) t.ttft_ms.push_back((*ttfts)[i] * 1000);
    if (!lat->empty()) t.e2el_ms.push_back((*lat)[i] * 1000);
    if (!ttfts->empty() && !lat->empty() && !lens->empty() && (*lens)[i] > 1)
      t.tpot_ms.push_back(((*lat)[i] - (*ttfts)[i]) / ((*lens)[i] - 1) * 1000);
  }
  for (auto* v : {&t.ttft_ms, &t.e2el_ms, &t.tpot_ms}) std::sort(v->begin(), v->end());
  return t;
}

Result<std::vector<Metric>> ParseVllmBenchServe(std::string_view text, std::string_view path) {
  // The serving benchmarks of vllm's peers, told apart by keys vllm never writes: SGLang's
  // e2e_latency and retokenized counts, GuideLLM's "benchmarks" without a request_throughput.
  auto has = [&](std::string_view key) { return text.find(key) != std::string_view::npos; };
  if (has("\"mean_e2e_latency_ms\"") || has("\"total_output_tokens_retokenized\""))
    return ParseSglangBenchServing(text, path);
  if (has("\"benchmarks\"") && !has("\"request_throughput\"")) return ParseGuidellm(text, path);
  return metrics_detail::Guarded(ParseVllmImpl, text, path, "vllm bench serve");
}

}  // namespace vouch
