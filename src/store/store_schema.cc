// The store's schema: the migrations, the version check and the opening. A read checks the
// version read-only (no transaction, no lock: a writer ingesting at the same time does not make
// `history list` wait); only a write migrates, under the write lock.
#include <climits>
#include <cstdlib>
#include <filesystem>

#include "store/store.h"
#include "store/store_doc.h"
#include "util/host.h"

namespace vouch {
namespace {

// The migrations, in order: migration i brings the store from version i to i + 1. The text
// is plain SQL that SQLite and PostgreSQL both read (BIGINT, DOUBLE PRECISION, TEXT; flags
// are 0/1 integers). Never edit a released migration: add the next one.
struct Migration {
  const char* description;
  std::vector<const char*> statements;
};

const std::vector<Migration>& Migrations() {
  static const std::vector<Migration> m = {
      {"runs, legs, windows, metrics, summaries, A/B verdicts, gates and baselines",
       {R"(CREATE TABLE runs (
  run_key TEXT PRIMARY KEY,
  content_sha256 TEXT NOT NULL,
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  record_schema_version BIGINT NOT NULL,
  started TEXT NOT NULL,
  started_unix_s DOUBLE PRECISION NOT NULL,
  ended_unix_s DOUBLE PRECISION,
  day TEXT NOT NULL,
  commit_sha TEXT,
  branch TEXT,
  dirty BIGINT,
  host TEXT,
  boot_id TEXT,
  gpu_name TEXT,
  gpu_uuid TEXT,
  driver TEXT,
  simulated BIGINT NOT NULL,
  clock_sm_median_mhz DOUBLE PRECISION,
  clock_sm_mean_mhz DOUBLE PRECISION,
  measured_legs BIGINT NOT NULL,
  valid_legs BIGINT NOT NULL,
  reproduce TEXT NOT NULL,
  source TEXT,
  ingested_unix_s DOUBLE PRECISION NOT NULL,
  record_json TEXT NOT NULL))",
        R"(CREATE TABLE legs (
  run_key TEXT NOT NULL REFERENCES runs (run_key) ON DELETE CASCADE,
  leg_index BIGINT NOT NULL,
  arm TEXT NOT NULL,
  role TEXT NOT NULL,
  valid BIGINT NOT NULL,
  reasons_json TEXT NOT NULL,
  wall_ns BIGINT,
  exit_code BIGINT,
  outcome TEXT,
  dir TEXT,
  start_unix_ns BIGINT,
  PRIMARY KEY (run_key, leg_index)))",
        R"(CREATE TABLE windows (
  run_key TEXT NOT NULL REFERENCES runs (run_key) ON DELETE CASCADE,
  leg_index BIGINT NOT NULL,
  gpu BIGINT NOT NULL,
  gpu_uuid TEXT,
  status TEXT NOT NULL,
  window_status TEXT NOT NULL,
  busy_readings BIGINT,
  sm_median_mhz DOUBLE PRECISION,
  sm_mean_mhz DOUBLE PRECISION,
  sm_min_mhz DOUBLE PRECISION,
  sm_max_mhz DOUBLE PRECISION,
  spread DOUBLE PRECISION,
  power_median_mw DOUBLE PRECISION,
  region_begin_unix_s DOUBLE PRECISION,
  region_end_unix_s DOUBLE PRECISION,
  reasons_json TEXT NOT NULL,
  series_json TEXT,
  PRIMARY KEY (run_key, leg_index, gpu)))",
        R"(CREATE TABLE metrics (
  run_key TEXT NOT NULL REFERENCES runs (run_key) ON DELETE CASCADE,
  leg_index BIGINT NOT NULL,
  seq BIGINT NOT NULL,
  name TEXT NOT NULL,
  unit TEXT NOT NULL,
  better TEXT NOT NULL,
  value DOUBLE PRECISION,
  text_value TEXT,
  samples_json TEXT,
  PRIMARY KEY (run_key, leg_index, seq)))",
        R"(CREATE TABLE summaries (
  run_key TEXT NOT NULL REFERENCES runs (run_key) ON DELETE CASCADE,
  arm TEXT NOT NULL,
  name TEXT NOT NULL,
  unit TEXT NOT NULL,
  better TEXT NOT NULL,
  n BIGINT NOT NULL,
  median DOUBLE PRECISION NOT NULL,
  min DOUBLE PRECISION NOT NULL,
  max DOUBLE PRECISION NOT NULL,
  spread_pct DOUBLE PRECISION,
  clock_sm_median_mhz DOUBLE PRECISION,
  PRIMARY KEY (run_key, arm, name)))",
        R"(CREATE TABLE ab_verdicts (
  run_key TEXT PRIMARY KEY REFERENCES runs (run_key) ON DELETE CASCADE,
  headline TEXT,
  better TEXT,
  verdict TEXT NOT NULL,
  ratio_mean DOUBLE PRECISION,
  ratio_lo DOUBLE PRECISION,
  ratio_hi DOUBLE PRECISION,
  band_pct DOUBLE PRECISION,
  pairs_used BIGINT,
  pairs_refused BIGINT,
  verdict_json TEXT NOT NULL))",
        R"(CREATE TABLE gates (
  gate_key TEXT PRIMARY KEY,
  run_key TEXT NOT NULL REFERENCES runs (run_key) ON DELETE CASCADE,
  overall TEXT NOT NULL,
  clock_attributed BIGINT NOT NULL,
  baseline_path TEXT,
  gate_json TEXT NOT NULL,
  ingested_unix_s DOUBLE PRECISION NOT NULL))",
        R"(CREATE TABLE baselines (
  run_key TEXT PRIMARY KEY REFERENCES runs (run_key) ON DELETE CASCADE,
  headline TEXT,
  path TEXT,
  baseline_json TEXT NOT NULL))"}},
      {"indexes for trends and lists",
       {"CREATE INDEX summaries_by_metric ON summaries (name, arm)",
        "CREATE INDEX runs_by_start ON runs (started_unix_s)",
        "CREATE INDEX metrics_by_name ON metrics (name)",
        "CREATE INDEX gates_by_run ON gates (run_key)"}},
  };
  return m;
}

}  // namespace

int StoreSchemaVersion() { return static_cast<int>(Migrations().size()); }

bool IsPostgresUrl(const std::string& url) {
  return url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0;
}

Result<StoreLocation> ResolveStore(const std::string& flag) {
  if (!flag.empty()) return StoreLocation{flag, "--store"};
  if (const char* v = std::getenv("VOUCH_STORE"); v && *v) return StoreLocation{v, "VOUCH_STORE"};
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x && x[0] == '/')
    return StoreLocation{(std::filesystem::path(x) / "vouch" / "history.sqlite").string(),
                         "XDG_DATA_HOME"};
  if (const char* h = std::getenv("HOME"); h && *h)
    return StoreLocation{
        (std::filesystem::path(h) / ".local" / "share" / "vouch" / "history.sqlite").string(),
        "HOME"};
  return MakeError(
      "no history store: give --store PATH or postgresql://..., or set VOUCH_STORE (neither "
      "XDG_DATA_HOME nor HOME is set)");
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& url, StoreAccess access) {
  // A read creates nothing: a mistyped --store is an error, not a new empty store (SQLite
  // would create the file, and the store its folder, on open).
  const bool read = access == StoreAccess::kRead;
  if (read && !IsPostgresUrl(url)) {
    std::error_code ec;
    if (!std::filesystem::exists(url, ec))
      return MakeError(
          "history store {} does not exist: nothing was added to it yet (vouch history add "
          "RUN_DIR, or --store on run, baseline, gate or ab, creates it)",
          url);
  }
  Result<std::unique_ptr<SqlDb>> db =
      IsPostgresUrl(url) ? OpenPostgresDb(url, read) : OpenSqliteDb(url, read);
  if (!db) return db.error();
  return OpenDb(std::move(*db), StoreSchemaVersion(), access);
}

Result<std::unique_ptr<Store>> Store::OpenDb(std::unique_ptr<SqlDb> db, int up_to,
                                             StoreAccess access) {
  std::unique_ptr<Store> s(new Store(std::move(db)));
  // Read-only first: a store already at its version is opened without the write lock.
  auto v = s->ReadVersion();
  if (!v) return v.error();
  if (*v > StoreSchemaVersion())
    return MakeError(
        "history store {} is at schema version {}, newer than this vouch knows ({}): a newer "
        "vouch wrote it; upgrade vouch (nothing was changed)",
        s->db_->Where(), *v, StoreSchemaVersion());
  if (*v >= up_to) return s;
  if (access == StoreAccess::kRead) {
    // A store nothing was ever written to holds no run; one of an older schema is upgraded by
    // the next write, not by a read.
    if (*v == 0) {
      s->empty_ = true;
      return s;
    }
    return MakeError(
        "history store {} is at schema version {}, older than this vouch's ({}): a write "
        "upgrades it (vouch history add, or run --store); a read does not (nothing was changed)",
        s->db_->Where(), *v, StoreSchemaVersion());
  }
  if (auto m = s->Migrate(up_to); !m) return m.error();
  return s;
}

Result<int> Store::SchemaVersion() {
  auto r = db_->Query("SELECT MAX(version) FROM schema_version");
  if (!r) return r.error();
  if (r->rows.empty() || IsNull(r->rows[0][0])) return 0;
  // Checked: 2^32 + 2 is not version 2, and text is not a version.
  auto v = StoredInt(r->rows[0][0],
                     fmt::format("history store {}: schema_version.version", db_->Where()));
  if (!v) return v.error();
  if (*v < 0 || *v > INT_MAX)
    return MakeError(
        "history store {} is at schema version {}, which no vouch writes (this one knows 1 to "
        "{}): the store was edited or damaged (nothing was changed)",
        db_->Where(), *v, StoreSchemaVersion());
  return static_cast<int>(*v);
}

Result<int> Store::ReadVersion() {
  // Whether the version table is there, without creating it (that is a write).
  auto t = db_->Query(db_->Engine() == "postgresql"
                          ? "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = "
                            "current_schema() AND table_name = 'schema_version'"
                          : "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = "
                            "'schema_version'");
  if (!t) return t.error();
  if (t->rows.empty() || AsInt(t->rows[0][0]) == 0) return 0;
  return SchemaVersion();
}

Status Store::Migrate(int up_to) {
  const auto& all = Migrations();
  SqlTransaction tx(*db_);
  if (auto s = tx.Begin(); !s) return s;
  if (auto s = db_->LockSchema(); !s) return s;
  if (auto r = db_->Exec("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT PRIMARY KEY, "
                         "description TEXT NOT NULL, applied_unix_s DOUBLE PRECISION NOT NULL)");
      !r)
    return r.error();
  auto v = SchemaVersion();
  if (!v) return v.error();
  if (*v > StoreSchemaVersion())
    return MakeError(
        "history store {} is at schema version {}, newer than this vouch knows ({}): a newer "
        "vouch wrote it; upgrade vouch (nothing was changed)",
        db_->Where(), *v, StoreSchemaVersion());
  // Each migration and its version row commit together: a store is never half migrated.
  for (int i = *v; i < up_to && i < static_cast<int>(all.size()); ++i) {
    for (const char* st : all[static_cast<size_t>(i)].statements)
      if (auto r = db_->Exec(st); !r)
        return MakeError("migrating to schema version {}: {}", i + 1, r.error().message);
    if (auto r = db_->Exec(
            "INSERT INTO schema_version (version, description, applied_unix_s) VALUES (?, ?, ?)",
            {static_cast<std::int64_t>(i + 1), std::string(all[static_cast<size_t>(i)].description),
             UnixNowSeconds()});
        !r)
      return r.error();
  }
  return tx.Commit();
}

}  // namespace vouch
