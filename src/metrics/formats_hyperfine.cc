#include "metrics/formats_hyperfine.h"

#include <fmt/format.h>

#include <map>

#include "metrics/json_doc.h"

namespace vouch {
namespace {

using metrics_detail::Describe;
using metrics_detail::FiniteArray;
using metrics_detail::OptionalFinite;
using metrics_detail::ReadToolJson;
using nlohmann::json;

// One statistic of a result: added when present, an error when present and not a number.
struct Stat {
  const char* key;
  const char* unit;
  Better better;
  bool with_samples;
};

Status AddStats(const json& obj, const std::vector<Stat>& stats, const std::string& name,
                const std::vector<double>& samples, std::string_view path, const std::string& where,
                const std::string& source, std::vector<Metric>* out) {
  for (const auto& s : stats) {
    auto v = OptionalFinite(obj, s.key, path, where);
    if (!v) return v.error();
    if (!*v) continue;
    out->push_back(Metric{name + "." + s.key, **v, s.unit, s.better, source,
                          s.with_samples ? samples : std::vector<double>{}, std::nullopt});
  }
  return OkStatus();
}

// NAME, or NAME[k] for its k-th appearance.
std::string Unique(const std::string& name, std::map<std::string, int>& seen) {
  int k = ++seen[name];
  return k == 1 ? name : fmt::format("{}[{}]", name, k);
}

// hyperfine's "parameters" of a result (-L/--parameter-list, -P/--parameter-scan), as
// "[k=v,k2=v2]" in key order, or "" when it ran none. A sweep is keyed by what it ran, never
// by its position: `-L ms 10,50 -n decode` gives decode[ms=10] and decode[ms=50] in either
// order, whether or not the command text holds the value.
Result<std::string> ParameterKey(const json& r, std::string_view path, const std::string& where) {
  auto it = r.find("parameters");
  if (it == r.end() || it->is_null()) return std::string();
  if (!it->is_object())
    return MakeError("{}: {}: \"parameters\" is not an object (got {})", path, where,
                     Describe(*it));
  std::vector<std::string> kv;
  for (const auto& [k, v] : it->items()) {  // nlohmann's object keeps its keys sorted
    if (v.is_string())
      kv.push_back(fmt::format("{}={}", k, v.get<std::string>()));
    else if (v.is_number())
      kv.push_back(fmt::format("{}={}", k, v.dump()));
    else
      return MakeError("{}: {}: parameter '{}' is not a string or a number (got {})", path, where,
                       k, Describe(v));
  }
  return kv.empty() ? std::string() : fmt::format("[{}]", fmt::join(kv, ","));
}

// The array KEY of DOC, or an error saying the file is not TOOL's output.
Result<const json*> Entries(const json& doc, const char* key, std::string_view path,
                            std::string_view form) {
  if (!doc.is_object() || !doc.contains(key) || !doc[key].is_array())
    return MakeError("{}: no \"{}\" array: not {} output", path, key, form);
  if (doc[key].empty()) return MakeError("{}: \"{}\" is empty: nothing was measured", path, key);
  return &doc[key];
}

}  // namespace

Result<std::vector<Metric>> ParseHyperfine(std::string_view text, std::string_view path) {
  auto doc = ReadToolJson(text, path, "hyperfine");
  if (!doc) return doc.error();
  auto results = Entries(*doc, "results", path, "hyperfine --export-json");
  if (!results) return results.error();
  std::vector<Metric> out;
  std::map<std::string, int> seen;
  const std::string source = fmt::format("hyperfine {}", path);
  for (size_t i = 0; i < (*results)->size(); ++i) {
    const json& r = (**results)[i];
    std::string where = fmt::format("result {}", i + 1);
    if (!r.is_object()) return MakeError("{}: {} is not a JSON object", path, where);
    auto cmd = r.find("command");
    if (cmd == r.end() || !cmd->is_string() || cmd->get<std::string>().empty())
      return MakeError("{}: {} has no \"command\" string", path, where);
    std::string command = cmd->get<std::string>();
    where = fmt::format("result {} ('{}')", i + 1, command);
    auto times = FiniteArray(r, "times", path, where);
    if (!times) return times.error();
    if (auto codes = r.find("exit_codes"); codes != r.end() && !codes->is_null()) {
      if (!codes->is_array())
        return MakeError("{}: {}: \"exit_codes\" is not an array", path, where);
      std::vector<std::string> shown;
      int failed = 0;
      for (const auto& c : *codes) {
        bool ok = c.is_number_integer() && c.get<long long>() == 0;
        if (!c.is_null() && !c.is_number_integer())
          return MakeError("{}: {}: an exit code is not an integer (got {})", path, where,
                           Describe(c));
        failed += ok ? 0 : 1;
        shown.push_back(c.is_null() ? "signal" : c.dump());
      }
      if (failed > 0)
        return MakeError(
            "{}: hyperfine command '{}' failed in {} of {} runs (exit codes {}): the times of a "
            "failing command are not a measurement (hyperfine -i hides this); fix the command",
            path, command, failed, codes->size(), fmt::join(shown, ","));
    }
    static const std::vector<Stat> kStats = {
        {"mean", "s", Better::kLower, true},    {"median", "s", Better::kLower, true},
        {"min", "s", Better::kLower, false},    {"max", "s", Better::kLower, false},
        {"stddev", "s", Better::kLower, false}, {"user", "s", Better::kLower, false},
        {"system", "s", Better::kLower, false}};
    auto key = ParameterKey(r, path, where);
    if (!key) return key.error();
    size_t before = out.size();
    if (auto s =
            AddStats(r, kStats, Unique(command + *key, seen), *times, path, where, source, &out);
        !s)
      return s.error();
    if (out.size() == before)
      return MakeError("{}: {} has no \"mean\" or any other time", path, where);
  }
  return out;
}

Result<std::vector<Metric>> ParsePytestBenchmark(std::string_view text, std::string_view path) {
  auto doc = ReadToolJson(text, path, "pytest-benchmark");
  if (!doc) return doc.error();
  auto benches = Entries(*doc, "benchmarks", path, "pytest-benchmark --benchmark-json");
  if (!benches) return benches.error();
  std::vector<Metric> out;
  std::map<std::string, int> seen;
  const std::string source = fmt::format("pytest-benchmark {}", path);
  for (size_t i = 0; i < (*benches)->size(); ++i) {
    const json& b = (**benches)[i];
    std::string where = fmt::format("benchmark {}", i + 1);
    if (!b.is_object()) return MakeError("{}: {} is not a JSON object", path, where);
    std::string name = metrics_detail::StringOr(b, "fullname", "");
    if (name.empty()) name = metrics_detail::StringOr(b, "name", "");
    if (name.empty()) return MakeError("{}: {} has no \"fullname\" or \"name\"", path, where);
    where = fmt::format("benchmark {} ('{}')", i + 1, name);
    auto stats = b.find("stats");
    if (stats == b.end() || !stats->is_object())
      return MakeError("{}: {} has no \"stats\" object (did the benchmark run?)", path, where);
    auto data = FiniteArray(*stats, "data", path, where + ": stats");
    if (!data) return data.error();
    static const std::vector<Stat> kStats = {
        {"mean", "s", Better::kLower, true},      {"median", "s", Better::kLower, true},
        {"min", "s", Better::kLower, false},      {"max", "s", Better::kLower, false},
        {"stddev", "s", Better::kLower, false},   {"iqr", "s", Better::kLower, false},
        {"ops", "ops/s", Better::kHigher, false}, {"rounds", "count", Better::kNone, false}};
    size_t before = out.size();
    if (auto s = AddStats(*stats, kStats, Unique(name, seen), *data, path, where + ": stats",
                          source, &out);
        !s)
      return s.error();
    if (out.size() == before) return MakeError("{}: {}: \"stats\" has no \"mean\"", path, where);
  }
  return out;
}

}  // namespace vouch
