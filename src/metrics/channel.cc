#include "metrics/channel.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "metrics/json_util.h"
#include "metrics/reserved.h"
#include "util/bounded_file.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "util/number.h"
#include "util/strings.h"

namespace vouch {
namespace {

using nlohmann::json;

// A line longer than this is not something a metrics writer produces; refuse it rather
// than parse a flood.
constexpr size_t kMaxLineBytes = 1 << 20;

Result<std::optional<double>> OptionalTime(const json& j, std::string_view where) {
  auto it = j.find("unix_s");
  if (it == j.end()) return std::optional<double>{};
  if (!it->is_number() || !std::isfinite(it->get<double>()))
    return MakeError("{}: \"unix_s\" must be a finite number of seconds since the epoch", where);
  // 1e300 is finite; its nanoseconds are not: refused here, never cast out of range later.
  if (auto ns = SecondsToNs(it->get<double>(), fmt::format("{}: \"unix_s\"", where)); !ns)
    return ns.error();
  return std::optional<double>{it->get<double>()};
}

Result<std::string> OptionalString(const json& j, const char* key, std::string_view where) {
  auto it = j.find(key);
  if (it == j.end()) return std::string();
  if (!it->is_string()) return MakeError("{}: \"{}\" must be a string", where, key);
  return it->get<std::string>();
}

}  // namespace

Result<ChannelContents> ParseMetricsChannel(std::string_view text, std::string_view path) {
  ChannelContents out;
  std::unordered_map<std::string, int> first_line_of;  // name -> line: linear in the lines
  LineReader lines(text);
  LineReader::Line l;
  while (lines.Next(&l)) {
    std::string_view line = l.text;
    const bool terminated = l.terminated;
    const int line_no = l.number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    std::string where = fmt::format("{}:{}", path, line_no);
    if (line.size() > kMaxLineBytes)
      return MakeError("{}: line is {} bytes, over the {} byte limit for a metrics line", where,
                       line.size(), kMaxLineBytes);
    if (FindExcessiveNesting(line, kMaxJsonDepth) != std::string_view::npos)
      return MakeError("{}: nested deeper than {} levels; not a metrics line", where,
                       kMaxJsonDepth);
    json j;
    try {
      j = json::parse(line);
    } catch (const json::exception& e) {
      if (!terminated)
        return MakeError(
            "{}: the last line is truncated (no newline, not valid JSON): the leg likely "
            "stopped mid-write; its metrics are not used",
            where);
      bool non_finite = line.find("NaN") != line.npos || line.find("Infinity") != line.npos;
      return MakeError("{}: not valid JSON{} ({})", where,
                       non_finite ? ": NaN and Infinity are not numbers a metric may have" : "",
                       e.what());
    }
    if (!j.is_object()) return MakeError("{}: expected a JSON object per line", where);

    if (auto ev = j.find("event"); ev != j.end()) {
      if (!ev->is_string()) return MakeError("{}: \"event\" must be \"begin\" or \"end\"", where);
      auto t = OptionalTime(j, where);
      if (!t) return t.error();
      ChannelEvent e;
      e.unix_s = *t;
      e.line = line_no;
      const auto& kind = ev->get_ref<const std::string&>();
      bool open = !out.events.empty() && out.events.back().kind == ChannelEvent::Kind::kBegin;
      if (kind == "begin") {
        if (open)
          return MakeError(
              "{}: a second \"begin\" before the \"end\" of the region begun on line {}", where,
              out.events.back().line);
        e.kind = ChannelEvent::Kind::kBegin;
      } else if (kind == "end") {
        if (!open) return MakeError("{}: \"end\" without a \"begin\" before it", where);
        e.kind = ChannelEvent::Kind::kEnd;
        if (e.unix_s && out.events.back().unix_s && *e.unix_s < *out.events.back().unix_s)
          return MakeError("{}: \"end\" is earlier than its \"begin\" on line {}", where,
                           out.events.back().line);
      } else {
        return MakeError("{}: unknown event \"{}\": use \"begin\" or \"end\"", where, kind);
      }
      out.events.push_back(e);
      continue;
    }

    auto name_it = j.find("name");
    if (name_it == j.end() || !name_it->is_string() || name_it->get<std::string>().empty())
      return MakeError("{}: a metric line needs a non-empty string \"name\" (or an \"event\")",
                       where);
    Metric m;
    m.name = name_it->get<std::string>();
    if (auto s = CheckLegMetricName(m.name, where); !s) return s.error();
    m.source = fmt::format("channel {}", where);
    auto unit = OptionalString(j, "unit", where);
    if (!unit) return unit.error();
    m.unit = *unit;
    auto better_s = OptionalString(j, "better", where);
    if (!better_s) return better_s.error();
    auto better = ParseBetter(*better_s);
    if (!better) return MakeError("{}: metric '{}': {}", where, m.name, better.error().message);
    m.better = *better;
    auto t = OptionalTime(j, where);
    if (!t) return t.error();

    auto val = j.find("value");
    auto txt = j.find("text");
    if (val != j.end() && txt != j.end())
      return MakeError("{}: metric '{}' has both \"value\" and \"text\"; give one", where, m.name);
    if (txt != j.end()) {
      if (!txt->is_string())
        return MakeError("{}: metric '{}': \"text\" must be a string", where, m.name);
      m.text = txt->get<std::string>();
    } else if (val != j.end()) {
      if (!val->is_number())
        return MakeError(
            "{}: metric '{}': \"value\" must be a finite number (got {}; the helper writes null "
            "for NaN or inf)",
            where, m.name, metrics_detail::Describe(*val));
      m.value = val->get<double>();
      if (val->is_number_integer() &&
          (val->is_number_unsigned() ? val->get<std::uint64_t>() <= INT64_MAX : true))
        m.integer = val->get<std::int64_t>();
      if (!std::isfinite(m.value))
        return MakeError("{}: metric '{}': value is not finite", where, m.name);
    } else {
      return MakeError("{}: metric '{}' has no \"value\" (or \"text\")", where, m.name);
    }
    if (auto [it, fresh] = first_line_of.try_emplace(m.name, line_no); !fresh)
      return MakeError(
          "{}: metric '{}' was already reported on line {}; report each metric once per leg", where,
          m.name, it->second);
    if (out.metrics.size() >= kMaxMetricsPerLeg)
      return MakeError("{}: more than {} metrics from one leg; a leg may report at most {}", where,
                       kMaxMetricsPerLeg, kMaxMetricsPerLeg);
    out.metrics.push_back(std::move(m));
  }
  out.region_open = !out.events.empty() && out.events.back().kind == ChannelEvent::Kind::kBegin;
  return out;
}

Status CheckMarkersInLeg(const ChannelContents& contents, std::string_view path,
                         std::string_view leg, std::int64_t leg_start_unix_ns,
                         std::int64_t leg_end_unix_ns) {
  // The writer's clock is the one vouch stamps the leg with; its seconds as a double are
  // good to well under a microsecond, so a millisecond of slack only absorbs rounding.
  constexpr double kSlackS = 1e-3;
  const double lo = static_cast<double>(leg_start_unix_ns) / 1e9 - kSlackS;
  const double hi = static_cast<double>(leg_end_unix_ns) / 1e9 + kSlackS;
  for (const auto& e : contents.events)
    if (e.unix_s && !(*e.unix_s >= lo && *e.unix_s <= hi))
      return MakeError(
          "{}: {}:{}: the \"{}\" marker at unix_s {:.6f} is outside the leg's own time span "
          "({:.6f} to {:.6f}): a region must lie inside the leg that marks it",
          leg, path, e.line, e.kind == ChannelEvent::Kind::kBegin ? "begin" : "end", *e.unix_s,
          static_cast<double>(leg_start_unix_ns) / 1e9, static_cast<double>(leg_end_unix_ns) / 1e9);
  return OkStatus();
}

Result<ChannelContents> ReadMetricsChannel(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return ChannelContents{};
  // A metrics channel is small; 256 MiB means the leg is flooding it.
  auto text = ReadBoundedFile(path, kMaxMetricsFileBytes);
  if (!text) return text.error();
  return ParseMetricsChannel(*text, path);
}

}  // namespace vouch
