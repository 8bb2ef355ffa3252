// The one narrow interface the history store talks to: a SQL connection. Two engines sit
// behind it, embedded SQLite (the default, one file) and PostgreSQL through libpq (a team's
// shared store); the schema, the migrations and every query above it are the same text on
// both. Statements use '?' placeholders; the PostgreSQL side numbers them ($1, $2, ...).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "util/redact.h"  // RedactUrl: a store URL as vouch prints it
#include "util/result.h"

namespace vouch {

// A parameter or a result cell: NULL, an integer, a real or text.
using SqlValue = std::variant<std::monostate, std::int64_t, double, std::string>;

inline SqlValue SqlNull() { return std::monostate{}; }
template <class T>
SqlValue SqlOpt(const std::optional<T>& v) {
  if (!v) return std::monostate{};
  if constexpr (std::is_integral_v<T>)
    return static_cast<std::int64_t>(*v);
  else
    return *v;
}

bool IsNull(const SqlValue& v);
std::int64_t AsInt(const SqlValue& v);  // NULL and unparsable text are 0
double AsReal(const SqlValue& v);       // NULL and unparsable text are 0
std::string AsText(const SqlValue& v);  // NULL is ""
std::optional<double> AsOptReal(const SqlValue& v);

struct SqlRows {
  std::vector<std::string> columns;
  std::vector<std::vector<SqlValue>> rows;
};

class SqlDb {
 public:
  virtual ~SqlDb() = default;
  // "sqlite" or "postgresql".
  virtual std::string_view Engine() const = 0;
  // Where it is, for messages (a path, or the URL without its password).
  virtual const std::string& Where() const = 0;
  // Runs one statement; returns the number of rows it changed.
  virtual Result<std::int64_t> Exec(std::string_view sql,
                                    const std::vector<SqlValue>& params = {}) = 0;
  virtual Result<SqlRows> Query(std::string_view sql, const std::vector<SqlValue>& params = {}) = 0;
  // The rows one at a time, for a long result (a trend over 100,000 runs): ROW lives for the
  // call only (its strings may be moved out). An error FN returns stops the walk and is
  // returned. The default runs Query and walks its rows; SQLite steps the statement instead.
  using RowFn = std::function<Status(std::vector<SqlValue>& row)>;
  virtual Status QueryEach(std::string_view sql, const std::vector<SqlValue>& params,
                           const RowFn& fn);
  // A write transaction. SQLite takes the write lock at BEGIN (BEGIN IMMEDIATE, waiting up to
  // the busy timeout), so two writers queue instead of failing halfway.
  virtual Status Begin() = 0;
  virtual Status Commit() = 0;
  virtual void Rollback() = 0;
  // Inside a transaction: serialises schema changes between processes (PostgreSQL takes an
  // advisory transaction lock; SQLite's write lock already does it).
  virtual Status LockSchema() = 0;
  // The most '?' parameters one statement may carry.
  virtual std::size_t MaxParams() const = 0;
};

// Every statement of the store runs under one budget of wall time, on both engines (SQLite: a
// progress handler; PostgreSQL: statement_timeout): a store that makes a statement run on is
// refused by name, never waited on. VOUCH_STORE_STATEMENT_BUDGET_S (seconds, > 0) sets it.
inline constexpr double kStoreStatementBudgetS = 60;
double StoreStatementBudgetS();

// SQLite: WAL journal, a 30 s busy timeout, foreign keys on. Creates the file and its
// directory. READ_ONLY: opens the file read-only, creates nothing and changes nothing (its
// journal mode is left as it is). Either way a store holding a view, a trigger, a virtual
// table or a GENERATED column is refused.
Result<std::unique_ptr<SqlDb>> OpenSqliteDb(const std::string& path, bool read_only = false);
// PostgreSQL: URL is a libpq connection string (postgresql://user@host:port/db?...).
// READ_ONLY: every transaction of the session is read-only. A vouch table that is a view, or
// that has a GENERATED column, is refused.
Result<std::unique_ptr<SqlDb>> OpenPostgresDb(const std::string& url, bool read_only = false);

// Rolls back on scope exit unless committed.
class SqlTransaction {
 public:
  explicit SqlTransaction(SqlDb& db) : db_(db) {}
  SqlTransaction(const SqlTransaction&) = delete;
  SqlTransaction& operator=(const SqlTransaction&) = delete;
  ~SqlTransaction() {
    if (open_) db_.Rollback();
  }
  Status Begin() {
    auto s = db_.Begin();
    open_ = s.ok();
    return s;
  }
  Status Commit() {
    auto s = db_.Commit();
    if (s) open_ = false;
    return s;
  }

 private:
  SqlDb& db_;
  bool open_ = false;
};

}  // namespace vouch
