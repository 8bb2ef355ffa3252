#include "throttle/throttle.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "util/json_io.h"

namespace vouch {

bool JudgedCause(ThrottleCause c) {
  return c != ThrottleCause::kLowUtilization && c != ThrottleCause::kTotalAppClocks &&
         c != ThrottleCause::kTotalBaseClocks;
}

std::string CausePhrase(ThrottleCause c) {
  switch (c) {
    case ThrottleCause::kPower:
      return "power-capped";
    case ThrottleCause::kThermal:
      return "thermally throttled";
    case ThrottleCause::kSyncBoost:
      return "held by sync boost";
    case ThrottleCause::kBoardLimit:
      return "board-limited";
    case ThrottleCause::kLowUtilization:
      return "at low utilization";
    case ThrottleCause::kReliability:
      return "reliability-limited";
    case ThrottleCause::kTotalAppClocks:
      return "below application clocks";
    case ThrottleCause::kTotalBaseClocks:
      return "below base clocks";
  }
  return "?";
}

std::optional<ThrottleFold> FoldEdges(const EdgeReading& begin, const EdgeReading& end) {
  if (!(end.unix_s > begin.unix_s)) return std::nullopt;
  ThrottleFold f;
  f.region_s = end.unix_s - begin.unix_s;
  for (auto c : kThrottleCauses) {
    auto b = begin.violation_ns.find(c), e = end.violation_ns.find(c);
    if (b == begin.violation_ns.end() || e == end.violation_ns.end()) {
      if (b != begin.violation_ns.end() || e != end.violation_ns.end())
        f.notes.push_back(fmt::format("{} was read at one edge only", CounterName(c)));
      continue;
    }
    if (e->second < b->second) {
      f.notes.push_back(
          fmt::format("{} went backwards ({} ns to {} ns: the driver reloaded?); not counted",
                      CounterName(c), b->second, e->second));
      continue;
    }
    CauseTime t;
    t.cause = c;
    t.seconds = static_cast<double>(e->second - b->second) / 1e9;
    t.share = std::clamp(t.seconds / f.region_s, 0.0, 1.0);
    f.causes.push_back(t);
  }
  for (const auto& err : end.errors) f.notes.push_back(err);
  f.power_instant_w_begin = begin.power_instant_w;
  f.power_instant_w_end = end.power_instant_w;
  f.power_average_w_begin = begin.power_average_w;
  f.power_average_w_end = end.power_average_w;
  if (f.causes.empty()) return std::nullopt;
  return f;
}

std::optional<CauseTime> WorstJudgedCause(const ThrottleFold& f) {
  std::optional<CauseTime> worst;
  for (const auto& c : f.causes)
    if (JudgedCause(c.cause) && (!worst || c.share > worst->share)) worst = c;
  return worst;
}

std::string DescribeCause(const CauseTime& c, double region_s) {
  return fmt::format("{} {:.1f} % of the region ({:.2f} s of {:.2f} s, {})", CausePhrase(c.cause),
                     100 * c.share, c.seconds, region_s, CounterName(c.cause));
}

std::optional<std::string> ThrottleRefusal(const ThrottleFold& f, double max_share) {
  auto worst = WorstJudgedCause(f);
  if (!worst || worst->share <= max_share) return std::nullopt;
  return fmt::format(
      "{}, above the policy's {:.1f} % (--max-throttled-pct), by the driver's own counter {}: the "
      "clocks were held down for that share of the window whatever their spread; cool or "
      "uncap the GPU, or measure a shorter region",
      DescribeCause(*worst, f.region_s), 100 * max_share, CounterName(worst->cause));
}

std::string RenderThrottleLine(const ThrottleFold& f) {
  std::string out = fmt::format("driver counters over {:.2f} s:", f.region_s);
  bool first = true;
  for (const auto& c : f.causes) {
    if (c.cause == ThrottleCause::kTotalAppClocks) continue;
    out += fmt::format("{} {} {:.1f} % ({:.2f} s)", first ? "" : ",", CausePhrase(c.cause),
                       100 * c.share, c.seconds);
    first = false;
  }
  if (f.power_instant_w_end || f.power_average_w_end) {
    out += "; power at the end";
    if (f.power_instant_w_end) out += fmt::format(" {:.0f} W instant", *f.power_instant_w_end);
    if (f.power_average_w_end) out += fmt::format(" {:.0f} W 1-s average", *f.power_average_w_end);
    out += " (the window's power figures are the 1-s average)";
  }
  return out;
}

nlohmann::json ToJson(const ThrottleFold& f) {
  nlohmann::json causes = nlohmann::json::object();
  for (const auto& c : f.causes)
    causes[std::string(CauseKey(c.cause))] = {
        {"seconds", c.seconds}, {"share", c.share}, {"counter", CounterName(c.cause)}};
  nlohmann::json j = {{"region_s", f.region_s}, {"causes", causes}, {"notes", f.notes}};
  auto put = [&](const char* k, const std::optional<double>& v) {
    if (v) j[k] = *v;
  };
  put("power_instant_w_begin", f.power_instant_w_begin);
  put("power_instant_w_end", f.power_instant_w_end);
  put("power_average_w_begin", f.power_average_w_begin);
  put("power_average_w_end", f.power_average_w_end);
  if (auto w = WorstJudgedCause(f))
    j["worst"] = {{"cause", CauseKey(w->cause)}, {"text", DescribeCause(*w, f.region_s)}};
  return j;
}

const JsonSchema& ThrottleFoldSchema() {
  static const JsonSchema schema = JsonSchema::Object({
      Must("region_s", JsonSchema::Number(0, 1e9)),
      Must("causes",
           JsonSchema::Map(JsonSchema::Object({Must("seconds", JsonSchema::Number(0, 1e12)),
                                               Must("share", JsonSchema::Number(0, 1))}))),
      May("notes", JsonSchema::Array(JsonSchema::String())),
      May("power_instant_w_begin", JsonSchema::Number(0, 1e7)),
      May("power_instant_w_end", JsonSchema::Number(0, 1e7)),
      May("power_average_w_begin", JsonSchema::Number(0, 1e7)),
      May("power_average_w_end", JsonSchema::Number(0, 1e7)),
  });
  return schema;
}

Result<ThrottleFold> ThrottleFoldFromJson(const nlohmann::json& j, const std::string& where) {
  if (auto ok = ThrottleFoldSchema().Check(j, where); !ok) return ok.error();
  return ThrottleFoldFromCheckedJson(j);
}

ThrottleFold ThrottleFoldFromCheckedJson(const nlohmann::json& j) {
  ThrottleFold f;
  f.region_s = j.at("region_s");
  for (auto c : kThrottleCauses) {
    auto it = j.at("causes").find(std::string(CauseKey(c)));
    if (it == j.at("causes").end()) continue;
    f.causes.push_back({c, (*it)["seconds"].get<double>(), (*it)["share"].get<double>()});
  }
  if (j.contains("notes")) f.notes = j.at("notes").get<std::vector<std::string>>();
  auto get = [&](const char* k, std::optional<double>& v) {
    if (j.contains(k)) v = j[k].get<double>();
  };
  get("power_instant_w_begin", f.power_instant_w_begin);
  get("power_instant_w_end", f.power_instant_w_end);
  get("power_average_w_begin", f.power_average_w_begin);
  get("power_average_w_end", f.power_average_w_end);
  return f;
}

}  // namespace vouch
