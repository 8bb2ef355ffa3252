// The embedded engine of the history store: one SQLite file in WAL mode, so readers never
// block the writer, and BEGIN IMMEDIATE with a busy timeout, so two writers queue.
#include <sqlite3.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <unordered_map>

#include "store/sql.h"
#include "util/bounded_file.h"
#include "util/fs.h"
#include "util/number.h"

namespace vouch {

bool IsNull(const SqlValue& v) { return std::holds_alternative<std::monostate>(v); }

std::int64_t AsInt(const SqlValue& v) {
  if (auto* i = std::get_if<std::int64_t>(&v)) return *i;
  // A double out of int64's range, or text that is not a whole integer, reads as 0 (the
  // cast would be undefined; "5xyz" is not 5).
  if (auto* d = std::get_if<double>(&v)) {
    auto i = CheckedInt64(std::trunc(*d), "", INT64_MAX);
    return i ? *i : 0;
  }
  if (auto* s = std::get_if<std::string>(&v)) {
    auto i = ParseInt64(*s, "");
    return i ? *i : 0;
  }
  return 0;
}

double AsReal(const SqlValue& v) { return AsOptReal(v).value_or(0.0); }

std::optional<double> AsOptReal(const SqlValue& v) {
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  if (auto* s = std::get_if<std::string>(&v)) {
    auto d = ParseFiniteDouble(*s, "");  // the whole text, finite
    if (d) return *d;
    return std::nullopt;
  }
  return std::nullopt;
}

std::string AsText(const SqlValue& v) {
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  if (auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) return fmt::format("{}", *d);
  return "";
}

Status SqlDb::QueryEach(std::string_view sql, const std::vector<SqlValue>& params,
                        const RowFn& fn) {
  auto q = Query(sql, params);
  if (!q) return q.error();
  for (auto& row : q->rows)
    if (auto s = fn(row); !s) return s;
  return OkStatus();
}

namespace {

class SqliteDb final : public SqlDb {
 public:
  SqliteDb(std::string path, bool read_only) : path_(std::move(path)), read_only_(read_only) {}
  ~SqliteDb() override {
    for (auto& [_, st] : cache_) sqlite3_finalize(st);
    if (db_) sqlite3_close(db_);
  }

  Status Open() {
    std::error_code ec;
    auto parent = std::filesystem::path(path_).parent_path();
    if (!read_only_ && !parent.empty() && !std::filesystem::exists(parent, ec))
      if (auto s = MakeDirs(parent.string()); !s) return s;
    // A FIFO, a device or a directory there is no store: said so, not "disk I/O error".
    if (struct stat st{}; ::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      return MakeError("history store {}: is {}; give a SQLite file or a postgresql:// address",
                       path_, DescribeFileKind(st.st_mode));
    // A read opens the file read-only: it never changes it (no header into an empty file, no
    // journal mode turned to WAL).
    int rc = sqlite3_open_v2(
        path_.c_str(), &db_,
        (read_only_ ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
            SQLITE_OPEN_NOMUTEX,
        nullptr);
    if (rc != SQLITE_OK)
      return MakeError("history store {}: cannot open: {}", path_,
                       db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
    sqlite3_busy_timeout(db_, 30000);
    sqlite3_extended_result_codes(db_, 1);
    // vouch's store has tables only: a view or trigger in it (a "runs" that is a recursive
    // view ran for ever) is refused, and none would run.
    sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
    sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
    sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    // Every statement runs under the budget (sql.h): SQLite calls this every 1,000 virtual
    // machine instructions, and a statement past its deadline is interrupted.
    sqlite3_progress_handler(db_, 1000, &SqliteDb::Progress, this);
    // Nor a virtual table or a GENERATED column (stored or virtual): each computes what a read
    // returns (a generated column made `history list` run 32 s).
    auto odd = Query(
        "SELECT type, name, '' FROM sqlite_master WHERE type IN ('view', 'trigger') OR (type = "
        "'table' AND sql LIKE 'CREATE VIRTUAL TABLE%') UNION ALL SELECT 'generated column', "
        "x.name, m.name FROM sqlite_master m, pragma_table_xinfo(m.name) x WHERE m.type = "
        "'table' AND m.sql NOT LIKE 'CREATE VIRTUAL TABLE%' AND x.hidden <> 0 LIMIT 1",
        {});
    if (!odd) return odd.error();
    if (!odd->rows.empty()) {
      const auto& r = odd->rows[0];
      const std::string in =
          AsText(r[2]).empty() ? "" : fmt::format(" of table '{}'", AsText(r[2]));
      return MakeError(
          "history store {}: it holds a {} named '{}'{}, and a vouch store has plain tables and "
          "columns only: not a vouch store, or a tampered one; refused",
          path_, AsText(r[0]) == "table" ? "virtual table" : AsText(r[0]), AsText(r[1]), in);
    }
    // WAL: readers see the last commit while a writer works; NORMAL sync is safe in WAL (a
    // crash loses no committed transaction of a surviving disk). A read leaves the file's
    // journal mode as it is.
    for (const char* p :
         {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON"}) {
      if (read_only_ && std::string_view(p).find("journal_mode") != std::string_view::npos)
        continue;
      auto r = Query(p, {});
      if (!r) return r.error();
    }
    // A file that is not a database answers the first real read, not the open.
    if (auto r = Query("SELECT count(*) FROM sqlite_master", {}); !r) return r.error();
    return OkStatus();
  }

  std::string_view Engine() const override { return "sqlite"; }
  const std::string& Where() const override { return path_; }
  std::size_t MaxParams() const override {
    return static_cast<std::size_t>(sqlite3_limit(db_, SQLITE_LIMIT_VARIABLE_NUMBER, -1));
  }

  Result<std::int64_t> Exec(std::string_view sql, const std::vector<SqlValue>& params) override {
    auto st = Prepare(sql, params);
    if (!st) return st.error();
    int rc;
    while ((rc = sqlite3_step(*st)) == SQLITE_ROW) {
    }
    sqlite3_reset(*st);
    if (rc != SQLITE_DONE) return Fail(sql);
    return static_cast<std::int64_t>(sqlite3_changes(db_));
  }

  Result<SqlRows> Query(std::string_view sql, const std::vector<SqlValue>& params) override {
    auto st = Prepare(sql, params);
    if (!st) return st.error();
    SqlRows out;
    int n = sqlite3_column_count(*st);
    for (int i = 0; i < n; ++i) out.columns.emplace_back(sqlite3_column_name(*st, i));
    int rc;
    while ((rc = sqlite3_step(*st)) == SQLITE_ROW) {
      std::vector<SqlValue> row(static_cast<size_t>(n));
      ReadRow(*st, row);
      out.rows.push_back(std::move(row));
    }
    sqlite3_reset(*st);
    if (rc != SQLITE_DONE) return Fail(sql).error();
    return out;
  }

  // One row buffer for the whole walk: a text cell reuses the string already in its slot.
  Status QueryEach(std::string_view sql, const std::vector<SqlValue>& params,
                   const RowFn& fn) override {
    auto st = Prepare(sql, params);
    if (!st) return st.error();
    std::vector<SqlValue> row(static_cast<size_t>(sqlite3_column_count(*st)));
    int rc;
    while ((rc = sqlite3_step(*st)) == SQLITE_ROW) {
      ReadRow(*st, row);
      if (auto s = fn(row); !s) {
        sqlite3_reset(*st);
        return s;
      }
    }
    sqlite3_reset(*st);
    if (rc != SQLITE_DONE) return Fail(sql).error();
    return OkStatus();
  }

  Status Begin() override { return Simple("BEGIN IMMEDIATE"); }
  Status Commit() override { return Simple("COMMIT"); }
  void Rollback() override { (void)sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }
  Status LockSchema() override { return OkStatus(); }

 private:
  Status Simple(const char* sql) {
    // BEGIN IMMEDIATE may wait the busy timeout (30 s) for another writer first.
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(StoreStatementBudgetS() + 30));
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string m = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      return MakeError("history store {}: {}: {}", path_, sql, m);
    }
    return OkStatus();
  }

  static void ReadRow(sqlite3_stmt* st, std::vector<SqlValue>& row) {
    for (int i = 0; i < static_cast<int>(row.size()); ++i) {
      SqlValue& v = row[static_cast<size_t>(i)];
      switch (sqlite3_column_type(st, i)) {
        case SQLITE_INTEGER:
          v = static_cast<std::int64_t>(sqlite3_column_int64(st, i));
          break;
        case SQLITE_FLOAT:
          v = sqlite3_column_double(st, i);
          break;
        case SQLITE_NULL:
          v = std::monostate{};
          break;
        default: {
          const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(st, i));
          auto len = static_cast<size_t>(sqlite3_column_bytes(st, i));
          if (auto* s = std::get_if<std::string>(&v))
            s->assign(t, len);
          else
            v.emplace<std::string>(t, len);
        }
      }
    }
  }

  Result<std::int64_t> Fail(std::string_view sql) {
    std::string head(sql.substr(0, 60));
    if (over_budget_) {
      over_budget_ = false;
      return MakeError(
          "history store {}: a statement ran past the store's statement budget of {} s and was "
          "stopped (in '{}{}'): a store this slow to read is damaged or not vouch's (VOUCH_STORE_"
          "STATEMENT_BUDGET_S sets the budget)",
          path_, StoreStatementBudgetS(), head, sql.size() > 60 ? "..." : "");
    }
    return MakeError("history store {}: {} (in '{}{}')", path_, sqlite3_errmsg(db_), head,
                     sql.size() > 60 ? "..." : "");
  }

  static int Progress(void* self) {
    auto* db = static_cast<SqliteDb*>(self);
    if (std::chrono::steady_clock::now() < db->deadline_) return 0;
    db->over_budget_ = true;
    return 1;
  }
  // Each statement's deadline starts when it is bound (Prepare).
  void StartBudget() {
    over_budget_ = false;
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(StoreStatementBudgetS()));
  }

  // Statements are prepared once per text and kept: ingesting a record runs the same few
  // statements many times.
  Result<sqlite3_stmt*> Prepare(std::string_view sql, const std::vector<SqlValue>& params) {
    std::string key(sql);
    sqlite3_stmt* st = nullptr;
    if (auto it = cache_.find(key); it != cache_.end()) {
      st = it->second;
    } else {
      if (sqlite3_prepare_v2(db_, key.c_str(), static_cast<int>(key.size()), &st, nullptr) !=
          SQLITE_OK)
        return Fail(sql).error();
      if (cache_.size() > 256) {
        for (auto& [_, s] : cache_) sqlite3_finalize(s);
        cache_.clear();
      }
      cache_.emplace(std::move(key), st);
    }
    sqlite3_clear_bindings(st);
    StartBudget();
    if (static_cast<int>(params.size()) != sqlite3_bind_parameter_count(st))
      return MakeError("history store {}: statement wants {} parameters, got {}", path_,
                       sqlite3_bind_parameter_count(st), params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      int at = static_cast<int>(i) + 1, rc = SQLITE_OK;
      const SqlValue& v = params[i];
      if (auto* n = std::get_if<std::int64_t>(&v))
        rc = sqlite3_bind_int64(st, at, *n);
      else if (auto* d = std::get_if<double>(&v))
        rc = sqlite3_bind_double(st, at, *d);
      else if (auto* s = std::get_if<std::string>(&v))
        // Not copied: PARAMS outlive every step of the statement (Exec, Query and QueryEach
        // step it before they return), and the next use binds afresh.
        rc = sqlite3_bind_text(st, at, s->data(), static_cast<int>(s->size()), SQLITE_STATIC);
      else
        rc = sqlite3_bind_null(st, at);
      if (rc != SQLITE_OK) return Fail(sql).error();
    }
    return st;
  }

  std::string path_;
  bool read_only_ = false;
  bool over_budget_ = false;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  sqlite3* db_ = nullptr;
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
};

}  // namespace

double StoreStatementBudgetS() {
  static const double budget = [] {
    const char* v = std::getenv("VOUCH_STORE_STATEMENT_BUDGET_S");
    if (!v || !*v) return kStoreStatementBudgetS;
    auto d = ParseFiniteDouble(v, "");
    return d && *d > 0 && *d <= 86400 ? *d : kStoreStatementBudgetS;
  }();
  return budget;
}

Result<std::unique_ptr<SqlDb>> OpenSqliteDb(const std::string& path, bool read_only) {
  auto db = std::make_unique<SqliteDb>(path, read_only);
  if (auto s = db->Open(); !s) return s.error();
  return std::unique_ptr<SqlDb>(std::move(db));
}

}  // namespace vouch
