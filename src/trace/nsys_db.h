// The connection to one Nsight Systems SQLite export that the nsys reader (nsys_reader.cc) reads
// its tables through: the checked file, the instruction budget, the column checks and the row
// loops of each table. Internal to src/trace.
// Schema: the Nsight Systems "SQLite Export Schema Reference" (docs.nvidia.com,
// nsys-exporter/exported_data.html). Times are nanoseconds; names are StringIds ids;
// globalTid/globalPid serialise pid and tid as (pid << 24) | tid (with a high hardware id).
#pragma once

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/model.h"
#include "trace/nsys_reader.h"
#include "trace/reserve_events.h"
#include "trace/sqlite_fd.h"
#include "trace/whole_fold.h"
#include "trace/window_fold.h"
#include "util/bounded_file.h"

namespace vouch::trace::nsys_detail {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StmtCloser {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;
using Stmt = std::unique_ptr<sqlite3_stmt, StmtCloser>;

inline std::int64_t PidOf(std::int64_t global) { return (global >> 24) & 0xFFFFFF; }
inline std::int64_t TidOf(std::int64_t global) { return global & 0xFFFFFF; }

// The handler counts SQLite instructions against NsysLimits' budget (a row of ~100 bytes is
// ~12 instructions), called every 1 % of the budget, at most every 100,000 instructions (~8,000
// rows) and at least every 1,000: the checks cost nothing measurable (1 M rows through
// sqlite3_step: 4.7-4.9 M rows/s with or without it), and a statement over budget stops within
// 1 % of it.
inline constexpr std::uint64_t kProgressMost = 100000, kProgressLeast = 1000;

class Reader {
 public:
  // With FOLD, the GPU ops and API calls go to it instead of T.
  Reader(std::string path, const NsysLimits& limits, Trace* t, WholeFold* fold = nullptr)
      : path_(std::move(path)), limits_(limits), t_(t), fold_(fold), names_(&t->names) {}

  Status Open() {
    // Only a regular file of bounded size (SQLite would wait on a FIFO, read /dev/zero).
    // A second connection reads the file the first one checked (ReadTheFileOf).
    if (!checked_) {
      auto f = BoundedFile::Open(path_, kMaxTraceFileBytes);
      if (!f) return f.error();
      file_.emplace(std::move(*f));
      checked_ = &*file_;
    }
    budget_ = limits_.budget_fixed + limits_.budget_per_byte * checked_->size();
    sqlite3* raw = nullptr;
    // SQLite reads the checked descriptor, never the path again (a FIFO swapped in by then
    // would hang its open): read-only and immutable, an export being a finished file (no
    // locks, no journal or WAL beside it). One thread reads: no mutexes (they were 10 % of the
    // time).
    int rc = OpenSqliteOnDescriptor(checked_->fd(), &raw, SQLITE_OPEN_NOMUTEX);
    db_.reset(raw);
    if (rc != SQLITE_OK)
      return MakeError("{}: cannot open as SQLite: {}", path_,
                       raw ? sqlite3_errmsg(raw) : "out of memory");
    // The file is hostile: its schema may not run functions with side effects nor views, no
    // value may be larger than 256 MiB, and every statement runs under one instruction budget
    // (a kernel "table" that was a recursive VIEW ran for ever).
    sqlite3_db_config(db_.get(), SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_db_config(db_.get(), SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
    sqlite3_db_config(db_.get(), SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
    sqlite3_limit(db_.get(), SQLITE_LIMIT_LENGTH, 256 << 20);
    progress_every_ = std::clamp<std::uint64_t>(budget_ / 100, kProgressLeast, kProgressMost);
    sqlite3_progress_handler(db_.get(), static_cast<int>(progress_every_), &Reader::Progress, this);
    // The pages come through SQLite's page cache at its default size (~2 MB), read a chunk at
    // a time (sqlite_fd.h: never mapped). Every table is read once, in order: a 64 MB cache
    // only added fresh pages to fault in (0.11 s against 0.07 s for 400 k + 400 k rows; 5 M +
    // 5 M: medians 1.28 s against 0.90 s, peak RSS 320 MB against 228 MB).
    // Reading the table list is the first real read: a non-SQLite file fails here.
    auto tables = Query("SELECT name, type, coalesce(sql, ''), rootpage FROM sqlite_master");
    if (!tables.ok())
      return MakeError(
          "{}: not an SQLite database ({}); expected `nsys export --type sqlite` output", path_,
          tables.error().message);
    while (Step(tables->get())) {
      auto text = [&](int c) {
        const unsigned char* v = sqlite3_column_text(tables->get(), c);
        return std::string(v ? reinterpret_cast<const char*>(v) : "");
      };
      std::string name = text(0), type = text(1), sql = text(2);
      // Plain tables only: a view or a virtual table runs code of the file's choosing.
      const bool stored = sqlite3_column_int64(tables->get(), 3) > 0;  // a virtual one is 0
      if (type == "table" && stored && !IsVirtualTableSql(sql))
        tables_.insert(name);
      else if (type != "index")
        not_tables_[name] = type == "table" ? "a virtual table" : "a " + type;
    }
    return StepError();
  }

  // Makes Open() read the file MAIN opened and checked, whatever its path names by now
  // (MAIN opened first and outlives this reader).
  void ReadTheFileOf(const Reader& main) { checked_ = main.checked_; }

  // A table vouch reads that the file holds as something else (a view, a virtual table) is
  // refused: an nsys export holds tables.
  Status RefuseNonTable(const std::string& name) const {
    auto it = not_tables_.find(name);
    if (it == not_tables_.end()) return OkStatus();
    return MakeError(
        "{}: {} is {}, not a table: vouch reads the tables of an nsys export only (not an nsys "
        "export, or a hostile one)",
        path_, name, it->second);
  }

  // When the instruction budget ran out, the error that says so (whatever failed after it).
  std::optional<Error> BudgetError() const {
    if (!over_budget_) return std::nullopt;
    return Error{fmt::format(
        "{}: reading it took more than {} SQLite instructions (the bound for a file of its "
        "size): not an nsys export, or a hostile one (a recursive query?)",
        path_, budget_)};
  }

  bool Has(const std::string& table) const { return tables_.count(table) > 0; }

  // Count this reader's SQLite instructions against OTHER's budget: two connections reading
  // one file in two threads get the one budget a single connection would (before Open).
  void ShareBudgetWith(Reader& other) { spent_ = other.spent_; }

  // Column COL of the current row of S as a time in ns: an INTEGER inside +-2^62 ns, else an
  // error naming the file, table, row and column (a TEXT or REAL time was read as 0 or
  // clamped before, and a 1e300 end printed negative kernel times).
  // The value is read through sqlite3_column_value: one column call for its type and value
  // (two calls, sqlite3_column_type and sqlite3_column_int64, were ~10 % of a read).
  Status Time(sqlite3_stmt* s, int col, const std::string& table, const char* name,
              std::int64_t* ns) {
    sqlite3_value* v = sqlite3_column_value(s, col);
    if (sqlite3_value_type(v) == SQLITE_INTEGER) {
      *ns = sqlite3_value_int64(v);
      if (TimeInRange(*ns)) [[likely]]
        return OkStatus();
    }
    return TimeError(s, col, table, name, *ns);
  }
  Status TimeError(sqlite3_stmt* s, int col, const std::string& table, const char* name,
                   std::int64_t ns) {
    int type = sqlite3_column_type(s, col);
    if (type == SQLITE_INTEGER) {
      return MakeError("{}: table {} row {}: '{}' = {} ns is out of range (beyond +-2^62 ns)",
                       path_, table, RowId(s), name, ns);
    }
    const char* what = type == SQLITE_TEXT    ? "TEXT"
                       : type == SQLITE_FLOAT ? "REAL"
                       : type == SQLITE_NULL  ? "NULL"
                                              : "a BLOB";
    std::string value =
        type == SQLITE_NULL || type == SQLITE_BLOB
            ? std::string()
            : fmt::format(" '{}'", reinterpret_cast<const char*>(sqlite3_column_text(s, col)));
    return MakeError(
        "{}: table {} row {}: '{}' is {}{}, not an integer time in ns; not an nsys export, or a "
        "corrupt one",
        path_, table, RowId(s), name, what, value);
  }
  // The rowid, always the last column of the row queries.
  static std::int64_t RowId(sqlite3_stmt* s) {
    return sqlite3_column_int64(s, sqlite3_column_count(s) - 1);
  }
  // About the rows of TABLE, to reserve once instead of doubling (page faults were 10 % of the
  // time): its rowid span, two b-tree lookups (nsys numbers rows 1..n), where COUNT(*) read
  // every page of the table once more (without a mapping, each page read twice). A hostile
  // span reserves at most 4x the file's size, what reading rows of 16 bytes would take anyway.
  std::size_t RowEstimate(const std::string& table, std::size_t bytes_per_row) {
    std::int64_t ends[2] = {0, -1};
    int i = 0;
    for (const char* f : {"min", "max"}) {
      auto st = Query(fmt::format("SELECT {}(_rowid_) FROM {}", f, table));
      if (!st.ok() || !Step(st->get())) return 0;
      ends[i++] = sqlite3_column_int64(st->get(), 0);
    }
    if (ends[1] < ends[0]) return 0;  // an empty table's NULLs read as 0 and 0: one row
    const std::uint64_t span =
        static_cast<std::uint64_t>(ends[1]) - static_cast<std::uint64_t>(ends[0]) + 1;
    const std::uint64_t most = 4 * checked_->size() / std::max<std::size_t>(bytes_per_row, 1);
    return static_cast<std::size_t>(std::min<std::uint64_t>({span, most, std::uint64_t{1} << 32}));
  }
  // Rows of TABLE, counted (a small table).
  std::size_t RowCount(const std::string& table) {
    auto st = Query("SELECT COUNT(*) FROM " + table);
    if (!st.ok() || !Step(st->get())) return 0;
    std::int64_t n = sqlite3_column_int64(st->get(), 0);
    return n > 0 && n < (std::int64_t{1} << 32) ? static_cast<std::size_t>(n) : 0;
  }

  std::set<std::string> Columns(const std::string& table) {
    std::set<std::string> cols;
    auto st = Query("PRAGMA table_info(" + table + ")");
    if (!st.ok()) return cols;
    while (Step(st->get()))
      cols.insert(reinterpret_cast<const char*>(sqlite3_column_text(st->get(), 1)));
    return cols;
  }

  Status Strings() {
    if (!Has("StringIds")) return OkStatus();
    auto cols = Columns("StringIds");
    if (!cols.count("id") || !cols.count("value"))
      return MakeError("{}: table StringIds lacks id/value columns", path_);
    // Ids are small and dense in an export (0, 1, 2, ...): those below a bound set by the
    // table's size are looked up in a vector (a hash lookup per row was ~5 % of a read).
    const std::size_t rows = RowCount("StringIds");
    const std::int64_t dense = static_cast<std::int64_t>(std::min<std::size_t>(
        kMaxDenseStringIds, rows > kMaxDenseStringIds / 4 ? kMaxDenseStringIds : 4 * rows + 1024));
    auto st = Query("SELECT id, value FROM StringIds");
    if (!st.ok()) return st.error();
    while (Step(st->get())) {
      const unsigned char* v = sqlite3_column_text(st->get(), 1);
      const std::int64_t id = sqlite3_column_int64(st->get(), 0);
      const std::uint32_t name = names_.Intern(v ? reinterpret_cast<const char*>(v) : "");
      if (id >= 0 && id < dense) {
        if (dense_strings_.size() <= static_cast<std::size_t>(id))
          dense_strings_.resize(static_cast<std::size_t>(id) + 1, kNoName);
        dense_strings_[static_cast<std::size_t>(id)] = name;
      } else {
        strings_[id] = name;
      }
    }
    return StepError();
  }

  std::uint32_t NameOf(std::int64_t id) {
    const std::uint32_t name = FindName(id);
    return name != kNoName ? name : names_.Intern("(string " + std::to_string(id) + ")");
  }
  // The name of string ID, kNoName where StringIds has none.
  std::uint32_t FindName(std::int64_t id) const {
    if (id >= 0 && static_cast<std::uint64_t>(id) < dense_strings_.size())
      return dense_strings_[static_cast<std::size_t>(id)];
    if (auto it = strings_.find(id); it != strings_.end()) return it->second;
    return kNoName;
  }

  // With a window fold, AGAIN gives the kernels to WindowFold::KernelAgain (a second read of a
  // kernel table: its skipped rows are not counted twice).
  Status GpuTable(const std::string& table, GpuOpKind kind, bool again = false) {
    if (!Has(table)) return OkStatus();
    auto cols = Columns(table);
    for (const char* need : {"start", "end"})
      if (!cols.count(need))
        return MakeError("{}: table {} has no '{}' column; is this an nsys SQLite export?", path_,
                         table, need);
    auto col = [&](const char* c, const char* fallback) {
      return cols.count(c) ? std::string(c) : std::string(fallback);
    };
    std::string name = "NULL";
    if (kind == GpuOpKind::kKernel) {
      // Prefer the demangled name (what Kineto and ncu show), then the short name.
      name = cols.count("demangledName") ? "demangledName"
             : cols.count("shortName")   ? "shortName"
                                         : "NULL";
    }
    // Folded, only the columns the whole-trace summary reads (a kernel's 9 column reads were
    // most of SQLite's time): start, end, name, bytes, then the rowid.
    const std::string tail = name + ", " +
                             (kind == GpuOpKind::kKernel ? std::string("0") : col("bytes", "0")) +
                             ", _rowid_ FROM " + table;
    // A window's fold also reads the correlation and the process.
    const std::string launcher = col("correlationId", "-1") + ", " + col("globalPid", "-1") + ", ";
    const std::string sql = fold_     ? "SELECT start, end, " + tail
                            : window_ ? "SELECT start, end, " + launcher + tail
                                      : "SELECT start, end, " + col("deviceId", "-1") + ", " +
                                            col("streamId", "-1") + ", " + launcher + tail;
    const int name_col = fold_ ? 2 : window_ ? 4 : 6;
    if (fold_ && kind == GpuOpKind::kKernel) {
      const std::size_t rows = RowEstimate(table, sizeof(GpuOp));
      ReserveEvents(&fold_->kernels, rows);
      ReserveEvents(&fold_->kernel_names, rows);
    } else if (!fold_ && !window_) {
      ReserveEvents(&t_->ops, RowEstimate(table, sizeof(GpuOp)));
    }
    auto st = Query(sql);
    if (!st.ok()) return st.error();
    std::uint32_t copy_name = names_.Intern(kind == GpuOpKind::kMemcpy ? "Memcpy" : "Memset");
    sqlite3_stmt* s = st->get();
    while (Step(s)) {
      GpuOp op;
      op.kind = kind;
      if (auto e = Time(s, 0, table, "start", &op.start_ns); !e.ok()) return e;
      if (auto e = Time(s, 1, table, "end", &op.end_ns); !e.ok()) return e;
      if (!fold_) {  // the whole-trace summary needs none of these, a window's fold two
        const int at = window_ ? 2 : 4;
        if (!window_) {
          op.device = static_cast<std::int32_t>(sqlite3_column_int64(s, 2));
          op.stream = sqlite3_column_int64(s, 3);
        }
        op.correlation = sqlite3_column_int64(s, at);
        std::int64_t gpid = sqlite3_column_int64(s, at + 1);
        op.pid = gpid >= 0 ? static_cast<std::int32_t>(PidOf(gpid)) : -1;
      }
      if (kind == GpuOpKind::kKernel) {
        sqlite3_value* name_value = sqlite3_column_value(s, name_col);
        op.name_id = sqlite3_value_type(name_value) != SQLITE_NULL
                         ? NameOf(sqlite3_value_int64(name_value))
                         : copy_name;
      } else {
        op.name_id = copy_name;
      }
      if (kind != GpuOpKind::kKernel)  // a kernel's column 7 is the constant 0
        op.bytes = static_cast<std::uint64_t>(
            std::max<std::int64_t>(0, sqlite3_column_int64(s, name_col + 1)));
      if (op.end_ns < op.start_ns) {
        if (!again) ++t_->skipped_by_category[table + " (end before start)"];
        continue;
      }
      if (fold_)
        fold_->Op(kind, op.start_ns, op.end_ns, op.name_id, op.bytes);
      else if (again)
        window_->KernelAgain(op.start_ns, op.end_ns, op.correlation, op.pid);
      else if (window_)
        window_->Op(kind, op.start_ns, op.end_ns, op.correlation, op.pid, op.name_id, op.bytes);
      else
        t_->ops.push_back(op);
    }
    return StepError();
  }

  Status Runtime(const std::string& table, ApiKind kind) {
    if (!Has(table)) return OkStatus();
    auto cols = Columns(table);
    for (const char* need : {"start", "end", "globalTid", "correlationId", "nameId"})
      if (!cols.count(need))
        return MakeError("{}: table {} has no '{}' column", path_, table, need);
    if (fold_)  // untouched where not launches
      ReserveEvents(&fold_->launches, RowEstimate(table, sizeof(fold_->launches[0])));
    else if (window_)
      window_->ReserveCalls(RowEstimate(table, 12));
    else
      ReserveEvents(&t_->api, RowEstimate(table, sizeof(ApiCall)));
    auto st =
        Query(fold_ ? "SELECT start, end, nameId, _rowid_ FROM " + table
                    : "SELECT start, end, globalTid, correlationId, nameId, _rowid_ FROM " + table);
    const int name_col = fold_ ? 2 : 4;
    if (!st.ok()) return st.error();
    sqlite3_stmt* s = st->get();
    // Whether each name (by name id, dense) launches GPU work: 0 no, 1 yes, -1 not known yet.
    std::vector<std::int8_t> launch;
    while (Step(s)) {
      ApiCall a;
      a.kind = kind;
      if (auto e = Time(s, 0, table, "start", &a.start_ns); !e.ok()) return e;
      if (auto e = Time(s, 1, table, "end", &a.end_ns); !e.ok()) return e;
      if (!fold_) {  // the whole-trace summary needs neither
        std::int64_t g = sqlite3_column_int64(s, 2);
        a.pid = PidOf(g);
        a.tid = TidOf(g);
        a.correlation = sqlite3_column_int64(s, 3);
      }
      // A window's fold interns no name for an unknown id (the kernels' names that come after
      // keep the ids they have in the trace read whole); "(string N)" launches nothing.
      const std::int64_t name = sqlite3_column_int64(s, name_col);
      a.name_id = window_ ? FindName(name) : NameOf(name);
      if (a.name_id != kNoName) {
        if (a.name_id >= launch.size()) launch.resize(std::size_t{a.name_id} + 1, -1);
        std::int8_t& is_launch = launch[a.name_id];
        if (is_launch < 0) is_launch = IsLaunchApi(t_->Name(a.name_id)) ? 1 : 0;
        a.is_launch = is_launch == 1;
      }
      if (fold_)
        fold_->Api(a.start_ns, a.end_ns, a.is_launch);
      else if (window_)
        window_->Call(a.start_ns, a.end_ns, a.pid, a.tid, a.correlation, a.is_launch);
      else
        t_->api.push_back(a);
    }
    return StepError();
  }

  // With SIDE, the ranges' names are interned there instead (AdoptRangeNames moves them): a
  // window's fold reads the ranges first and the kernels' names must keep their ids.
  Status Nvtx(NameTable* side = nullptr) {
    NameTable& names = side ? *side : names_;
    if (!Has("NVTX_EVENTS")) return OkStatus();
    auto cols = Columns("NVTX_EVENTS");
    for (const char* need : {"start", "end", "globalTid"})
      if (!cols.count(need))
        return MakeError("{}: table NVTX_EVENTS has no '{}' column", path_, need);
    std::string text = cols.count("text") ? "text" : "NULL";
    std::string text_id = cols.count("textId") ? "textId" : "NULL";
    std::string type = cols.count("eventType") ? "eventType" : "59";
    auto st = Query("SELECT start, end, globalTid, " + text + ", " + text_id + ", " + type +
                    ", _rowid_ FROM NVTX_EVENTS");
    if (!st.ok()) return st.error();
    sqlite3_stmt* s = st->get();
    while (Step(s)) {
      std::int64_t event_type = sqlite3_column_int64(s, 5);
      // 59 push/pop range, 60 start/end range; marks (34) and others have no extent.
      if (event_type != 59 && event_type != 60) {
        ++t_->skipped_by_category["NVTX_EVENTS (not a range)"];
        continue;
      }
      if (sqlite3_column_type(s, 1) == SQLITE_NULL) {
        ++t_->skipped_by_category["NVTX_EVENTS (range never closed)"];
        continue;
      }
      Range r;
      r.kind = RangeKind::kCpu;
      if (auto e = Time(s, 0, "NVTX_EVENTS", "start", &r.start_ns); !e.ok()) return e;
      if (auto e = Time(s, 1, "NVTX_EVENTS", "end", &r.end_ns); !e.ok()) return e;
      std::int64_t g = sqlite3_column_int64(s, 2);
      r.pid = PidOf(g);
      r.tid = TidOf(g);
      if (sqlite3_column_type(s, 3) != SQLITE_NULL) {
        r.name_id = names.Intern(reinterpret_cast<const char*>(sqlite3_column_text(s, 3)));
      } else if (sqlite3_column_type(s, 4) != SQLITE_NULL) {
        const std::int64_t id = sqlite3_column_int64(s, 4);
        const std::uint32_t name = FindName(id);
        r.name_id = !side             ? NameOf(id)
                    : name != kNoName ? side->Intern(t_->Name(name))
                                      : side->Intern("(string " + std::to_string(id) + ")");
      } else {
        r.name_id = names.Intern("(unnamed range)");
      }
      t_->ranges.push_back(r);
    }
    return StepError();
  }

  // The ranges' names, read into SIDE_NAMES (Nvtx(SIDE)), interned here in the ranges' order.
  void AdoptRangeNames(const std::vector<std::string>& side_names) {
    for (auto& r : t_->ranges) r.name_id = names_.Intern(side_names[r.name_id]);
  }

  // Gives the GPU ops and API calls to FOLD (before the first table).
  void FoldWindow(WindowFold* fold) { window_ = fold; }

  void Gpus() {
    if (!Has("TARGET_INFO_GPU")) return;
    auto cols = Columns("TARGET_INFO_GPU");
    if (!cols.count("name")) return;
    std::string id = cols.count("id") ? "id" : cols.count("cuDevice") ? "cuDevice" : "rowid";
    auto st = Query("SELECT " + id + ", name FROM TARGET_INFO_GPU");
    if (!st.ok()) return;
    while (Step(st->get())) {
      std::int64_t i = sqlite3_column_int64(st->get(), 0);
      const unsigned char* n = sqlite3_column_text(st->get(), 1);
      if (i < 0 || i > 4096 || !n) continue;
      if (t_->devices.size() <= static_cast<std::size_t>(i))
        t_->devices.resize(static_cast<std::size_t>(i) + 1);
      t_->devices[static_cast<std::size_t>(i)] = reinterpret_cast<const char*>(n);
    }
  }

 private:
  Result<Stmt> Query(const std::string& sql) {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_.get(), sql.c_str(), -1, &raw, nullptr) != SQLITE_OK)
      return MakeError("{}: SQLite error: {} (in: {})", path_, sqlite3_errmsg(db_.get()), sql);
    step_rc_ = SQLITE_DONE;
    return Stmt(raw);
  }
  bool Step(sqlite3_stmt* s) {
    step_rc_ = sqlite3_step(s);
    return step_rc_ == SQLITE_ROW;
  }
  Status StepError() {
    if (step_rc_ != SQLITE_DONE && step_rc_ != SQLITE_ROW)
      return MakeError("{}: SQLite error while reading: {}; the file may be truncated or corrupt",
                       path_, sqlite3_errmsg(db_.get()));
    return OkStatus();
  }

  static int Progress(void* self) {
    auto* r = static_cast<Reader*>(self);
    const std::uint64_t spent =
        r->spent_->fetch_add(r->progress_every_, std::memory_order_relaxed) + r->progress_every_;
    if (spent <= r->budget_) return 0;
    r->over_budget_ = true;
    return 1;  // interrupts the statement
  }

  std::string path_;
  NsysLimits limits_;
  std::uint64_t budget_ = 0;
  // Instructions spent, shared by the readers of one file (ShareBudgetWith).
  std::atomic<std::uint64_t> own_spent_{0};
  std::atomic<std::uint64_t>* spent_ = &own_spent_;
  std::uint64_t progress_every_ = kProgressLeast;  // instructions between two handler calls
  bool over_budget_ = false;
  std::map<std::string, std::string> not_tables_;  // name -> what it is instead
  Trace* t_;
  WholeFold* fold_;
  WindowFold* window_ = nullptr;
  NameTable names_;
  std::optional<BoundedFile> file_;       // the file this reader opened and checked
  const BoundedFile* checked_ = nullptr;  // the one it reads: its own, or another reader's
  Db db_;
  std::set<std::string> tables_;
  // StringIds: ids below dense_strings_.size() by index (kNoName: none), others by hash.
  static constexpr std::uint32_t kNoName = UINT32_MAX;
  static constexpr std::size_t kMaxDenseStringIds = std::size_t{1} << 24;
  std::vector<std::uint32_t> dense_strings_;
  std::unordered_map<std::int64_t, std::uint32_t> strings_;
  int step_rc_ = SQLITE_DONE;
};

}  // namespace vouch::trace::nsys_detail
