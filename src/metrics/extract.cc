#include "metrics/extract.h"

#include <re2/re2.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "metrics/channel.h"
#include "metrics/formats.h"
#include "metrics/formats_hyperfine.h"
#include "metrics/json_util.h"
#include "metrics/reserved.h"
#include "util/escape.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "util/number.h"
#include "util/strings.h"

namespace vouch {
namespace {

using nlohmann::json;

// Output files are read whole; above this the leg flooded its output and we refuse.
constexpr std::uint64_t kMaxOutputBytes = 512ull << 20;

struct FormatName {
  const char* name;
  MetricSpec::Kind kind;
};
constexpr FormatName kFormats[] = {
    {"channel", MetricSpec::Kind::kChannel},
    {"llama-bench", MetricSpec::Kind::kLlamaBench},
    {"vllm", MetricSpec::Kind::kVllm},
    {"gbench", MetricSpec::Kind::kGbench},
    {"nvbench", MetricSpec::Kind::kNvbench},
    {"hyperfine", MetricSpec::Kind::kHyperfine},
    {"pytest-benchmark", MetricSpec::Kind::kPytestBenchmark},
    {"regex", MetricSpec::Kind::kRegex},
    {"json", MetricSpec::Kind::kJsonPointer},
};

constexpr const char* kSpecHelp =
    "expected channel, llama-bench, vllm, gbench, nvbench, hyperfine or pytest-benchmark "
    "(optionally :FILE or @FILE, then "
    "#METRIC to require), regex[@SRC]:NAME:UNIT:BETTER:PATTERN or "
    "json[@SRC]:NAME:UNIT:BETTER:/POINTER";

// RE2 (linear time, no recursion: a line of any length is matched, and no pattern can
// backtrack exponentially). Its syntax is RE2's (docs/metrics.md): no backreferences or
// lookaround.
Result<std::unique_ptr<re2::RE2>> CompileRegex(const std::string& pattern) {
  re2::RE2::Options opt;
  opt.set_log_errors(false);
  auto re = std::make_unique<re2::RE2>(pattern, opt);
  if (!re->ok()) return MakeError("regex '{}' is invalid: {}", pattern, re->error());
  if (re->NumberOfCapturingGroups() < 1)
    return MakeError("regex '{}' has no capture group: put the number in ( )", pattern);
  return re;
}

Result<json::json_pointer> CompilePointer(const std::string& pointer) {
  try {
    return json::json_pointer(pointer);
  } catch (const json::exception& e) {
    return MakeError(
        "JSON pointer '{}' is invalid (RFC 6901: empty or /a/b/0, with ~0 for ~ and "
        "~1 for /): {}",
        pointer, e.what());
  }
}

Result<std::string> ReadSource(const MetricSpec& spec, const LegOutputs& outs) {
  std::string path = SourcePath(spec, outs);
  if (path.empty())
    return MakeError("metric spec '{}': the leg has no {} path", spec.text, spec.from);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return MakeError(
        "metric spec '{}': {} does not exist (did the leg write it? relative paths are "
        "taken from the leg's working directory)",
        spec.text, path);
  return ReadFile(path, kMaxOutputBytes);
}

}  // namespace

std::string SourcePath(const MetricSpec& spec, const LegOutputs& outs) {
  if (spec.kind == MetricSpec::Kind::kChannel) return outs.metrics_path;
  if (spec.from == "stdout") return outs.stdout_path;
  if (spec.from == "stderr") return outs.stderr_path;
  std::filesystem::path p(spec.from);
  if (p.is_relative() && !outs.working_dir.empty()) p = std::filesystem::path(outs.working_dir) / p;
  return p.string();
}

std::string_view MetricSpecKindName(MetricSpec::Kind k) {
  for (const auto& f : kFormats)
    if (f.kind == k) return f.name;
  return "?";
}

Result<MetricSpec> ParseMetricSpec(std::string_view s) {
  MetricSpec spec;
  spec.text = std::string(s);
  if (s.empty()) return MakeError("empty metric spec: {}", kSpecHelp);
  size_t head_end = s.find_first_of(":@#");
  std::string head(s.substr(0, head_end));
  std::string_view rest = head_end == s.npos ? std::string_view() : s.substr(head_end);
  const FormatName* fmt_name = nullptr;
  for (const auto& f : kFormats)
    if (head == f.name) fmt_name = &f;
  if (!fmt_name) {
    std::vector<std::string> names;
    for (const auto& f : kFormats) names.emplace_back(f.name);
    auto close = ClosestMatch(head, names);
    return MakeError("metric spec '{}': unknown source '{}'{}; {}", s, head,
                     close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close), kSpecHelp);
  }
  spec.kind = fmt_name->kind;

  if (spec.kind == MetricSpec::Kind::kRegex || spec.kind == MetricSpec::Kind::kJsonPointer) {
    if (!rest.empty() && rest.front() == '@') {
      size_t colon = rest.find(':');
      spec.from = std::string(rest.substr(1, colon == rest.npos ? rest.npos : colon - 1));
      rest = colon == rest.npos ? std::string_view() : rest.substr(colon);
      if (spec.from.empty()) return MakeError("metric spec '{}': empty source after '@'", s);
    }
    // :NAME:UNIT:BETTER:PATTERN, the pattern keeps any further ':'.
    std::vector<std::string> parts;
    if (!rest.empty() && rest.front() == ':') {
      std::string_view r = rest.substr(1);
      for (int i = 0; i < 3; ++i) {
        size_t c = r.find(':');
        if (c == r.npos) break;
        parts.emplace_back(r.substr(0, c));
        r = r.substr(c + 1);
      }
      parts.emplace_back(r);
    }
    if (parts.size() != 4 || parts[0].empty() || parts[3].empty())
      return MakeError("metric spec '{}': expected {}[@SRC]:NAME:UNIT:BETTER:{} (e.g. {})", s, head,
                       head == "regex" ? "PATTERN" : "/POINTER",
                       head == "regex" ? "regex:tok_s:tok/s:higher:([0-9.]+) tok/s"
                                       : "json@result.json:ttft_ms:ms:lower:/summary/ttft_ms");
    spec.name = parts[0];
    if (auto r = CheckLegMetricName(spec.name, fmt::format("metric spec '{}'", s)); !r)
      return r.error();
    spec.unit = parts[1];
    auto better = ParseBetter(parts[2]);
    if (!better) return MakeError("metric spec '{}': {}", s, better.error().message);
    spec.better = *better;
    spec.pattern = parts[3];
    spec.required = {spec.name};
    if (spec.kind == MetricSpec::Kind::kRegex) {
      auto re = CompileRegex(spec.pattern);
      if (!re) return MakeError("metric spec '{}': {}", s, re.error().message);
    } else {
      auto p = CompilePointer(spec.pattern);
      if (!p) return MakeError("metric spec '{}': {}", s, p.error().message);
    }
    return spec;
  }

  // Formats and the channel: [:FILE | @SRC] then #REQUIRED...
  std::vector<std::string> pieces = Split(rest, '#');
  std::string_view where = pieces.empty() ? std::string_view() : std::string_view(pieces[0]);
  for (size_t i = 1; i < pieces.size(); ++i) {
    if (pieces[i].empty()) return MakeError("metric spec '{}': empty metric name after '#'", s);
    if (IsReservedMetricName(pieces[i]))
      return MakeError(
          "metric spec '{}': '{}' is vouch's own figure (vouch.*, gpu.* are reserved): no leg's "
          "output can give it; drop '#{}' (vouch records it for every leg it can measure)",
          s, pieces[i], pieces[i]);
    spec.required.push_back(pieces[i]);
  }
  if (!where.empty()) {
    if (spec.kind == MetricSpec::Kind::kChannel)
      return MakeError(
          "metric spec '{}': the channel is always the VOUCH_METRICS file; use "
          "channel or channel#METRIC",
          s);
    spec.from = std::string(where.substr(1));
    if (spec.from.empty()) return MakeError("metric spec '{}': empty file name", s);
  }
  return spec;
}

Result<Metric> ExtractRegex(const MetricSpec& spec, std::string_view text, std::string_view path) {
  auto re = CompileRegex(spec.pattern);
  if (!re) return re.error();
  // The last match wins: tools print progress lines before the final figure.
  std::optional<std::string> found;
  int found_line = 0;
  LineReader lines(text);
  LineReader::Line l;
  while (lines.Next(&l)) {
    std::string_view line = l.text;
    const int line_no = l.number;
    re2::StringPiece group[2];
    if ((*re)->Match(re2::StringPiece(line.data(), line.size()), 0, line.size(),
                     re2::RE2::UNANCHORED, group, 2) &&
        group[1].data() != nullptr) {
      found = std::string(group[1].data(), group[1].size());
      found_line = line_no;
    }
  }
  if (!found)
    return MakeError("metric '{}' is missing: no line of {} matches regex '{}'", spec.name, path,
                     spec.pattern);
  std::string t = Trim(*found);
  auto v = ParseFiniteDouble(
      t, fmt::format("{}:{}: metric '{}': captured", path, found_line, spec.name));
  if (!v) return v.error();
  return Metric{
      spec.name, *v,          spec.unit, spec.better, fmt::format("regex {}:{}", path, found_line),
      {},        std::nullopt};
}

namespace extract_detail {

// When TEXT (not valid JSON as a whole) is several lines of which some are JSON: which lines
// are not ("and lines 1, 3 (of 5) are not JSON: 'loading model...'"), or that every line is a
// document of its own. "" when no line is JSON (then the parser's own error says more).
std::string NotOneJsonDocument(std::string_view text) {
  std::vector<int> bad;
  int lines = 0, good = 0;
  std::string first_bad;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++lines;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (json::accept(line)) {
      ++good;
    } else {
      if (bad.empty()) first_bad = std::string(line.substr(0, 60));
      bad.push_back(lines);
    }
  }
  if (good == 0) return "";
  if (bad.empty()) return fmt::format("and it holds {} JSON documents, one per line", good);
  std::vector<std::string> shown;
  for (size_t i = 0; i < bad.size() && i < 8; ++i) shown.push_back(std::to_string(bad[i]));
  if (bad.size() > 8) shown.push_back("...");
  return fmt::format("and line{} {} (of {}) {} not JSON (line {}: '{}')",
                     bad.size() == 1 ? "" : "s", fmt::join(shown, ", "), lines,
                     bad.size() == 1 ? "is" : "are", bad.front(), TerminalSafe(first_bad));
}

}  // namespace extract_detail

Result<Metric> ExtractJsonPointer(const MetricSpec& spec, std::string_view text,
                                  std::string_view path) {
  auto ptr = CompilePointer(spec.pattern);
  if (!ptr) return ptr.error();
  if (text.find_first_not_of(" \t\r\n") == text.npos)
    return MakeError("{}: empty, so metric '{}' is missing", path, spec.name);
  if (FindExcessiveNesting(text, kMaxJsonDepth) != std::string_view::npos)
    return MakeError("{}: nested deeper than {} levels, so metric '{}' cannot be read", path,
                     kMaxJsonDepth, spec.name);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    if (auto mixed = extract_detail::NotOneJsonDocument(text); !mixed.empty())
      return MakeError(
          "{}: not one JSON document, so metric '{}' cannot be read: a json: source reads the "
          "whole output as one JSON document, {}; print only the JSON there (logs to stderr), "
          "or have the command write it to a file and read that with json@FILE:..., or report "
          "the metric on $VOUCH_METRICS",
          path, spec.name, mixed);
    return MakeError("{}: not valid JSON, so metric '{}' cannot be read ({})", path, spec.name,
                     e.what());
  }
  const json* v = nullptr;
  try {
    if (doc.contains(*ptr)) v = &doc.at(*ptr);
  } catch (const json::exception&) {
    v = nullptr;  // e.g. a non-numeric array index: the value is simply not there
  }
  if (!v)
    return MakeError("metric '{}' is missing: {} has nothing at JSON pointer '{}'", spec.name, path,
                     spec.pattern);
  if (!v->is_number())
    return MakeError("{}: metric '{}': the value at '{}' is not a number (got {})", path, spec.name,
                     spec.pattern, metrics_detail::Describe(*v));
  double d = v->get<double>();
  if (!std::isfinite(d))
    return MakeError("{}: metric '{}': the value at '{}' is not finite", path, spec.name,
                     spec.pattern);
  return Metric{
      spec.name, d,           spec.unit, spec.better, fmt::format("json {}{}", path, spec.pattern),
      {},        std::nullopt};
}

Result<std::vector<Metric>> ExtractMetrics(const MetricSpec& spec, const LegOutputs& outs) {
  std::vector<Metric> metrics;
  std::string path;
  if (spec.kind == MetricSpec::Kind::kChannel) {
    path = outs.metrics_path;
    auto c = ReadMetricsChannel(path);
    if (!c) return c.error();
    metrics = std::move(c->metrics);
  } else {
    auto text = ReadSource(spec, outs);
    if (!text) return text.error();
    path = SourcePath(spec, outs);
    Result<std::vector<Metric>> r = std::vector<Metric>{};
    switch (spec.kind) {
      case MetricSpec::Kind::kLlamaBench:
        r = ParseLlamaBench(*text, path);
        break;
      case MetricSpec::Kind::kVllm:
        r = ParseVllmBenchServe(*text, path);
        break;
      case MetricSpec::Kind::kGbench:
        r = ParseGoogleBenchmark(*text, path);
        break;
      case MetricSpec::Kind::kNvbench:
        r = ParseNvbench(*text, path);
        break;
      case MetricSpec::Kind::kHyperfine:
        r = ParseHyperfine(*text, path);
        break;
      case MetricSpec::Kind::kPytestBenchmark:
        r = ParsePytestBenchmark(*text, path);
        break;
      case MetricSpec::Kind::kRegex: {
        auto m = ExtractRegex(spec, *text, path);
        if (!m) return m.error();
        r = std::vector<Metric>{std::move(*m)};
        break;
      }
      case MetricSpec::Kind::kJsonPointer: {
        auto m = ExtractJsonPointer(spec, *text, path);
        if (!m) return m.error();
        r = std::vector<Metric>{std::move(*m)};
        break;
      }
      case MetricSpec::Kind::kChannel:
        break;
    }
    if (!r) return r.error();
    metrics = std::move(*r);
    // The channel checks its names line by line; every other source here.
    for (const auto& m : metrics)
      if (auto s = CheckLegMetricName(m.name, fmt::format("{} ({})", m.source, spec.text)); !s)
        return s.error();
  }
  auto req = RequireMetrics(metrics, spec.required,
                            fmt::format("{} ({})", path.empty() ? spec.text : path, spec.text));
  if (!req) return req.error();
  return metrics;
}

Result<std::vector<Metric>> ExtractAllMetrics(const std::vector<MetricSpec>& specs,
                                              const LegOutputs& outs) {
  std::vector<Metric> all;
  std::unordered_map<std::string, const MetricSpec*> from;  // name -> its source: linear
  for (const auto& spec : specs) {
    auto r = ExtractMetrics(spec, outs);
    if (!r) return r.error();
    for (auto& m : *r) {
      if (auto [it, fresh] = from.try_emplace(m.name, &spec); !fresh) {
        if (it->second == &spec)
          return MakeError("{} ({}): metric '{}' appears twice; a leg reports each metric once",
                           m.source, spec.text, m.name);
        return MakeError("metric '{}' comes from both --metric '{}' and --metric '{}'; keep one",
                         m.name, it->second->text, spec.text);
      }
      if (all.size() >= kMaxMetricsPerLeg)
        return MakeError(
            "more than {} metrics from one leg (at --metric '{}'); a leg may report "
            "at most {}",
            kMaxMetricsPerLeg, spec.text, kMaxMetricsPerLeg);
      all.push_back(std::move(m));
    }
  }
  return all;
}

}  // namespace vouch
