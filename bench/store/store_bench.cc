// bench/store: the history store and step detection.
//  1. ingest N records (the stored fixture run, each with its own start time and commit) into
//     SQLite and into PostgreSQL, one transaction per record, side by side;
//  2. a trend query over 100,000 points on both (the first N runs ingested, the rest added as
//     runs with their summaries in bulk);
//  3. step detection on seeded synthetic series at 0.02 %, 1 % and 5 % noise: a planted 3 %
//     step found at the right commit (within one), and false steps in 1,000-point series
//     without a step, E-Divisive against the moving-median rule, in the same run.
// Usage: vouch_bench_store [--pg URL] [--records N] [--points N] [--trials N]
//        (VOUCH_TEST_PG is the default URL; without one the PostgreSQL columns are skipped.)
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "record/record.h"
#include "store/store.h"
#include "trend/steps.h"

using namespace vouch;
using Clock = std::chrono::steady_clock;

namespace {

double Seconds(Clock::time_point a) {
  return std::chrono::duration<double>(Clock::now() - a).count();
}

// This process's CPU seconds (user + system): on a shared, loaded VM the wall time mostly
// measures the queue for a core; the CPU time does not (the PostgreSQL server's own CPU is
// not in it).
double CpuSeconds() {
  struct rusage u;
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct EngineResult {
  double ingest_s = 0, bulk_s = 0, trend_s = 0, ingest_cpu_s = 0, trend_cpu_s = 0;
  size_t points = 0;
  bool ok = false;
};

EngineResult BenchEngine(const std::string& url, const nlohmann::json& fixture, int records,
                         int points) {
  EngineResult r;
  auto st = Store::Open(url);
  if (!st) {
    fmt::print(stderr, "{}\n", st.error().message);
    return r;
  }
  Store& s = **st;
  auto t = Clock::now();
  double c0 = CpuSeconds();
  for (int i = 0; i < records; ++i) {
    nlohmann::json rec = fixture;
    rec["started_unix_s"] = 1796000000.0 + i * 60.0;
    rec["revisions"] = nlohmann::json::array({{{"path", "/src"},
                                               {"git", true},
                                               {"commit", fmt::format("{:040x}", 0xc0ffee00 + i)},
                                               {"dirty", false},
                                               {"branch", "main"}}});
    auto a = s.AddRecord(rec, "bench");
    if (!a) {
      fmt::print(stderr, "record {}: {}\n", i, a.error().message);
      return r;
    }
  }
  r.ingest_s = Seconds(t);
  r.ingest_cpu_s = CpuSeconds() - c0;
  // The rest of the points: runs and their summaries in bulk (the trend reads only those).
  t = Clock::now();
  SqlTransaction tx(s.db());
  (void)tx.Begin();
  const int per = 500;
  for (int base = records; base < points; base += per) {
    std::string runs_sql =
        "INSERT INTO runs (run_key, content_sha256, kind, status, record_schema_version, "
        "started, started_unix_s, day, commit_sha, branch, host, gpu_name, gpu_uuid, simulated, "
        "clock_sm_median_mhz, measured_legs, valid_legs, reproduce, ingested_unix_s, "
        "record_json) VALUES ";
    std::string sum_sql =
        "INSERT INTO summaries (run_key, arm, name, unit, better, n, median, min, max, "
        "clock_sm_median_mhz) VALUES ";
    std::vector<SqlValue> rp, sp;
    for (int i = base; i < std::min(points, base + per); ++i) {
      std::string key = fmt::format("bulk{:028d}", i);
      runs_sql += i == base ? "" : ",";
      runs_sql +=
          "(?,?,'run','complete',1,'',?,'2026-12-01',?,'main','vm','H200','GPU-0',0,1980,"
          "2,2,'',0,'{}')";
      rp.insert(rp.end(), {key, key, 1796000000.0 + i * 60.0, fmt::format("{:040x}", i)});
      sum_sql += i == base ? "" : ",";
      sum_sql += "(?,'run','tok_s','tok/s','higher',2,?,?,?,1980)";
      double v = 1234.5 * (1 + 0.001 * std::sin(i));
      sp.insert(sp.end(), {key, v, v, v});
    }
    if (auto e = s.db().Exec(runs_sql, rp); !e) {
      fmt::print(stderr, "{}\n", e.error().message);
      return r;
    }
    if (auto e = s.db().Exec(sum_sql, sp); !e) {
      fmt::print(stderr, "{}\n", e.error().message);
      return r;
    }
  }
  (void)tx.Commit();
  r.bulk_s = Seconds(t);
  TrendQuery q;
  q.metric = "tok_s";
  t = Clock::now();
  c0 = CpuSeconds();
  auto pts = s.Trend(q);
  r.trend_s = Seconds(t);
  r.trend_cpu_s = CpuSeconds() - c0;
  if (!pts) {
    fmt::print(stderr, "{}\n", pts.error().message);
    return r;
  }
  r.points = pts->size();
  r.ok = true;
  return r;
}

std::vector<double> Series(int n, double noise_pct, std::mt19937_64& rng, int step_at,
                           double step_pct) {
  std::normal_distribution<double> z(0, 1);
  std::vector<double> v;
  for (int i = 0; i < n; ++i)
    v.push_back(1000 * (step_at >= 0 && i >= step_at ? 1 + step_pct / 100 : 1) *
                (1 + noise_pct / 100 * z(rng)));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string pg = std::getenv("VOUCH_TEST_PG") ? std::getenv("VOUCH_TEST_PG") : "";
  int records = 10000, points = 100000, trials = 50, flat_trials = 20, step_n = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--pg")) pg = argv[i + 1];
    if (!std::strcmp(argv[i], "--records")) records = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--points")) points = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--trials")) trials = std::atoi(argv[i + 1]);
  }
  auto fixture = ReadRecordJson(VOUCH_SOURCE_DIR "/tests/data/store/run");
  if (!fixture) return fmt::print(stderr, "{}\n", fixture.error().message), 1;

  fmt::print("## Store: ingest {} records, trend over {} points\n\n", records, points);
  fmt::print(
      "| engine | ingest (wall) | per record | ingest (vouch CPU) | bulk rows | trend query "
      "(wall) | trend query (vouch CPU) | points |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  auto tmp =
      std::filesystem::temp_directory_path() / fmt::format("vouch_bench_{}.sqlite", ::getpid());
  std::filesystem::remove(tmp);
  std::vector<std::pair<std::string, EngineResult>> results;
  results.emplace_back("SQLite (WAL)", BenchEngine(tmp.string(), *fixture, records, points));
  std::filesystem::remove(tmp);
  std::filesystem::remove(tmp.string() + "-wal");
  std::filesystem::remove(tmp.string() + "-shm");
  if (!pg.empty()) {
    // A schema of its own, dropped afterwards.
    auto admin = OpenPostgresDb(pg);
    if (admin) {
      std::string schema = fmt::format("vouch_bench_{}", ::getpid());
      (void)(*admin)->Exec("CREATE SCHEMA " + schema);
      std::string url = pg + (pg.find('?') == std::string::npos ? "?" : "&") +
                        "options=-csearch_path%3D" + schema;
      results.emplace_back("PostgreSQL 15 (unix socket)",
                           BenchEngine(url, *fixture, records, points));
      (void)(*admin)->Exec("DROP SCHEMA " + schema + " CASCADE");
    } else {
      fmt::print(stderr, "{}\n", admin.error().message);
    }
  }
  for (const auto& [name, r] : results)
    if (r.ok)
      fmt::print("| {} | {:.2f} s | {:.2f} ms | {:.2f} s | {:.2f} s | {:.3f} s | {:.3f} s | {} |\n",
                 name, r.ingest_s, 1000 * r.ingest_s / records, r.ingest_cpu_s, r.bulk_s, r.trend_s,
                 r.trend_cpu_s, r.points);
    else
      fmt::print("| {} | failed | | | | | | |\n", name);
  if (results.size() == 2 && results[0].second.ok && results[1].second.ok)
    fmt::print("\nPostgreSQL / SQLite: ingest {:.2f}x, trend query {:.2f}x\n",
               results[1].second.ingest_s / results[0].second.ingest_s,
               results[1].second.trend_s / results[0].second.trend_s);

  fmt::print(
      "\n## Step detection: a planted 3 % step ({} trials of {} points, step uniformly in the "
      "middle 60 %), false steps over {} series of 1,000 points without a step\n\n",
      trials, step_n, flat_trials);
  fmt::print(
      "| noise | method | step found within one commit | within three | found elsewhere only | "
      "missed | false "
      "steps per 1,000-point series | series with a false step | time per 1,000 points |\n");
  fmt::print("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (double noise : {0.02, 1.0, 5.0}) {
    for (int method = 0; method < 2; ++method) {
      std::mt19937_64 rng(20261201 + static_cast<std::uint64_t>(noise * 100));
      int found = 0, near = 0, elsewhere = 0, missed = 0, false_total = 0, false_series = 0;
      std::uniform_int_distribution<int> where(step_n / 5, step_n * 4 / 5);
      for (int t = 0; t < trials; ++t) {
        int at = where(rng);
        auto v = Series(step_n, noise, rng, at, -3);
        std::vector<int> idx;
        if (method == 0)
          for (const auto& c : EDivisive(v)) idx.push_back(c.index);
        else
          idx = MovingMedianSteps(v);
        bool hit = false, close = false;
        for (int i : idx) {
          hit = hit || std::abs(i - at) <= 1;
          close = close || std::abs(i - at) <= 3;
        }
        near += close;
        if (hit)
          ++found;
        else if (!idx.empty())
          ++elsewhere;
        else
          ++missed;
      }
      auto t0 = Clock::now();
      for (int t = 0; t < flat_trials; ++t) {
        auto v = Series(1000, noise, rng, -1, 0);
        size_t n = method == 0 ? EDivisive(v).size() : MovingMedianSteps(v).size();
        false_total += static_cast<int>(n);
        false_series += n > 0;
      }
      double per = Seconds(t0) / flat_trials;
      fmt::print("| {} % | {} | {} of {} | {} | {} | {} | {:.2f} | {} of {} | {:.1f} ms |\n", noise,
                 method == 0 ? "E-Divisive (p <= 0.01, 199 permutations)"
                             : "moving median (5 each side, 2 % threshold)",
                 found, trials, near, elsewhere, missed,
                 static_cast<double>(false_total) / flat_trials, false_series, flat_trials,
                 1000 * per);
    }
  }
  return 0;
}
