// The store's read side: runs listed and resolved, a run's stored document, trend points
// (store.h). The write side (records, gates) is store.cc.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "store/store.h"
#include "store/store_doc.h"
#include "util/json_io.h"
#include "util/median.h"

namespace vouch {

Result<std::vector<RunRow>> Store::ListRuns(const RunFilter& f) {
  std::string sql =
      "SELECT r.run_key, r.kind, r.status, r.started, r.day, r.commit_sha, r.branch, r.host, "
      "r.boot_id, r.gpu_name, r.gpu_uuid, r.dirty, r.simulated, r.measured_legs, r.valid_legs, "
      "r.clock_sm_median_mhz, r.source, a.verdict, (SELECT g.overall FROM gates g WHERE "
      "g.run_key = r.run_key ORDER BY g.ingested_unix_s DESC LIMIT 1) FROM runs r LEFT JOIN "
      "ab_verdicts a ON a.run_key = r.run_key WHERE 1 = 1";
  std::vector<SqlValue> p;
  auto add = [&](const std::string& v, const char* clause) {
    if (v.empty()) return;
    sql += clause;
    p.push_back(v);
  };
  add(f.kind, " AND r.kind = ?");
  add(f.host, " AND r.host = ?");
  add(f.branch, " AND r.branch = ?");
  if (!f.commit.empty()) {
    sql += " AND r.commit_sha LIKE ?";
    p.push_back(f.commit + "%");
  }
  if (!f.gpu.empty()) {
    sql += " AND (r.gpu_name = ? OR r.gpu_uuid LIKE ?)";
    p.push_back(f.gpu);
    p.push_back(f.gpu + "%");
  }
  sql += " ORDER BY r.started_unix_s DESC, r.run_key LIMIT ?";
  p.push_back(static_cast<std::int64_t>(std::max(1, f.limit)));
  if (empty_) return std::vector<RunRow>{};
  auto q = db_->Query(sql, p);
  if (!q) return q.error();
  std::vector<RunRow> out;
  for (const auto& r : q->rows) {
    RunRow x;
    x.run_key = AsText(r[0]);
    x.kind = AsText(r[1]);
    x.status = AsText(r[2]);
    x.started = AsText(r[3]);
    x.day = AsText(r[4]);
    x.commit = AsText(r[5]);
    x.branch = AsText(r[6]);
    x.host = AsText(r[7]);
    x.boot_id = AsText(r[8]);
    x.gpu_name = AsText(r[9]);
    x.gpu_uuid = AsText(r[10]);
    if (!IsNull(r[11])) x.dirty = AsInt(r[11]) != 0;
    x.simulated = AsInt(r[12]) != 0;
    const std::string row = fmt::format("history store {}: runs row {}", db_->Where(), x.run_key);
    auto measured = StoredInt(r[13], row + ": measured_legs");
    if (!measured) return measured.error();
    auto valid = StoredInt(r[14], row + ": valid_legs");
    if (!valid) return valid.error();
    auto clock = StoredOptReal(r[15], row + ": clock_sm_median_mhz");
    if (!clock) return clock.error();
    x.measured_legs = static_cast<int>(std::clamp<std::int64_t>(*measured, -1, 1000000000));
    x.valid_legs = static_cast<int>(std::clamp<std::int64_t>(*valid, -1, 1000000000));
    x.clock_sm_median_mhz = *clock;
    x.source = AsText(r[16]);
    x.verdict = !IsNull(r[17]) ? AsText(r[17]) : AsText(r[18]);
    out.push_back(std::move(x));
  }
  return out;
}

Result<std::string> Store::ResolveRunKey(const std::string& prefix) {
  if (prefix.size() < 6)
    return MakeError("run '{}': give at least 6 characters of the run key (vouch history list)",
                     prefix);
  for (char c : prefix)
    if (!std::isxdigit(static_cast<unsigned char>(c)))
      return MakeError("run '{}': a run key is hexadecimal (vouch history list shows them)",
                       prefix);
  if (empty_) return MakeError("run '{}': no such run in {}", prefix, db_->Where());
  auto q = db_->Query("SELECT run_key FROM runs WHERE run_key LIKE ? ORDER BY run_key LIMIT 2",
                      {prefix + "%"});
  if (!q) return q.error();
  if (q->rows.empty()) return MakeError("run '{}': no such run in {}", prefix, db_->Where());
  if (q->rows.size() > 1)
    return MakeError("run '{}' is ambiguous: {} and more; give more characters", prefix,
                     AsText(q->rows[1][0]));
  return AsText(q->rows[0][0]);
}

Result<nlohmann::json> Store::RunDocument(const std::string& run_key) {
  if (empty_) return MakeError("run {}: no such run in {}", run_key, db_->Where());
  auto q = db_->Query("SELECT record_json, source FROM runs WHERE run_key = ?", {run_key});
  if (!q) return q.error();
  if (q->rows.empty()) return MakeError("run {}: no such run in {}", run_key, db_->Where());
  // The same checks as a record.json read from its folder: schema, version and shape.
  const std::string where =
      fmt::format("history store {}: runs row {} (record_json)", db_->Where(), run_key);
  auto parsed = ParseStoredRecord(AsText(q->rows[0][0]), where);
  if (!parsed) return parsed.error();
  nlohmann::json& doc = *parsed;
  if (RunKeyOf(doc) != run_key)
    return MakeError(
        "{}: the document is the record of run {}, not of this row (the store was edited); "
        "nothing is read from it",
        where, RunKeyOf(doc));
  auto w = db_->Query(
      "SELECT leg_index, gpu, series_json FROM windows WHERE run_key = ? AND series_json IS NOT "
      "NULL ORDER BY leg_index, gpu",
      {run_key});
  if (!w) return w.error();
  // Every stored document passes its shape check before it is used (store_doc.h): a series
  // or gate of the wrong types, or nested too deep, is an error naming its row.
  std::map<std::int64_t, nlohmann::json> by_leg;
  for (const auto& r : w->rows) {
    auto s = ParseStoredSeries(AsText(r[2]),
                               fmt::format("history store {}: windows row (run {}, leg {}, GPU {}) "
                                           "(series_json)",
                                           db_->Where(), run_key, AsText(r[0]), AsText(r[1])));
    if (!s) return s.error();
    (*s)["gpu"] = AsInt(r[1]);
    by_leg[AsInt(r[0])].push_back(std::move(*s));
  }
  for (auto& l : doc["legs"]) {
    const auto index = l.find("index");
    auto it = by_leg.find(
        index != l.end() && index->is_number_integer() ? index->get<std::int64_t>() : -1);
    if (it != by_leg.end()) l["series"] = it->second;
  }
  auto g = db_->Query(
      "SELECT gate_json, baseline_path FROM gates WHERE run_key = ? ORDER BY ingested_unix_s",
      {run_key});
  if (!g) return g.error();
  nlohmann::json gates = nlohmann::json::array();
  for (const auto& r : g->rows) {
    auto j = ParseStoredGate(AsText(r[0]), fmt::format("history store {}: a gates row of run {} "
                                                       "(gate_json)",
                                                       db_->Where(), run_key));
    if (!j) return j.error();
    gates.push_back({{"gate", std::move(*j)}, {"baseline_path", AsText(r[1])}});
  }
  doc["stored"] = {{"run_key", run_key}, {"source", AsText(q->rows[0][1])}, {"gates", gates}};
  return std::move(doc);
}

namespace {

// The columns of runs a trend point carries, and the filters of a trend query (the same on
// the summaries walk and the unattributed metrics).
constexpr const char* kTrendRunColumns =
    "r.run_key, r.commit_sha, r.branch, r.day, r.host, r.gpu_name, r.gpu_uuid, r.boot_id, "
    "r.started_unix_s, r.dirty";

std::string TrendFilters(const TrendQuery& t, std::vector<SqlValue>* p) {
  std::string where;
  if (!t.host.empty()) {
    where += " AND r.host = ?";
    p->push_back(t.host);
  }
  if (!t.branch.empty()) {
    where += " AND r.branch = ?";
    p->push_back(t.branch);
  }
  if (!t.gpu.empty()) {
    where += " AND (r.gpu_name = ? OR r.gpu_uuid LIKE ?)";
    p->push_back(t.gpu);
    p->push_back(t.gpu + "%");
  }
  if (!t.include_simulated) where += " AND r.simulated = 0";
  return where;
}

std::string_view TextOf(const SqlValue& v, std::string& scratch) {
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  scratch = AsText(v);
  return scratch;
}

// The run's fields of a row that starts with kTrendRunColumns, as views (numbers kept as text
// in a damaged store are converted into SCRATCH[0..7]).
void RunFieldsOf(const std::vector<SqlValue>& r, TrendRow& x, std::string* scratch) {
  std::string_view* fields[] = {&x.run_key, &x.commit,   &x.branch,   &x.day,
                                &x.host,    &x.gpu_name, &x.gpu_uuid, &x.boot_id};
  for (size_t i = 0; i < 8; ++i) *fields[i] = TextOf(r[i], scratch[i]);
  x.started_unix_s = AsReal(r[8]);
  x.dirty = AsInt(r[9]) != 0;
}

void FillPoint(TrendPoint& x, const TrendRow& r) {
  x.run_key = r.run_key;
  x.commit = r.commit;
  x.branch = r.branch;
  x.day = r.day;
  x.host = r.host;
  x.gpu_name = r.gpu_name;
  x.gpu_uuid = r.gpu_uuid;
  x.boot_id = r.boot_id;
  x.unit = r.unit;
  x.better = r.better;
  x.started_unix_s = r.started_unix_s;
  x.value = r.value;
  x.n = r.n;
  x.attributed = r.attributed;
  x.dirty = r.dirty;
  x.clock_sm_median_mhz = r.clock_sm_median_mhz;
}

}  // namespace

TrendRow TrendRowOf(const TrendPoint& p) {
  TrendRow r;
  r.run_key = p.run_key;
  r.commit = p.commit;
  r.branch = p.branch;
  r.day = p.day;
  r.host = p.host;
  r.gpu_name = p.gpu_name;
  r.gpu_uuid = p.gpu_uuid;
  r.boot_id = p.boot_id;
  r.unit = p.unit;
  r.better = p.better;
  r.started_unix_s = p.started_unix_s;
  r.value = p.value;
  r.n = p.n;
  r.attributed = p.attributed;
  r.dirty = p.dirty;
  r.clock_sm_median_mhz = p.clock_sm_median_mhz;
  return r;
}

Status Store::WalkTrend(const TrendQuery& t, const TrendRowFn& fn) {
  if (empty_) return OkStatus();
  std::vector<SqlValue> p = {t.metric, t.arm};
  const std::string where = TrendFilters(t, &p);
  // The row named in an error, built only when there is one.
  auto row_of = [&](const TrendRow& x) {
    return fmt::format("history store {}: summaries row (run {}, arm {}, metric {})", db_->Where(),
                       x.run_key, t.arm, t.metric);
  };
  std::string scratch[10];
  TrendRow x;
  return db_->QueryEach(
      std::string("SELECT ") + kTrendRunColumns +
          ", s.median, s.n, s.unit, s.better, s.clock_sm_median_mhz FROM summaries s JOIN runs r "
          "ON r.run_key = s.run_key WHERE s.name = ? AND s.arm = ?" +
          where + " ORDER BY r.started_unix_s, r.run_key",
      p, [&](std::vector<SqlValue>& r) -> Status {
        RunFieldsOf(r, x, scratch);
        // A number where one is required, or an error naming the row: text is not a 0. The
        // row's name is built for an error only (checked once unnamed, then again named).
        auto value = StoredReal(r[10], "");
        if (!value) return StoredReal(r[10], row_of(x) + ": median").error();
        auto n = StoredInt(r[11], "");
        if (!n) return StoredInt(r[11], row_of(x) + ": n").error();
        if (*n < 0 || *n > 1000000000)
          return MakeError("{}: n is {}, not a count of legs (the store was edited or damaged)",
                           row_of(x), *n);
        auto clock = StoredOptReal(r[14], "");
        if (!clock) return StoredOptReal(r[14], row_of(x) + ": clock_sm_median_mhz").error();
        x.value = *value;
        x.n = static_cast<int>(*n);
        x.clock_sm_median_mhz = *clock;
        x.unit = TextOf(r[12], scratch[8]);
        x.better = TextOf(r[13], scratch[9]);
        return fn(x);
      });
}

Status Store::TrendEach(const TrendQuery& t, const TrendRowFn& fn) {
  if (!t.include_unattributed) return WalkTrend(t, fn);
  auto pts = Trend(t);
  if (!pts) return pts.error();
  for (const auto& x : *pts)
    if (auto s = fn(TrendRowOf(x)); !s) return s;
  return OkStatus();
}

Result<std::vector<TrendPoint>> Store::Trend(const TrendQuery& t) {
  if (empty_) return std::vector<TrendPoint>{};
  std::vector<TrendPoint> out;
  // Room for every summary of the metric up front (the filters only take some away): growing
  // from empty moved every point's ten strings about twice (7 % of a 100,000-point trend).
  // Capped: reserving touches no page, and a bound this large is only a guess to grow from.
  if (auto n = db_->Query("SELECT COUNT(*) FROM summaries WHERE name = ? AND arm = ?",
                          {t.metric, t.arm});
      n && !n->rows.empty() && !n->rows[0].empty())
    out.reserve(static_cast<size_t>(std::clamp<long>(AsInt(n->rows[0][0]), 0, 1L << 20)));
  if (auto s = WalkTrend(t,
                         [&](const TrendRow& r) {
                           FillPoint(out.emplace_back(), r);
                           return OkStatus();
                         });
      !s)
    return s.error();
  std::vector<SqlValue> p = {t.metric, t.arm};
  const std::string where = TrendFilters(t, &p);
  const std::string cols = kTrendRunColumns;
  if (t.include_unattributed) {
    // Runs whose legs produced the metric but had no valid window: the median over those
    // legs, marked unattributed.
    auto u = db_->Query("SELECT " + cols +
                            ", m.value, m.unit, m.better, m.leg_index, m.seq FROM metrics m "
                            "JOIN legs l ON l.run_key "
                            "= m.run_key AND l.leg_index = m.leg_index JOIN runs r ON r.run_key "
                            "= m.run_key WHERE m.name = ? AND l.arm = ? AND l.role = 'measured' "
                            "AND l.valid = 0 AND m.value IS NOT NULL" +
                            where + " ORDER BY r.started_unix_s, r.run_key",
                        p);
    if (!u) return u.error();
    std::map<std::string, size_t> have;
    for (size_t i = 0; i < out.size(); ++i) have[out[i].run_key] = i;
    std::map<std::string, std::pair<TrendPoint, std::vector<double>>> extra;
    std::vector<std::string> order;
    for (auto& r : u->rows) {
      std::string key = AsText(r[0]);
      if (have.count(key)) continue;
      auto it = extra.find(key);
      if (it == extra.end()) {
        TrendPoint x;
        TrendRow v;
        std::string scratch[8];
        RunFieldsOf(r, v, scratch);
        FillPoint(x, v);
        x.unit = AsText(r[11]);
        x.better = AsText(r[12]);
        x.attributed = false;
        it = extra.emplace(key, std::make_pair(x, std::vector<double>{})).first;
        order.push_back(key);
      }
      auto v =
          StoredReal(r[10], fmt::format("history store {}: metrics row (run {}, leg {}, "
                                        "seq {}, metric {}): value",
                                        db_->Where(), key, AsText(r[13]), AsText(r[14]), t.metric));
      if (!v) return v.error();
      it->second.second.push_back(*v);
    }
    for (const auto& k : order) {
      auto& [x, vals] = extra[k];
      x.value = MedianOf(vals);
      x.n = static_cast<int>(vals.size());
      out.push_back(x);
    }
    std::stable_sort(out.begin(), out.end(), [](const TrendPoint& a, const TrendPoint& b) {
      return a.started_unix_s < b.started_unix_s;
    });
  }
  return out;
}

}  // namespace vouch