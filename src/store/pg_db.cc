// The team engine of the history store: PostgreSQL through libpq. The statements are the
// SQLite ones; '?' placeholders become $1, $2, ... here, and results come back as text that
// is typed by the column's type.
#include <dlfcn.h>
#include <libpq-fe.h>

#include <cmath>
#include <limits>

#include "store/sql.h"
#include "util/number.h"

namespace vouch {
namespace {

// libpq is loaded at run time, as NVML is: the header gives the types, libpq.so.5 the code,
// and a vouch that never opens a PostgreSQL store never needs the library.
// Every libpq function vouch calls, once: the table below and the loader use this list.
// clang-format off
#define VOUCH_PQ_FUNCTIONS(X)                                                                \
  X(PQconnectdb) X(PQstatus) X(PQerrorMessage) X(PQfinish) X(PQsetNoticeProcessor)           \
  X(PQexecParams) X(PQresultStatus) X(PQresultErrorMessage) X(PQclear) X(PQcmdTuples)        \
  X(PQnfields) X(PQntuples) X(PQfname) X(PQftype) X(PQgetisnull) X(PQgetvalue) X(PQgetlength)
// clang-format on

struct Libpq {
#define VOUCH_PQ_FIELD(f) decltype(&::f) f = nullptr;
  VOUCH_PQ_FUNCTIONS(VOUCH_PQ_FIELD)
#undef VOUCH_PQ_FIELD
  std::string error;
};

const Libpq& Pq() {
  static const Libpq lib = [] {
    Libpq l;
    void* h = ::dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = ::dlerror();
      l.error = fmt::format(
          "a PostgreSQL store needs libpq (libpq.so.5), which cannot be loaded: {}; install it "
          "(Debian/Ubuntu: apt-get install libpq5)",
          e ? e : "not found");
      return l;
    }
#define VOUCH_PQ_LOAD(f)                                                         \
  l.f = reinterpret_cast<decltype(l.f)>(::dlsym(h, #f));                         \
  if (!l.f) {                                                                    \
    l.error = fmt::format("libpq.so.5 lacks {}: a libpq too old for vouch", #f); \
    return l;                                                                    \
  }
    VOUCH_PQ_FUNCTIONS(VOUCH_PQ_LOAD)
#undef VOUCH_PQ_LOAD
    return l;
  }();
  return lib;
}

// Type OIDs from PostgreSQL's catalog (pg_type.dat); stable across versions.
constexpr Oid kInt8 = 20, kInt2 = 21, kInt4 = 23, kFloat4 = 700, kFloat8 = 701, kNumeric = 1700;

std::string Numbered(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int n = 0;
  char quote = 0;
  for (char c : sql) {
    if (quote) {
      if (c == quote) quote = 0;
      out += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      out += c;
    } else if (c == '?') {
      out += fmt::format("${}", ++n);
    } else {
      out += c;
    }
  }
  return out;
}

class PgResult {
 public:
  explicit PgResult(PGresult* r) : r_(r) {}
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
  ~PgResult() { Pq().PQclear(r_); }
  PGresult* get() const { return r_; }

 private:
  PGresult* r_;
};

class PostgresDb final : public SqlDb {
 public:
  PostgresDb(const std::string& url, bool read_only)
      : url_(url), where_(RedactUrl(url)), read_only_(read_only) {}
  ~PostgresDb() override {
    if (conn_) Pq().PQfinish(conn_);
  }

  Status Open() {
    if (!Pq().error.empty()) return MakeError("history store {}: {}", where_, Pq().error);
    conn_ = Pq().PQconnectdb(url_.c_str());
    if (!conn_) return MakeError("history store {}: out of memory connecting", where_);
    if (Pq().PQstatus(conn_) != CONNECTION_OK) {
      std::string m = Pq().PQerrorMessage(conn_);
      while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
      return MakeError(
          "history store {}: cannot connect: {} (is the server running, and does the URL name "
          "its host, port, user and database?)",
          where_, m);
    }
    // CREATE ... IF NOT EXISTS answers with NOTICEs that libpq would print on stderr.
    Pq().PQsetNoticeProcessor(
        conn_, [](void*, const char*) {}, nullptr);
    // The statement budget (sql.h), and a read that cannot write.
    const auto ms = static_cast<long long>(std::ceil(StoreStatementBudgetS() * 1000));
    if (auto r = Run(fmt::format("SET statement_timeout = {}", ms), {}); !r) return r.error();
    if (read_only_)
      if (auto r = Run("SET default_transaction_read_only = on", {}); !r) return r.error();
    // vouch's tables are plain tables with plain columns: a view in their place, or a
    // GENERATED column, computes what a read returns. (Only tables of the store's names in the
    // connection's schema are looked at; a store not created yet has none.)
    const std::string ours =
        "table_schema = current_schema() AND table_name IN ('schema_version', 'runs', 'legs', "
        "'windows', 'metrics', 'summaries', 'ab_verdicts', 'gates', 'baselines')";
    auto odd = Run("SELECT 'view', table_name, '' FROM information_schema.views WHERE " + ours +
                       " UNION ALL SELECT 'generated column', column_name, table_name FROM "
                       "information_schema.columns WHERE " +
                       ours + " AND is_generated <> 'NEVER' LIMIT 1",
                   {});
    if (!odd) return odd.error();
    if (Pq().PQntuples((*odd)->get()) > 0) {
      PGresult* r = (*odd)->get();
      const std::string table = Pq().PQgetvalue(r, 0, 2);
      return MakeError(
          "history store {}: it holds a {} named '{}'{}, and a vouch store has plain tables and "
          "columns only: not a vouch store, or a tampered one; refused",
          where_, Pq().PQgetvalue(r, 0, 0), Pq().PQgetvalue(r, 0, 1),
          table.empty() ? "" : fmt::format(" of table '{}'", table));
    }
    return OkStatus();
  }

  std::string_view Engine() const override { return "postgresql"; }
  const std::string& Where() const override { return where_; }
  std::size_t MaxParams() const override { return 65535; }

  Result<std::int64_t> Exec(std::string_view sql, const std::vector<SqlValue>& params) override {
    auto r = Run(sql, params);
    if (!r) return r.error();
    const char* n = Pq().PQcmdTuples((*r)->get());
    if (!n || !*n) return std::int64_t{0};
    return ParseInt64(n, fmt::format("{}: the server's row count", where_));
  }

  Result<SqlRows> Query(std::string_view sql, const std::vector<SqlValue>& params) override {
    auto r = Run(sql, params);
    if (!r) return r.error();
    PGresult* res = (*r)->get();
    SqlRows out;
    int nf = Pq().PQnfields(res), nt = Pq().PQntuples(res);
    std::vector<Oid> types;
    for (int i = 0; i < nf; ++i) {
      out.columns.emplace_back(Pq().PQfname(res, i));
      types.push_back(Pq().PQftype(res, i));
    }
    out.rows.reserve(static_cast<size_t>(nt));
    for (int t = 0; t < nt; ++t) {
      std::vector<SqlValue> row;
      row.reserve(static_cast<size_t>(nf));
      for (int i = 0; i < nf; ++i) {
        if (Pq().PQgetisnull(res, t, i)) {
          row.emplace_back(std::monostate{});
          continue;
        }
        std::string text(Pq().PQgetvalue(res, t, i),
                         static_cast<size_t>(Pq().PQgetlength(res, t, i)));
        Oid ty = types[static_cast<size_t>(i)];
        if (ty == kInt8 || ty == kInt4 || ty == kInt2)
          row.emplace_back(AsInt(SqlValue(text)));
        else if (ty == kFloat8 || ty == kFloat4 || ty == kNumeric)
          row.emplace_back(ParseReal(text));
        else
          row.emplace_back(std::move(text));
      }
      out.rows.push_back(std::move(row));
    }
    return out;
  }

  Status Begin() override { return Simple("BEGIN"); }
  Status Commit() override { return Simple("COMMIT"); }
  void Rollback() override { (void)Simple("ROLLBACK"); }
  Status LockSchema() override {
    // One fixed key ("vouch" in ASCII) for every process migrating this database.
    auto r = Run("SELECT pg_advisory_xact_lock(431466227560)", {});
    if (!r) return r.error();
    return OkStatus();
  }

 private:
  static double ParseReal(const std::string& t) {
    if (t == "Infinity") return std::numeric_limits<double>::infinity();
    if (t == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (t == "NaN") return std::numeric_limits<double>::quiet_NaN();
    return AsReal(SqlValue(t));
  }

  Status Simple(const char* sql) {
    auto r = Run(sql, {});
    if (!r) return r.error();
    return OkStatus();
  }

  Result<std::unique_ptr<PgResult>> Run(std::string_view sql, const std::vector<SqlValue>& params) {
    std::string text = Numbered(sql);
    std::vector<std::string> owned;
    owned.reserve(params.size());
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const auto& p : params) {
      if (IsNull(p)) {
        values.push_back(nullptr);
        continue;
      }
      owned.push_back(AsText(p));
      values.push_back(owned.back().c_str());
    }
    auto r = std::make_unique<PgResult>(Pq().PQexecParams(conn_, text.c_str(),
                                                          static_cast<int>(values.size()), nullptr,
                                                          values.data(), nullptr, nullptr, 0));
    ExecStatusType st = r->get() ? Pq().PQresultStatus(r->get()) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      std::string m = r->get() ? Pq().PQresultErrorMessage(r->get()) : Pq().PQerrorMessage(conn_);
      while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
      if (m.empty()) m = Pq().PQerrorMessage(conn_);
      std::string head(sql.substr(0, 60));
      if (m.find("statement timeout") != std::string::npos)
        return MakeError(
            "history store {}: a statement ran past the store's statement budget of {} s and "
            "was stopped (in '{}{}'): a store this slow to read is damaged or not vouch's "
            "(VOUCH_STORE_STATEMENT_BUDGET_S sets the budget)",
            where_, StoreStatementBudgetS(), head, sql.size() > 60 ? "..." : "");
      return MakeError("history store {}: {} (in '{}{}')", where_, m, head,
                       sql.size() > 60 ? "..." : "");
    }
    return r;
  }

  std::string url_, where_;
  bool read_only_ = false;
  PGconn* conn_ = nullptr;
};

}  // namespace

Result<std::unique_ptr<SqlDb>> OpenPostgresDb(const std::string& url, bool read_only) {
  auto db = std::make_unique<PostgresDb>(url, read_only);
  if (auto s = db->Open(); !s) return s.error();
  return std::unique_ptr<SqlDb>(std::move(db));
}

}  // namespace vouch
