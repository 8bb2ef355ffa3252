// Reading a record back (show, gate RECORD, baselines from records): one schema for every
// field a reader uses, and the figures recomputed from the legs, never trusted from the
// summary block.
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "clock/window.h"
#include "record/journal.h"
#include "record/leg_json.h"
#include "record/record.h"
#include "record/record_clock.h"
#include "util/bounded_file.h"
#include "util/escape.h"
#include "util/json_io.h"
#include "util/median.h"
#include "util/strings.h"
#include "util/value_format.h"

namespace vouch {
namespace {}  // namespace

const JsonSchema& LegRecordSchema() {
  const JsonSchema str = JsonSchema::String();
  const JsonSchema strings = JsonSchema::Array(str);
  static const JsonSchema s = JsonSchema::Object({
      Must("index", JsonSchema::Integer(0, 1000000000)),
      Must("arm", str),
      Must("role", str),
      May("discard_cause", str.OrNull()),
      May("dir", str),
      Must("valid", JsonSchema::Bool()),
      Must("reasons", strings),
      Must("result", JsonSchema::Object({
                         Must("wall_ns", JsonSchema::Integer(0, INT64_MAX)),
                         May("argv", strings),
                         May("exit_code", JsonSchema::Integer(INT32_MIN, INT32_MAX).OrNull()),
                         May("timed_out", JsonSchema::Bool()),
                         May("interrupted", JsonSchema::Bool()),
                         May("outcome", str),
                         May("start_unix_ns", JsonSchema::Integer(INT64_MIN, INT64_MAX)),
                         May("end_unix_ns", JsonSchema::Integer(INT64_MIN, INT64_MAX)),
                         May("peak_rss_bytes", JsonSchema::Unsigned()),
                         May("peak_device_mem_bytes", JsonSchema::Unsigned().OrNull()),
                         May("notes", strings),
                     })),
      Must("metrics", JsonSchema::Array(JsonSchema::Object({
                          Must("name", str),
                          May("value", JsonSchema::Number()),
                          May("text", str),
                          May("unit", str),
                          May("better", str),
                          May("source", str),
                          May("samples", JsonSchema::Array(JsonSchema::Number())),
                      }))),
      May("metrics_error", str),
      Must("window", WindowSummarySchema()),
      May("evidence_errors", strings),
  });
  return s;
}

const JsonSchema& RecordSchema() {
  const JsonSchema str = JsonSchema::String();
  const JsonSchema strings = JsonSchema::Array(str);
  const JsonSchema count = JsonSchema::Integer(0, 1000000000);
  static const JsonSchema s = JsonSchema::Object({
      Must("schema", str),
      Must("schema_version", JsonSchema::Integer(0, 1000000)),
      Must("kind", str),
      Must("status", str),
      May("writer",
          JsonSchema::Object({May("pid", JsonSchema::Integer(0, 1 << 30)), May("host", str),
                              May("boot_id", str), May("start_ticks", JsonSchema::Unsigned())})),
      May("missing", strings),
      Must("started", str),
      Must("recipe",
           JsonSchema::Object({Must("reproduce", str), May("reproduce_note", str.OrNull())})),
      Must("environment",
           JsonSchema::Object({May("simulated", JsonSchema::Bool()), May("device", str)})),
      Must("measured_legs", count),
      Must("valid_legs", count),
      Must("legs", JsonSchema::Array(LegRecordSchema())),
      Must("summary", JsonSchema::Map(JsonSchema::Array(JsonSchema::Object({
                          Must("name", str),
                          Must("unit", str),
                          May("better", str),
                          Must("n", count),
                          Must("median", JsonSchema::Number()),
                          Must("min", JsonSchema::Number()),
                          Must("max", JsonSchema::Number()),
                          May("mean", JsonSchema::Number()),
                          Must("spread_pct", JsonSchema::Number().OrNull()),
                          May("modes", str),
                      })))),
      Must("expectation_violations", JsonSchema::Array(JsonSchema::Object({May("message", str)}))),
      Must("caveats", strings),
  });
  return s;
}

Status CheckRecordHeader(const nlohmann::json& j, std::string_view where) {
  auto schema = j.is_object() ? j.find("schema") : j.end();
  if (!j.is_object() || schema == j.end() || *schema != "vouch.record")
    return MakeError("{}: not a vouch record (schema is not 'vouch.record')", where);
  auto v = j.find("schema_version");
  if (v == j.end() || !v->is_number_integer() || *v != kRecordSchemaVersion)
    return MakeError("{}: record schema version {} is not one this vouch reads ({}); upgrade vouch",
                     where, v == j.end() ? std::string("(none)") : DumpJson(*v),
                     kRecordSchemaVersion);
  return OkStatus();
}

Status CheckRecordShape(const nlohmann::json& j, std::string_view where) {
  if (auto s = RecordSchema().Check(j, where); !s) return s;
  const auto& legs = j["legs"];
  std::map<std::int64_t, size_t> seen;  // a leg index is one leg
  for (size_t i = 0; i < legs.size(); ++i) {
    auto [at, fresh] = seen.emplace(legs[i]["index"].get<std::int64_t>(), i);
    if (!fresh)
      return MakeError("{}: 'legs[{}]' repeats leg index {} of 'legs[{}]': a leg is counted once",
                       where, i, at->first, at->second);
    for (size_t k = 0; k < legs[i]["metrics"].size(); ++k) {
      const auto& m = legs[i]["metrics"][k];
      if (m.contains("value") == m.contains("text"))
        return MakeError("{}: 'legs[{}].metrics[{}]' must have one of 'value' and 'text'", where, i,
                         k);
    }
  }
  return OkStatus();
}

Result<LegRecord> LegRecordFromJson(const nlohmann::json& j, const std::string& where) {
  if (auto ok = LegRecordSchema().Check(j, where); !ok) return ok.error();
  LegRecord l;
  l.index = j["index"].get<int>();
  l.arm = j["arm"].get<std::string>();
  l.role = j["role"].get<std::string>();
  if (j.contains("discard_cause") && j["discard_cause"].is_string())
    l.discard_cause = j["discard_cause"].get<std::string>();
  l.dir = j.value("dir", "");
  l.valid = j["valid"].get<bool>();
  l.reasons = j["reasons"].get<std::vector<std::string>>();
  const auto& r = j["result"];
  l.result.wall_ns = r["wall_ns"].get<std::int64_t>();
  if (r.contains("exit_code") && r["exit_code"].is_number_integer())
    l.result.exit_code = r["exit_code"].get<int>();
  l.result.timed_out = r.value("timed_out", false);
  l.result.interrupted = r.value("interrupted", false);
  for (const auto& m : j["metrics"]) {
    Metric x;
    x.name = m["name"].get<std::string>();
    if (m.contains("text"))
      x.text = m["text"].get<std::string>();
    else
      x.value = m["value"].get<double>();
    x.unit = m.value("unit", "");
    x.source = m.value("source", "");
    if (auto b = ParseBetter(m.value("better", "none")); b) x.better = *b;
    if (m.contains("samples")) x.samples = m["samples"].get<std::vector<double>>();
    l.metrics.push_back(std::move(x));
  }
  l.metrics_error = j.value("metrics_error", "");
  auto w = WindowSummaryFromJson(j["window"], where + ".window");
  if (!w) return w.error();
  l.window = std::move(*w);
  if (j.contains("evidence_errors"))
    l.evidence_errors = j["evidence_errors"].get<std::vector<std::string>>();
  if (j.contains("gpu_trace")) l.gpu_trace = j["gpu_trace"];
  return l;
}

Result<nlohmann::json> ReadRecordJson(const std::string& path_or_dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(path_or_dir, ec))
    return ReadRecordJsonFile((std::filesystem::path(path_or_dir) / "record.json").string());
  return ReadRecordJsonFile(path_or_dir);
}

Result<nlohmann::json> ReadRecordJsonFile(const std::string& path) {
  auto parsed = ReadJsonFile(path, kMaxRecordFileBytes);
  if (!parsed) return parsed.error();
  nlohmann::json& j = *parsed;
  if (auto h = CheckRecordHeader(j, path); !h) return h.error();
  // A run killed before its end: its finished legs are in the journal beside the record.
  const std::string dir = std::filesystem::path(path).parent_path().string();
  if (auto s = AssembleFromJournal(dir, &j); !s) return s.error();
  if (auto shape = CheckRecordShape(j, path); !shape)
    return MakeError("{} (hand-edited or written by another tool?); no figure is read from it",
                     shape.error().message);
  // A finished run: its journal, when it is there, holds the same legs as the record.
  if (auto s = CheckJournalAgainstRecord(dir, j, path); !s) return s.error();
  return std::move(j);
}

Result<std::map<std::string, std::pair<double, std::string>>> RecordMedians(
    const nlohmann::json& rec, const std::string& arm, std::string_view where) {
  // The legs are the evidence; the summary block is a convenience a hand (or a tool) can
  // edit. Recompute from the valid measured legs and refuse a summary that disagrees.
  std::vector<std::vector<Metric>> per_leg;
  int valid_measured = 0;
  const auto& legs = rec["legs"];
  for (size_t i = 0; i < legs.size(); ++i) {
    const auto& l = legs[i];
    if (l["role"] != "measured") continue;
    if (l["valid"].get<bool>()) {
      ++valid_measured;
      if (!l["reasons"].empty() || l["window"]["verdict"]["status"] != "valid")
        return MakeError(
            "{}: 'legs[{}]' is marked valid but its window is {} with {} reason(s); the record "
            "was edited",
            where, i, l["window"]["verdict"]["status"].get<std::string>(), l["reasons"].size());
    }
    if (l["arm"] != arm || !l["valid"].get<bool>()) continue;
    std::vector<Metric> ms;
    for (const auto& mj : l["metrics"]) {
      Metric m;
      m.name = mj["name"].get<std::string>();
      m.unit = mj.value("unit", "");
      m.source = mj.value("source", "");  // a reserved name counts only from vouch's own
      auto b = ParseBetter(mj.value("better", ""));
      m.better = b ? *b : Better::kNone;
      if (mj.contains("text"))
        m.text = mj["text"].get<std::string>();
      else
        m.value = mj["value"].get<double>();
      ms.push_back(std::move(m));
    }
    per_leg.push_back(std::move(ms));
  }
  if (rec["valid_legs"].get<int>() != valid_measured)
    return MakeError(
        "{}: 'valid_legs' says {} but {} measured legs are valid; the record was edited", where,
        rec["valid_legs"].get<int>(), valid_measured);
  std::map<std::string, std::pair<double, std::string>> out;
  std::map<std::string, const MetricSummary*> computed;
  auto sums = SummarizeLegs(per_leg);
  for (const auto& s : sums) {
    out[s.name] = {s.median, s.unit};
    computed[s.name] = &s;
  }
  auto same = [](double a, double b) {
    return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
  };
  std::set<std::string> listed;
  auto it = rec["summary"].find(arm);
  if (it != rec["summary"].end())
    for (size_t k = 0; k < it->size(); ++k) {
      const auto& e = (*it)[k];
      const std::string name = e["name"].get<std::string>();
      const std::string at = fmt::format("summary.{}[{}]", arm, k);
      if (!listed.insert(name).second)
        return MakeError("{}: '{}' lists '{}' a second time; the record was edited", where, at,
                         name);
      auto c = computed.find(name);
      if (c == computed.end())
        return MakeError("{}: '{}' summarises '{}' but no valid measured leg of '{}' has it", where,
                         at, name, arm);
      const MetricSummary& m = *c->second;
      if (e["n"].get<std::size_t>() != m.n || !same(e["median"].get<double>(), m.median) ||
          !same(e["min"].get<double>(), m.min) || !same(e["max"].get<double>(), m.max))
        return MakeError(
            "{}: '{}' ('{}': median {}, min {}, max {}, n {}) does not match its legs (median {}, "
            "min {}, max {}, n {}); the record was edited",
            where, at, name, e["median"].get<double>(), e["min"].get<double>(),
            e["max"].get<double>(), e["n"].get<std::size_t>(), m.median, m.min, m.max, m.n);
    }
  for (const auto& s : sums)
    if (!listed.count(s.name))
      return MakeError(
          "{}: 'summary.{}' lacks '{}', which its valid legs have; the record was "
          "edited",
          where, arm, s.name);
  return out;
}

namespace {

using record_clock::LegClock;

std::optional<LegClock> LegClockOf(const nlohmann::json& window) {
  auto w = WindowSummaryFromJson(window, "record");
  if (!w || w->gpus.empty()) return std::nullopt;
  LegClock c;
  c.median = PacingClockMedian(*w);
  c.mean = PacingClockMean(*w);
  c.driver = w->gpus.front().state.driver_version;
  c.boot_id = w->boot_id;
  for (const auto& g : w->gpus) c.uuids.push_back(g.state.uuid);
  return c;
}

}  // namespace

ClockState RecordClockState(const nlohmann::json& rec, const std::string& arm) {
  return record_clock::ClockStateOver(rec, arm, LegClockOf);
}

ClockState CheckedRecordClockState(const nlohmann::json& rec, const std::string& arm) {
  return record_clock::CheckedClockState(rec, arm);
}

std::string RenderRecordHead(const nlohmann::json& rec) {
  std::string out;
  const auto& env = rec["environment"];
  if (env.value("simulated", false))
    out += fmt::format("SIMULATED DEVICE: {}\n", env.value("device", ""));
  // Every planned leg ran but none is valid: the run is not "complete" in any sense a reader
  // takes from the word.
  std::string status = rec.value("status", "?");
  if (status == "complete" && rec.value("valid_legs", 0) == 0)
    status = "ended with NO VALID LEG (every planned leg ran)";
  out += fmt::format("{} {} started {}: {} of {} measured legs valid\n", rec.value("kind", "run"),
                     status, rec.value("started", ""), rec.value("valid_legs", 0),
                     rec.value("measured_legs", 0));
  for (const auto& m : rec.value("missing", std::vector<std::string>{}))
    out += fmt::format("  missing: {}\n", TerminalSafe(m));
  if (auto sel = env.find("gpu_selection"); sel != env.end() && sel->is_object()) {
    std::vector<std::string> ids;
    if (auto g = sel->find("gpus"); g != sel->end() && g->is_array())
      for (const auto& i : *g) ids.push_back(DumpJson(i));
    auto src = sel->find("source");
    out += fmt::format("GPUs sampled: {} ({})\n",
                       ids.empty() ? "?" : fmt::format("{}", fmt::join(ids, ",")),
                       src != sel->end() && src->is_string() ? src->get<std::string>() : "?");
  }
  out += "legs:\n";
  return out;
}

std::string RenderLegLine(const nlohmann::json& l, size_t arm_w) {
  std::string out;
  {
    std::string clock = "";
    const auto& w = l["window"];
    const nlohmann::json& gpus = w.contains("gpus") ? w["gpus"] : nlohmann::json::array();
    for (const auto& g : gpus) {
      std::string who = gpus.size() > 1 ? fmt::format(" GPU {}", g["fold"].value("gpu", 0)) : "";
      static const nlohmann::json kNull;
      auto smi = g["fold"].find("sm_mhz");
      const auto& sm = smi == g["fold"].end() ? kNull : *smi;
      if (g["fold"].value("busy_readings", 0) > 0 && !sm.is_null())
        clock += fmt::format("{} SM median {:.0f} mean {:.1f} MHz", who, sm.value("median", 0.0),
                             sm.value("mean", 0.0));
      else if (gpus.size() > 1)
        clock += fmt::format(
            "{} {}", who,
            g.contains("verdict") ? g["verdict"].value("status", "idle") : std::string("idle"));
      if (gpus.size() > 1 && &g != &gpus.back()) clock += ";";
    }
    std::string state = l.value("role", "") == "warmup"
                            ? "discarded (warmup)"
                            : (l.value("valid", false) ? "valid" : "INVALID");
    out += fmt::format(
        "  {:>3} {:<{}} {:<8} {:<18} {:.2f} s{}\n", l.value("index", 0) + 1,
        TerminalSafe(l.value("arm", "")), arm_w, TerminalSafe(l.value("role", "")), state,
        static_cast<double>(l["result"].value("wall_ns", std::int64_t{0})) / 1e9, clock);
    if (l.value("role", "") == "measured")
      for (const auto& r : l.value("reasons", std::vector<std::string>{}))
        out += fmt::format("        - {}\n", TerminalSafe(r));
  }
  return out;
}

std::string RenderRecordText(const nlohmann::json& rec) {
  std::string out = RenderRecordHead(rec);
  // Columns as wide as their longest entry: long arm names do not push the rows apart.
  std::size_t arm_w = 6;
  // Names as a terminal shows them (util/escape.h): a name cannot draw or start a line.
  for (const auto& l : rec["legs"])
    arm_w = std::max(arm_w, TerminalSafe(l.value("arm", "")).size());
  for (const auto& l : rec["legs"]) out += RenderLegLine(l, arm_w);
  return out + RenderRecordSummary(rec);
}

std::string RenderRecordSummary(const nlohmann::json& rec) {
  std::string out;
  for (const auto& [arm, sums] : rec["summary"].items()) {
    out += fmt::format("summary over valid legs ({}):\n", TerminalSafe(arm));
    if (sums.empty()) out += "  no valid leg: no number can be quoted\n";
    // Byte counts in KiB/MiB/GiB; the name and unit columns as wide as their longest entry.
    auto value = [](const nlohmann::json& m, const char* key) {
      const double v = m.value(key, 0.0);
      return FormatValue(v, m.value("unit", ""));
    };
    auto unit = [](const nlohmann::json& m) {
      return m.value("unit", "") == "bytes" ? std::string() : TerminalSafe(m.value("unit", ""));
    };
    std::size_t name_w = 34, unit_w = 6;
    for (const auto& s : sums) {
      name_w = std::max(name_w, TerminalSafe(s.value("name", "")).size());
      unit_w = std::max(unit_w, unit(s).size());
    }
    for (const auto& s : sums) {
      if (StartsWith(s.value("name", ""), "vouch.exit_status")) continue;
      out += fmt::format("  {:<{}} median {:>12} {:<{}} min {} max {} spread {} (n={})\n",
                         TerminalSafe(s.value("name", "")), name_w, value(s, "median"), unit(s),
                         unit_w, value(s, "min"), value(s, "max"),
                         s["spread_pct"].is_null()
                             ? std::string("n/a")
                             : fmt::format("{:.2f} %", s["spread_pct"].get<double>()),
                         s.value("n", 0));
      if (auto m = s.find("modes"); m != s.end() && m->is_string())
        out += fmt::format(
            "  {:<{}} WARNING: the legs show {}: the median is a number no "
            "process ran at\n",
            "", name_w, TerminalSafe(m->get<std::string>()));
    }
  }
  // An A/B record: its verdict, as vouch ab printed it in short.
  if (rec.contains("extra") && rec["extra"].is_object() && rec["extra"].contains("verdict") &&
      rec["extra"]["verdict"].is_object()) {
    try {
      const auto& v = rec["extra"]["verdict"];
      out += fmt::format(
          "A/B verdict: {} (headline {}, {} is better)\n", TerminalSafe(v.value("verdict", "?")),
          TerminalSafe(v.value("headline", "?")), TerminalSafe(v.value("better", "?")));
      const nlohmann::json d = v.value("decision", nlohmann::json::object());
      const nlohmann::json ratio = d.value("ratio", nlohmann::json::object());
      const nlohmann::json plain = d.value("b_over_a", nlohmann::json::object());
      if (plain.is_object() && plain.contains("value"))
        out += fmt::format(
            "  ratio {} ({:.0f} % CI {:.4f} .. {:.4f})\n", plain.value("reads", std::string("?")),
            100 * ratio.value("confidence", 0.0), plain.value("lo", 0.0), plain.value("hi", 0.0));
      else if (ratio.is_object() && ratio.contains("mean"))  // a record from before b_over_a
        out += fmt::format(
            "  ratio {:.4f} ({:.0f} % CI {:.4f} .. {:.4f}; oriented: above 1 means B is better)\n",
            ratio.value("mean", 0.0), 100 * ratio.value("confidence", 0.0), ratio.value("lo", 0.0),
            ratio.value("hi", 0.0));
      out += fmt::format("  pairs {} used, {} refused; band +/- {:.3f} % ({})\n",
                         v.value("pairs_used", 0), v.value("pairs_refused", 0),
                         d.value("band_pct", 0.0), d.value("band_source", "?"));
      for (const auto& r : d.value("reasons", std::vector<std::string>{}))
        out += fmt::format("  - {}\n", TerminalSafe(r));
    } catch (const nlohmann::json::exception& e) {
      out += fmt::format("A/B verdict: unreadable ({})\n", e.what());
    }
  }
  for (const auto& v : rec["expectation_violations"])
    out += fmt::format("VIOLATION: {}\n", TerminalSafe(v.value("message", "")));
  for (const auto& c : rec.value("caveats", std::vector<std::string>{}))
    out += fmt::format("caveat: {}\n", TerminalSafe(c));
  out += fmt::format("reproduce: {}\n", TerminalSafe(rec["recipe"].value("reproduce", "")));
  if (auto n = rec["recipe"].find("reproduce_note"); n != rec["recipe"].end() && n->is_string())
    out += fmt::format("  ({})\n", n->get<std::string>());
  return out;
}

}  // namespace vouch
