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
#include "store/store_rows.h"
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

std::string RunKeyOf(const nlohmann::json& rec) { return store_rows::RunKey(rec); }

Result<PreparedRecord> Store::PrepareRecordDir(const std::string& dir, bool fast) {
  // One stat tells the run directory from its record.json (ReadRecordJson's own was a second).
  std::error_code ec;
  const bool is_dir = std::filesystem::is_directory(dir, ec);
  const std::string path = is_dir ? (std::filesystem::path(dir) / "record.json").string() : dir;
  std::string source = is_dir ? std::filesystem::absolute(dir, ec).string()
                              : std::filesystem::absolute(dir, ec).parent_path().string();
  if (fast)
    if (auto p = PrepareRecordFast(path, source)) return std::move(*p);
  auto rec = ReadRecordJsonFile(path);
  if (!rec) return rec.error();
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

  return store_rows::Rows(rec, source, DumpJson(rec), version);
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
  return store_rows::GateRow(run_key, gate, baseline_path);
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
