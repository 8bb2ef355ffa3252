#include "store/store.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "record/record.h"
#include "store/store_doc.h"
#include "util/hash.h"
#include "util/host.h"
#include "util/json_io.h"
#include "util/median.h"

namespace vouch {
namespace {

// Multi-row INSERTs: one statement per table and record on both engines (a record of a
// thousand legs is a few statements, not thousands of round trips).
// The rows' values are moved into the statements' parameters (a leg's series text is not
// copied again).
Status InsertRows(SqlDb& db, const std::string& head, std::size_t ncols,
                  std::vector<std::vector<SqlValue>>& rows) {
  if (rows.empty()) return OkStatus();
  std::size_t per = std::max<std::size_t>(1, std::min<std::size_t>(500, db.MaxParams() / ncols));
  std::string one = "(";
  for (std::size_t c = 0; c < ncols; ++c) one += c ? ",?" : "?";
  one += ")";
  for (std::size_t at = 0; at < rows.size(); at += per) {
    std::size_t n = std::min(per, rows.size() - at);
    std::string sql = head + " VALUES ";
    std::vector<SqlValue> params;
    params.reserve(n * ncols);
    for (std::size_t i = 0; i < n; ++i) {
      if (i) sql += ",";
      sql += one;
      auto& r = rows[at + i];
      params.insert(params.end(), std::make_move_iterator(r.begin()),
                    std::make_move_iterator(r.end()));
    }
    if (auto r = db.Exec(sql, params); !r) return r.error();
  }
  return OkStatus();
}

SqlValue Str(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return SqlNull();
  return it->get<std::string>();
}

SqlValue Num(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return SqlNull();
  if (it->is_number_integer()) return it->get<std::int64_t>();
  double d = it->get<double>();
  return std::isfinite(d) ? SqlValue(d) : SqlNull();
}

const nlohmann::json& At(const nlohmann::json& j, const char* key) {
  static const nlohmann::json null;
  if (!j.is_object()) return null;
  auto it = j.find(key);
  return it == j.end() ? null : *it;
}

std::string Day(double unix_s) { return IsoTimeUtc(unix_s).substr(0, 10); }

std::string JoinUnique(const nlohmann::json& gpus, const char* key) {
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

}  // namespace

std::string_view IngestResultName(IngestResult r) {
  switch (r) {
    case IngestResult::kAdded:
      return "added";
    case IngestResult::kUnchanged:
      return "unchanged";
    case IngestResult::kReplaced:
      return "replaced";
  }
  return "?";
}

std::string RunKeyOf(const nlohmann::json& rec) {
  const auto& env = At(rec, "environment");
  std::string id = fmt::format(
      "{}|{}|{:.6f}|{}", env.is_object() ? env.value("host_boot_id", "") : "",
      env.is_object() ? env.value("hostname", "") : "", rec.value("started_unix_s", 0.0),
      At(rec, "recipe").is_object() ? At(rec, "recipe").value("reproduce", "") : "");
  return Sha256Hex(id).substr(0, 32);
}

Result<PreparedRecord> Store::PrepareRecordDir(const std::string& dir) {
  // One stat tells the run directory from its record.json (ReadRecordJson's own was a second).
  std::error_code ec;
  const bool is_dir = std::filesystem::is_directory(dir, ec);
  auto rec =
      ReadRecordJsonFile(is_dir ? (std::filesystem::path(dir) / "record.json").string() : dir);
  if (!rec) return rec.error();
  std::string source = is_dir ? std::filesystem::absolute(dir, ec).string()
                              : std::filesystem::absolute(dir, ec).parent_path().string();
  // ReadRecordJson checked the header and the shape (the schema walk): not walked twice.
  auto out = PrepareGuarded(*rec, source, /*shape_checked=*/true);
  // Freed children first (FreeJson), not by nlohmann's destructor, which moves every child
  // of the tree onto a stack of its own before freeing it.
  FreeJson(*rec);
  return out;
}

Result<IngestOutcome> Store::AddRecordDir(const std::string& dir) {
  auto p = PrepareRecordDir(dir);
  if (!p) return p.error();
  return AddPrepared(std::move(*p));
}

Result<IngestOutcome> Store::AddRecord(const nlohmann::json& rec, const std::string& source) {
  auto p = PrepareGuarded(rec, source, /*shape_checked=*/false);
  if (!p) return p.error();
  return AddPrepared(std::move(*p));
}

Result<PreparedRecord> Store::PrepareGuarded(const nlohmann::json& rec, const std::string& source,
                                             bool shape_checked) {
  // A field of an unexpected type deep inside a hand-edited record refuses the record.
  try {
    return PrepareChecked(rec, source, shape_checked);
  } catch (const nlohmann::json::exception& e) {
    return MakeError("{}: a field has an unexpected type ({}); not stored", source, e.what());
  }
}

Result<PreparedRecord> Store::PrepareChecked(const nlohmann::json& rec, const std::string& source,
                                             bool shape_checked) {
  // The same checks as every reader of a record: a newer schema is refused by name. The
  // version is checked here whether or not the shape was (it is one lookup).
  if (!rec.is_object() || rec.value("schema", "") != "vouch.record")
    return MakeError("{}: not a vouch record (schema is not 'vouch.record')", source);
  int version = rec.value("schema_version", 0);
  if (version != kRecordSchemaVersion)
    return MakeError(
        "{}: record schema 'vouch.record' version {} is not one this vouch stores ({}); upgrade "
        "vouch",
        source, version, kRecordSchemaVersion);
  if (!shape_checked)
    if (auto shape = CheckRecordShape(rec, source); !shape)
      return MakeError("{}; not stored", shape.error().message);

  PreparedRecord p;
  p.source = source;
  IngestOutcome& out = p.out;
  out.run_key = RunKeyOf(rec);
  // One dump: its hash is the content key and the text is the stored document.
  std::string document = DumpJson(rec);
  p.content = Sha256Hex(document);
  const std::string& content = p.content;
  const auto& env = At(rec, "environment");
  const auto& revs = At(rec, "revisions");
  nlohmann::json rev0 = revs.is_array() && !revs.empty() ? revs[0] : nlohmann::json::object();
  std::string first_arm = "run";
  const auto& arms = At(At(rec, "recipe"), "arms");
  if (arms.is_array() && !arms.empty() && arms[0].is_object())
    first_arm = arms[0].value("name", "run");
  // Each arm's clock state once (the runs row and every summary row of the arm use it). The
  // record passed CheckRecordShape, here or in ReadRecordJson.
  std::map<std::string, ClockState, std::less<>> clock_of;
  auto clock_state = [&](const std::string& arm) -> const ClockState& {
    auto it = clock_of.find(arm);
    if (it == clock_of.end()) it = clock_of.emplace(arm, CheckedRecordClockState(rec, arm)).first;
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
               static_cast<std::int64_t>(version),
               rec.value("started", ""),
               started,
               Num(rec, "ended_unix_s"),
               Day(started),
               Str(rev0, "commit"),
               Str(rev0, "branch"),
               rev0.contains("dirty") && rev0["dirty"].is_boolean()
                   ? SqlValue(static_cast<std::int64_t>(rev0["dirty"].get<bool>()))
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
    std::int64_t idx = l["index"].get<std::int64_t>();
    const auto& res = l["result"];
    legs.push_back({out.run_key, idx, l["arm"].get<std::string>(), l["role"].get<std::string>(),
                    static_cast<std::int64_t>(l["valid"].get<bool>()), DumpJson(l["reasons"]),
                    Num(res, "wall_ns"), Num(res, "exit_code"), Str(res, "outcome"), Str(l, "dir"),
                    Num(res, "start_unix_ns")});
    const auto& w = l["window"];
    auto samples = ReadLegSamples(source, l);
    const auto& region = At(w, "region");
    std::string wstatus =
        At(w, "verdict").is_object() ? At(w, "verdict").value("status", "?") : "?";
    for (const auto& g : w["gpus"]) {
      const auto& f = g["fold"];
      const auto& sm = At(f, "sm_mhz");
      const auto& pw = At(f, "power_mw");
      const auto& gv = At(g, "verdict");
      std::int64_t gpu = f["gpu"].get<std::int64_t>();
      SqlValue series = SqlNull();
      if (samples)
        series = LegSeriesText(*samples, static_cast<int>(gpu), w.value("started_unix_s", started));
      windows.push_back(
          {out.run_key, idx, gpu, Str(At(g, "static"), "uuid"),
           gv.is_object() ? SqlValue(gv.value("status", wstatus)) : SqlValue(wstatus), wstatus,
           Num(f, "busy_readings"), sm.is_object() ? Num(sm, "median") : SqlNull(),
           sm.is_object() ? Num(sm, "mean") : SqlNull(),
           sm.is_object() ? Num(sm, "min") : SqlNull(), sm.is_object() ? Num(sm, "max") : SqlNull(),
           Num(f, "spread"), pw.is_object() ? Num(pw, "median") : SqlNull(),
           region.is_object() ? Num(region, "begin_unix_s") : SqlNull(),
           region.is_object() ? Num(region, "end_unix_s") : SqlNull(),
           DumpJson(gv.is_object() && gv.contains("reasons") ? gv["reasons"]
                                                             : At(At(w, "verdict"), "reasons")),
           std::move(series)});
    }
    std::int64_t seq = 0;
    for (const auto& m : l["metrics"])
      metrics.push_back({out.run_key, idx, seq++, m["name"].get<std::string>(), m.value("unit", ""),
                         m.value("better", "none"), Num(m, "value"), Str(m, "text"),
                         m.contains("samples") ? SqlValue(DumpJson(m["samples"])) : SqlNull()});
  }
  for (const auto& [arm, sums] : rec["summary"].items()) {
    const ClockState& c = clock_state(arm);
    for (const auto& s : sums)
      summaries.push_back({out.run_key, arm, s["name"].get<std::string>(),
                           s["unit"].get<std::string>(), s.value("better", "none"),
                           s["n"].get<std::int64_t>(), s["median"].get<double>(),
                           s["min"].get<double>(), s["max"].get<double>(), Num(s, "spread_pct"),
                           c.valid ? SqlValue(c.sm_median_mhz) : SqlNull()});
  }
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

Result<IngestOutcome> Store::AddPrepared(PreparedRecord&& p) {
  IngestOutcome& out = p.out;
  const std::string& source = p.source;
  // runs.ingested_unix_s, the row's last column but record_json (PrepareChecked): the time of
  // the commit, not of the reading.
  p.run_row[p.run_row.size() - 2] = UnixNowSeconds();
  // Two attempts: a PostgreSQL writer that lost the race for a new run key finds the
  // winner's row the second time and compares contents.
  for (int attempt = 0; attempt < 2; ++attempt) {
    SqlTransaction tx(*db_);
    if (auto s = tx.Begin(); !s) return s.error();
    auto have = db_->Query("SELECT content_sha256 FROM runs WHERE run_key = ?", {out.run_key});
    if (!have) return have.error();
    out.result = IngestResult::kAdded;
    if (!have->rows.empty()) {
      if (AsText(have->rows[0][0]) == p.content) {
        out.result = IngestResult::kUnchanged;
        if (auto s = tx.Commit(); !s) return s.error();
        return out;
      }
      out.result = IngestResult::kReplaced;
      for (const char* t :
           {"windows", "metrics", "summaries", "ab_verdicts", "baselines", "legs", "runs"})
        if (auto r = db_->Exec(fmt::format("DELETE FROM {} WHERE run_key = ?", t), {out.run_key});
            !r)
          return r.error();
    }
    auto ins = db_->Exec(
        "INSERT INTO runs (run_key, content_sha256, kind, status, record_schema_version, started, "
        "started_unix_s, ended_unix_s, day, commit_sha, branch, dirty, host, boot_id, gpu_name, "
        "gpu_uuid, driver, simulated, clock_sm_median_mhz, clock_sm_mean_mhz, measured_legs, "
        "valid_legs, reproduce, source, ingested_unix_s, record_json) VALUES (?, ?, ?, ?, ?, ?, "
        "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_key) DO "
        "NOTHING",
        p.run_row);
    if (!ins) return ins.error();
    if (*ins == 0) continue;  // another writer inserted this run meanwhile: look again
    auto fail = [&](const Error& e) -> Result<IngestOutcome> {
      return MakeError("{}: not stored (the store is as it was before it): {}", source, e.message);
    };
    if (auto s = InsertRows(*db_,
                            "INSERT INTO legs (run_key, leg_index, arm, role, valid, reasons_json, "
                            "wall_ns, exit_code, outcome, dir, start_unix_ns)",
                            11, p.legs);
        !s)
      return fail(s.error());
    if (auto s = InsertRows(*db_,
                            "INSERT INTO windows (run_key, leg_index, gpu, gpu_uuid, status, "
                            "window_status, busy_readings, sm_median_mhz, sm_mean_mhz, sm_min_mhz, "
                            "sm_max_mhz, spread, power_median_mw, region_begin_unix_s, "
                            "region_end_unix_s, reasons_json, series_json)",
                            17, p.windows);
        !s)
      return fail(s.error());
    if (auto s = InsertRows(*db_,
                            "INSERT INTO metrics (run_key, leg_index, seq, name, unit, better, "
                            "value, text_value, samples_json)",
                            9, p.metrics);
        !s)
      return fail(s.error());
    if (auto s = InsertRows(*db_,
                            "INSERT INTO summaries (run_key, arm, name, unit, better, n, median, "
                            "min, max, spread_pct, clock_sm_median_mhz)",
                            11, p.summaries);
        !s)
      return fail(s.error());
    if (p.ab_verdict)
      if (auto r = db_->Exec(
              "INSERT INTO ab_verdicts (run_key, headline, better, verdict, ratio_mean, ratio_lo, "
              "ratio_hi, band_pct, pairs_used, pairs_refused, verdict_json) VALUES (?, ?, ?, ?, "
              "?, ?, ?, ?, ?, ?, ?)",
              *p.ab_verdict);
          !r)
        return fail(r.error());
    if (p.baseline)
      if (auto r = db_->Exec(
              "INSERT INTO baselines (run_key, headline, path, baseline_json) VALUES (?, ?, ?, ?)",
              *p.baseline);
          !r)
        return fail(r.error());
    if (auto s = tx.Commit(); !s) return fail(s.error());
    if (p.gate)
      if (auto s = InsertGate(std::move(*p.gate)); !s) return s.error();
    return out;
  }
  out.result = IngestResult::kUnchanged;
  return out;
}

void Store::AddRecordDirs(const std::vector<std::string>& dirs, const AddedFn& each,
                          const std::function<bool()>& stop_asked) {
  auto stopped = [&] { return stop_asked && stop_asked(); };
  if (dirs.size() < 2) {
    for (const auto& d : dirs) {
      if (stopped()) return;
      each(d, AddRecordDir(d));
    }
    return;
  }
  // A second thread reads the records (JSON, samples, rows: about half the work of adding
  // one, and no store access) while this one commits them, in order: on 2 cores the reading
  // and SQLite's writes overlap. At most kAhead records wait read: memory stays bounded.
  constexpr std::size_t kAhead = 4;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Result<PreparedRecord>> ready;
  // The records committed, handed back: each is freed by the thread that allocated it. Freed
  // here, every block of one would go back to the reader's malloc arena under its lock, which
  // the reader holds while it allocates the next (futex waits on both sides).
  std::vector<Result<PreparedRecord>> done;
  bool stop = false;
  std::exception_ptr thrown;
  std::thread reader([&] {
    try {
      std::vector<Result<PreparedRecord>> to_free;
      for (const auto& d : dirs) {
        {
          std::unique_lock lock(mu);
          cv.wait(lock, [&] { return stop || ready.size() < kAhead; });
          if (stop) return;
          to_free.swap(done);
        }
        to_free.clear();
        auto p = PrepareRecordDir(d);
        std::lock_guard lock(mu);
        ready.push_back(std::move(p));
        cv.notify_all();
      }
    } catch (...) {
      std::lock_guard lock(mu);
      thrown = std::current_exception();
      cv.notify_all();
    }
  });
  // The reader stops and is joined however this thread leaves (an exception included).
  struct Join {
    std::thread& t;
    std::mutex& mu;
    std::condition_variable& cv;
    bool& stop;
    ~Join() {
      {
        std::lock_guard lock(mu);
        stop = true;
      }
      cv.notify_all();
      t.join();
    }
  };
  {
    Join join{reader, mu, cv, stop};
    for (const auto& d : dirs) {
      if (stopped()) break;
      std::optional<Result<PreparedRecord>> p;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return !ready.empty() || thrown; });
        if (ready.empty()) break;  // the reader threw: rethrown below
        p.emplace(std::move(ready.front()));
        ready.pop_front();
      }
      cv.notify_all();
      if (*p)
        each(d, AddPrepared(std::move(**p)));
      else
        each(d, p->error());
      std::lock_guard lock(mu);
      done.push_back(std::move(*p));
    }
  }
  if (thrown) std::rethrow_exception(thrown);
}

std::vector<SqlValue> Store::GateRow(const std::string& run_key, const nlohmann::json& gate,
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

Status Store::InsertGate(std::vector<SqlValue> row) {
  row.back() = UnixNowSeconds();
  auto r = db_->Exec(
      "INSERT INTO gates (gate_key, run_key, overall, clock_attributed, baseline_path, "
      "gate_json, ingested_unix_s) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (gate_key) DO NOTHING",
      row);
  if (!r) return r.error();
  return OkStatus();
}

Status Store::AddGate(const std::string& run_key, const nlohmann::json& gate,
                      const std::string& baseline_path) {
  return InsertGate(GateRow(run_key, gate, baseline_path));
}

}  // namespace vouch
