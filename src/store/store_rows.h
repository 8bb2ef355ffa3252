// The rows the store keeps of a record, stated once for any tree with nlohmann::json's const
// interface: nlohmann's own (Store::PrepareChecked) and simdjson's read through DomJson
// (store_fast.cc, `history add`'s reading). Both give the same rows, byte for byte
// (store_fast_test.cc, fuzz/fuzz_store.cc).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "record/record.h"
#include "record/record_clock.h"
#include "store/store.h"
#include "store/store_doc.h"
#include "util/hash.h"
#include "util/host.h"
#include "util/json_io.h"

namespace vouch::store_rows {

// J's member KEY, or null where J is no object or has no KEY.
template <class J>
decltype(auto) At(const J& j, const char* key) {
  if constexpr (std::is_same_v<J, nlohmann::json>) {
    static const nlohmann::json null;
    if (!j.is_object()) return static_cast<const nlohmann::json&>(null);
    auto it = j.find(key);
    return it == j.end() ? static_cast<const nlohmann::json&>(null) : *it;
  } else {
    return j.member(key);
  }
}

template <class J>
SqlValue Str(const J& j, const char* key) {
  const auto& v = At(j, key);
  if (!v.is_string()) return SqlNull();
  return v.template get<std::string>();
}

template <class J>
SqlValue Num(const J& j, const char* key) {
  const auto& v = At(j, key);
  if (!v.is_number()) return SqlNull();
  if (v.is_number_integer()) return v.template get<std::int64_t>();
  double d = v.template get<double>();
  return std::isfinite(d) ? SqlValue(d) : SqlNull();
}

inline std::string Day(double unix_s) { return IsoTimeUtc(unix_s).substr(0, 10); }

template <class J>
std::string JoinUnique(const J& gpus, const char* key) {
  std::vector<std::string> seen;
  if (gpus.is_array())
    for (const auto& g : gpus) {
      std::string v = g.is_object() ? g.value(key, "") : "";
      if (!v.empty() && std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
    }
  std::string out;
  for (const auto& s : seen) out += (out.empty() ? "" : ",") + s;
  return out;
}

// An object's members in key order.
template <class J, class F>
void ForEachItem(const J& j, F each) {
  if constexpr (std::is_same_v<J, nlohmann::json>) {
    for (const auto& [k, v] : j.items()) each(k, v);
  } else {
    j.ForEachItem(each);
  }
}

// RunKeyOf (store.h).
template <class J>
std::string RunKey(const J& rec) {
  const auto& env = At(rec, "environment");
  const auto& recipe = At(rec, "recipe");
  std::string id = fmt::format(
      "{}|{}|{:.6f}|{}", env.is_object() ? env.value("host_boot_id", "") : "",
      env.is_object() ? env.value("hostname", "") : "", rec.value("started_unix_s", 0.0),
      recipe.is_object() ? recipe.value("reproduce", "") : "");
  return Sha256Hex(id).substr(0, 32);
}

// Store::GateRow.
template <class J>
std::vector<SqlValue> GateRow(const std::string& run_key, const J& gate,
                              const std::string& baseline_path) {
  std::string gate_json = DumpJson(gate);
  std::string key = Sha256Hex(run_key + "|" + baseline_path + "|" + gate_json).substr(0, 32);
  return {key,
          run_key,
          gate.value("overall", "?"),
          static_cast<std::int64_t>(gate.value("clock_attributed", false)),
          baseline_path,
          std::move(gate_json),
          SqlNull()};  // ingested_unix_s: InsertGate's time
}

// The rows of REC, a record whose header, version and shape were checked, read from SOURCE;
// DOCUMENT is its compact dump (the stored text, whose hash is the content key).
template <class J>
PreparedRecord Rows(const J& rec, const std::string& source, std::string document,
                    std::int64_t version) {
  PreparedRecord p;
  p.source = source;
  IngestOutcome& out = p.out;
  out.run_key = RunKey(rec);
  p.content = Sha256Hex(document);
  const std::string& content = p.content;
  const auto& env = At(rec, "environment");
  const auto& revs = At(rec, "revisions");
  const J rev0 = revs.is_array() && !revs.empty() ? J(revs[0]) : J();
  std::string first_arm = "run";
  const auto& arms = At(At(rec, "recipe"), "arms");
  if (arms.is_array() && !arms.empty() && arms[0].is_object())
    first_arm = arms[0].value("name", "run");
  // Each arm's clock state once (the runs row and every summary row of the arm use it).
  std::map<std::string, ClockState, std::less<>> clock_of;
  auto clock_state = [&](const std::string& arm) -> const ClockState& {
    auto it = clock_of.find(arm);
    if (it == clock_of.end())
      it = clock_of.emplace(arm, record_clock::CheckedClockState(rec, arm)).first;
    return it->second;
  };
  const ClockState clock = clock_state(first_arm);
  const auto& gpus = At(env, "gpus");
  std::string gpu_name = JoinUnique(gpus, "name"), gpu_uuid = JoinUnique(gpus, "uuid"),
              driver = JoinUnique(gpus, "driver_version");
  double started = rec.value("started_unix_s", 0.0);

  p.run_row = {out.run_key,
               content,
               rec.value("kind", "run"),
               rec.value("status", "?"),
               version,
               rec.value("started", ""),
               started,
               Num(rec, "ended_unix_s"),
               Day(started),
               Str(rev0, "commit"),
               Str(rev0, "branch"),
               rev0.contains("dirty") && rev0["dirty"].is_boolean()
                   ? SqlValue(static_cast<std::int64_t>(rev0["dirty"].template get<bool>()))
                   : SqlNull(),
               Str(env, "hostname"),
               Str(env, "boot_id"),
               gpu_name.empty() ? SqlNull() : SqlValue(gpu_name),
               gpu_uuid.empty() ? SqlNull() : SqlValue(gpu_uuid),
               driver.empty() ? SqlNull() : SqlValue(driver),
               static_cast<std::int64_t>(env.is_object() && env.value("simulated", false)),
               clock.valid ? SqlValue(clock.sm_median_mhz) : SqlNull(),
               clock.valid ? SqlValue(clock.sm_mean_mhz) : SqlNull(),
               static_cast<std::int64_t>(rec.value("measured_legs", 0)),
               static_cast<std::int64_t>(rec.value("valid_legs", 0)),
               rec["recipe"].value("reproduce", ""),
               source,
               SqlNull(),   // ingested_unix_s: the time of the commit (AddPrepared)
               SqlNull()};  // record_json, moved in below (an initializer list copies)
  p.run_row.back() = std::move(document);

  // Children first, outside the transaction: reading samples files is the slow part.
  auto& legs = p.legs;
  auto& windows = p.windows;
  auto& metrics = p.metrics;
  auto& summaries = p.summaries;
  for (const auto& l : rec["legs"]) {
    std::int64_t idx = l["index"].template get<std::int64_t>();
    const auto& res = l["result"];
    legs.push_back({out.run_key, idx, l["arm"].template get<std::string>(),
                    l["role"].template get<std::string>(),
                    static_cast<std::int64_t>(l["valid"].template get<bool>()),
                    DumpJson(l["reasons"]), Num(res, "wall_ns"), Num(res, "exit_code"),
                    Str(res, "outcome"), Str(l, "dir"), Num(res, "start_unix_ns")});
    const auto& w = l["window"];
    std::optional<std::vector<Sample>> samples;
    if (!source.empty() && l.contains("dir") && l["dir"].is_string() &&
        w.contains("samples_file") && w["samples_file"].is_string())
      samples = ReadLegSamplesFile(source, l["dir"].template get<std::string>(),
                                   w["samples_file"].template get<std::string>());
    const auto& region = At(w, "region");
    const auto& wverdict = At(w, "verdict");
    std::string wstatus = wverdict.is_object() ? wverdict.value("status", "?") : "?";
    for (const auto& g : w["gpus"]) {
      const auto& f = g["fold"];
      const auto& sm = At(f, "sm_mhz");
      const auto& pw = At(f, "power_mw");
      const auto& gv = At(g, "verdict");
      std::int64_t gpu = f["gpu"].template get<std::int64_t>();
      SqlValue series = SqlNull();
      if (samples)
        series = LegSeriesText(*samples, static_cast<int>(gpu), w.value("started_unix_s", started));
      windows.push_back(
          {out.run_key, idx, gpu, Str(At(g, "static"), "uuid"),
           gv.is_object() ? SqlValue(gv.value("status", wstatus.c_str())) : SqlValue(wstatus),
           wstatus, Num(f, "busy_readings"), sm.is_object() ? Num(sm, "median") : SqlNull(),
           sm.is_object() ? Num(sm, "mean") : SqlNull(),
           sm.is_object() ? Num(sm, "min") : SqlNull(), sm.is_object() ? Num(sm, "max") : SqlNull(),
           Num(f, "spread"), pw.is_object() ? Num(pw, "median") : SqlNull(),
           region.is_object() ? Num(region, "begin_unix_s") : SqlNull(),
           region.is_object() ? Num(region, "end_unix_s") : SqlNull(),
           gv.is_object() && gv.contains("reasons") ? DumpJson(gv["reasons"])
                                                    : DumpJson(At(wverdict, "reasons")),
           std::move(series)});
    }
    std::int64_t seq = 0;
    for (const auto& m : l["metrics"])
      metrics.push_back({out.run_key, idx, seq++, m["name"].template get<std::string>(),
                         m.value("unit", ""), m.value("better", "none"), Num(m, "value"),
                         Str(m, "text"),
                         m.contains("samples") ? SqlValue(DumpJson(m["samples"])) : SqlNull()});
  }
  ForEachItem(rec["summary"], [&](const std::string& arm, const auto& sums) {
    const ClockState& c = clock_state(arm);
    for (const auto& s : sums)
      summaries.push_back({out.run_key, arm, s["name"].template get<std::string>(),
                           s["unit"].template get<std::string>(), s.value("better", "none"),
                           s["n"].template get<std::int64_t>(), s["median"].template get<double>(),
                           s["min"].template get<double>(), s["max"].template get<double>(),
                           Num(s, "spread_pct"), c.valid ? SqlValue(c.sm_median_mhz) : SqlNull()});
  });
  const auto& extra = At(rec, "extra");
  if (const auto& verdict = At(extra, "verdict"); verdict.is_object()) {
    const auto& d = At(verdict, "decision");
    const auto& ratio = At(d, "ratio");
    p.ab_verdict = std::vector<SqlValue>{out.run_key,
                                         Str(verdict, "headline"),
                                         Str(verdict, "better"),
                                         verdict.value("verdict", "?"),
                                         ratio.is_object() ? Num(ratio, "mean") : SqlNull(),
                                         ratio.is_object() ? Num(ratio, "lo") : SqlNull(),
                                         ratio.is_object() ? Num(ratio, "hi") : SqlNull(),
                                         d.is_object() ? Num(d, "band_pct") : SqlNull(),
                                         Num(verdict, "pairs_used"),
                                         Num(verdict, "pairs_refused"),
                                         DumpJson(verdict)};
  }
  if (const auto& b = At(extra, "baseline"); b.is_object())
    p.baseline = std::vector<SqlValue>{out.run_key, Str(b, "headline"), Str(extra, "baseline_path"),
                                       DumpJson(b)};
  if (const auto& g = At(extra, "gate"); g.is_object())
    p.gate = GateRow(out.run_key, g, extra.value("baseline_path", ""));
  return p;
}

}  // namespace vouch::store_rows
