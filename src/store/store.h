// The history store: every record vouch wrote, kept across commits, on one schema that runs
// on SQLite (one file, the default) and on PostgreSQL (a team's server). It holds runs, legs,
// metrics with their samples, windows (clock state, verdict, the clock and power series),
// A/B verdicts, gates and baselines, each with commit, branch, dirty flag, host, GPU and boot.
//
// Ingestion is one transaction per record, keyed by the run's identity (host boot, start
// time, reproduce line): the same record twice is one row, a record rewritten since (more
// legs) replaces its earlier version, two writers at once queue (SQLite's write lock, busy
// timeout and WAL; PostgreSQL's INSERT ... ON CONFLICT), and an interrupted ingest leaves
// the store as it was before that record.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/sql.h"
#include "telemetry/sample.h"
#include "util/result.h"

namespace vouch {

// The store's own schema version (the migrations, store.cc), apart from the record schema.
int StoreSchemaVersion();

// Where the store is: --store, else VOUCH_STORE, else $XDG_DATA_HOME/vouch/history.sqlite,
// else $HOME/.local/share/vouch/history.sqlite. Empty FLAG means not given.
struct StoreLocation {
  std::string url;     // a path, or postgresql://...
  std::string origin;  // "--store", "VOUCH_STORE", "XDG_DATA_HOME", "HOME"
};
Result<StoreLocation> ResolveStore(const std::string& flag);
bool IsPostgresUrl(const std::string& url);

enum class IngestResult { kAdded, kUnchanged, kReplaced };
std::string_view IngestResultName(IngestResult r);  // "added" "unchanged" "replaced"

struct IngestOutcome {
  IngestResult result = IngestResult::kAdded;
  std::string run_key;
};

// A record read and turned into the rows the store keeps, not yet stored
// (Store::PrepareRecordDir): reading one is about half the work of adding it, and needs no
// store, so `history add` reads the next record while the store commits this one.
struct PreparedRecord {
  IngestOutcome out;              // run_key
  std::string source;             // where it was read from
  std::string content;            // sha256 of the stored document
  std::vector<SqlValue> run_row;  // runs, in its column order
  std::vector<std::vector<SqlValue>> legs, windows, metrics, summaries;
  std::optional<std::vector<SqlValue>> ab_verdict, baseline, gate;
};

struct RunFilter {
  std::string kind, gpu, host, branch, commit;
  int limit = 50;
};

struct RunRow {
  std::string run_key, kind, status, started, day;
  std::string commit, branch, host, boot_id, gpu_name, gpu_uuid;
  std::optional<bool> dirty;
  bool simulated = false;
  int measured_legs = 0, valid_legs = 0;
  std::optional<double> clock_sm_median_mhz;
  std::string source;
  std::string verdict;  // A/B verdict or gate outcome, when there is one
};

struct TrendQuery {
  std::string metric;
  std::string arm = "run";
  std::string gpu, host, branch;  // filters; empty: any (gpu matches name or UUID prefix)
  bool include_unattributed = false;
  bool include_simulated = true;
};

// One run's value of the metric: the median over its valid measured legs (attributed), or
// over its measured legs that had no valid window (unattributed, only when asked).
struct TrendPoint {
  std::string run_key, commit, branch, day, host, gpu_name, gpu_uuid, boot_id, unit, better;
  double started_unix_s = 0;
  double value = 0;
  int n = 0;
  bool attributed = true;
  bool dirty = false;
  std::optional<double> clock_sm_median_mhz;
};

// A trend point as the store walks it (Store::TrendEach): the text fields view the row being
// read and live for the call only.
struct TrendRow {
  std::string_view run_key, commit, branch, day, host, gpu_name, gpu_uuid, boot_id, unit, better;
  double started_unix_s = 0;
  double value = 0;
  int n = 0;
  bool attributed = true;
  bool dirty = false;
  std::optional<double> clock_sm_median_mhz;
};
TrendRow TrendRowOf(const TrendPoint& p);  // views of P's fields

// What an opening is for. Both check the store's schema version read-only (no transaction,
// no lock); only a write migrates a store that is behind, under the write lock. A read of a
// store nothing was written to sees no run; a read of an older schema is refused by name.
enum class StoreAccess { kRead, kWrite };

class Store {
 public:
  // Opens (creating a SQLite file and its directory where needed) and, for a write, migrates.
  static Result<std::unique_ptr<Store>> Open(const std::string& url,
                                             StoreAccess access = StoreAccess::kWrite);
  // Over an open connection; migrates up to UP_TO (tests stop early to test upgrades).
  static Result<std::unique_ptr<Store>> OpenDb(std::unique_ptr<SqlDb> db,
                                               int up_to = StoreSchemaVersion(),
                                               StoreAccess access = StoreAccess::kWrite);

  // Opened for a read, and nothing was ever written to it (no table yet).
  bool empty() const { return empty_; }
  SqlDb& db() { return *db_; }
  // The highest version in schema_version, checked: an integer in [0, INT_MAX], or an error
  // naming the store (2^32 + 2 is not version 2).
  Result<int> SchemaVersion();

  // Ingests one record document. SOURCE is where it came from (a directory) and, when it is
  // a directory, where each leg's samples are read from for the clock and power series.
  Result<IngestOutcome> AddRecord(const nlohmann::json& record, const std::string& source);
  // Reads DIR/record.json (the validated reader: a newer record schema is refused by name)
  // and ingests it.
  Result<IngestOutcome> AddRecordDir(const std::string& dir);
  // AddRecordDir in two halves: reading DIR into its rows (no store needed; safe on another
  // thread), and storing them in one transaction. The reading is PrepareRecordFast's where
  // it does not decline (FAST false: the ordinary reading's always; the same rows).
  static Result<PreparedRecord> PrepareRecordDir(const std::string& dir, bool fast = true);
  Result<IngestOutcome> AddPrepared(PreparedRecord&& record);
  // AddRecordDir of each of DIRS, in order, handing EACH the directory and its outcome: the
  // next directories are read on a second thread while this one is committed (the rows, the
  // order of the commits and the outcomes are those of AddRecordDir one after the other).
  using AddedFn = std::function<void(const std::string& dir, const Result<IngestOutcome>& r)>;
  // STOP, when given, is asked before each record is committed: true ends the adding there
  // (the records committed so far stay; `history add` interrupted by Ctrl-C).
  void AddRecordDirs(const std::vector<std::string>& dirs, const AddedFn& each,
                     const std::function<bool()>& stop = nullptr);
  // A gate judged against a stored (or just ingested) record: RUN_KEY's gate table.
  Status AddGate(const std::string& run_key, const nlohmann::json& gate_json,
                 const std::string& baseline_path);

  Result<std::vector<RunRow>> ListRuns(const RunFilter& filter);
  // A run by its key or a unique prefix of it (at least 6 characters).
  Result<std::string> ResolveRunKey(const std::string& prefix);
  // The stored record document, with each leg's window series under legs[i].series. It is
  // checked as a record.json is (ParseStoredRecord: schema, version, shape) and must be the
  // run of RUN_KEY; an error names the store and the row.
  Result<nlohmann::json> RunDocument(const std::string& run_key);
  // A value that is not a finite number where one is required (a median, a count) is an
  // error naming the store row, never a point at 0.
  Result<std::vector<TrendPoint>> Trend(const TrendQuery& q);
  // The points of Trend, in its order and with its checks, handed to FN one at a time without
  // being kept (a million points: no TrendPoint each). An error FN returns stops the walk.
  // With include_unattributed the points are gathered first (they are merged by start time).
  using TrendRowFn = std::function<Status(const TrendRow&)>;
  Status TrendEach(const TrendQuery& q, const TrendRowFn& fn);

 private:
  explicit Store(std::unique_ptr<SqlDb> db) : db_(std::move(db)) {}
  // SchemaVersion, or 0 where the version table is not there; read-only.
  Result<int> ReadVersion();
  Status Migrate(int up_to);
  // The attributed points of Trend (one summaries row each), in order.
  Status WalkTrend(const TrendQuery& q, const TrendRowFn& fn);
  static Result<PreparedRecord> PrepareGuarded(const nlohmann::json& record,
                                               const std::string& source, bool shape_checked);
  static Result<PreparedRecord> PrepareChecked(const nlohmann::json& record,
                                               const std::string& source, bool shape_checked);
  // The gates row of GATE (its ingested_unix_s left NULL), and its insert (at the time now).
  static std::vector<SqlValue> GateRow(const std::string& run_key, const nlohmann::json& gate,
                                       const std::string& baseline_path);
  Status InsertGate(std::vector<SqlValue> row);
  std::unique_ptr<SqlDb> db_;
  bool empty_ = false;  // opened for a read, and nothing was ever written to it
};

// The clock and power of one GPU over a leg, as a chart draws them: a point where any of them
// changed (NVML refreshes every 100 ms while vouch polls every 10 ms), at most 4000; times in
// seconds from T0_UNIX_S. {"t0_unix_s", "t_s": [], "sm_mhz": [], "power_w": [], "busy": []}.
nlohmann::json LegSeries(const std::vector<Sample>& samples, int gpu, double t0_unix_s);
// The same as its compact JSON text (DumpJson of LegSeries, byte for byte), without the tree.
std::string LegSeriesText(const std::vector<Sample>& samples, int gpu, double t0_unix_s);
// legs[i].series (one per GPU, as Store::RunDocument gives them) from DIR's samples files.
void AttachLegSeries(nlohmann::json& record, const std::string& dir);

// The rows of the record at RECORD_PATH (read from SOURCE, its run directory) without
// nlohmann's tree of it (store_fast.cc): byte for byte the ordinary reading's rows, or nullopt
// where that reading must decide (a journal, an error of any kind, anything not plain).
std::optional<PreparedRecord> PrepareRecordFast(const std::string& record_path,
                                                const std::string& source);
// The same of a record's TEXT (no journal beside it).
std::optional<PreparedRecord> PrepareRecordTextFast(std::string_view text,
                                                    const std::string& source);

// The run's identity: sha256 of host boot id, start time and reproduce line.
std::string RunKeyOf(const nlohmann::json& record);

}  // namespace vouch
