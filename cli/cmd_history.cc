// vouch history add | list | show | trend: the history store (src/store) from the command
// line, and the trend of a metric across commits with its steps (src/trend).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "command.h"
#include "common.h"
#include "leg/executor.h"
#include "number_flag.h"
#include "record/record.h"
#include "store/sql.h"
#include "store/store.h"
#include "trend/trend.h"
#include "trend_metric.h"
#include "util/escape.h"
#include "util/json_io.h"
#include "util/strings.h"

namespace vouch::cli {
namespace {

struct Opened {
  std::unique_ptr<Store> store;
  std::string where;
};

void AddStoreOption(CLI::App& app, std::string* url) {
  app.add_option("--store", *url,
                 "the store: a SQLite file or postgresql://... (default VOUCH_STORE, else "
                 "$XDG_DATA_HOME/vouch/history.sqlite or ~/.local/share/vouch/history.sqlite)");
}

// A read (list, show, trend) checks the store's version without the write lock; only add
// migrates.
Result<Opened> OpenStore(const std::string& flag, StoreAccess access) {
  auto where = ResolveStore(flag);
  if (!where) return where.error();
  auto s = Store::Open(where->url, access);
  if (!s) return s.error();
  // A read opens the store read-only and changes nothing; one nothing was added to yet says
  // so (and an empty file stays empty).
  if (access == StoreAccess::kRead && (*s)->empty())
    fmt::print(stderr,
               "vouch history: history store {} is empty: nothing was added to it yet (vouch "
               "history add RUN_DIR, or --store on run, baseline, gate or ab, adds to it); it was "
               "left as it is\n",
               RedactUrl(where->url));
  return Opened{std::move(*s), RedactUrl(where->url)};
}

std::string Short(const std::string& s, size_t n) { return s.size() > n ? s.substr(0, n) : s; }

}  // namespace

int CmdHistoryAdd(const GlobalOptions&, std::vector<std::string> args) {
  CLI::App app{
      "Add run records to the history store (idempotent: a record already stored is left as "
      "it is; one rewritten since replaces it).\nExit: 0 all stored, 1 a record was refused, 128+N "
      "stopped by signal N after a committed record (130: Ctrl-C)",
      "history add"};
  std::string url;
  std::vector<std::string> dirs;
  AddStoreOption(app, &url);
  app.add_option("RECORD", dirs, "run directories (or their record.json)")->required();
  if (int rc = Parse(app, args); rc >= 0) return rc;
  // A folder that is not there is a typo: said before the store is opened (and so created).
  int missing = 0;
  for (const auto& d : dirs) {
    std::error_code ec;
    if (!std::filesystem::exists(d, ec)) {
      fmt::print(stderr, "vouch history add: {}: no such file or folder\n", d);
      ++missing;
    }
  }
  if (missing)
    return fmt::print(stderr,
                      "vouch history add: nothing added (give run directories or their "
                      "record.json)\n"),
           kExitError;
  auto st = OpenStore(url, StoreAccess::kWrite);
  if (!st) return fmt::print(stderr, "vouch history add: {}\n", st.error().message), kExitError;
  // Ctrl-C (or SIGTERM, SIGHUP) ends the adding after the record being committed: every record
  // committed is printed and counted, the store is as after that record, and the exit is the
  // signal's (130 for Ctrl-C). Killed outright, the lines already printed to a pipe were lost.
  if (auto h = InstallInterruptHandler(); !h)
    return fmt::print(stderr, "vouch history add: {}\n", h.error().message), kExitError;
  int failed = 0, counts[3] = {0, 0, 0};
  std::size_t done = 0;
  st->store->AddRecordDirs(
      dirs,
      [&](const std::string& d, const Result<IngestOutcome>& r) {
        ++done;
        if (!r) {
          ++failed;
          fmt::print(stderr, "vouch history add: {}\n", r.error().message);
          return;
        }
        ++counts[static_cast<int>(r->result)];
        fmt::print("{:<9} {}  {}\n", IngestResultName(r->result), Short(r->run_key, 12), d);
      },
      [] { return Interrupted(); });
  fmt::print("{}: {} added, {} unchanged, {} replaced, {} refused\n", st->where, counts[0],
             counts[1], counts[2], failed);
  if (Interrupted() && done < dirs.size()) {
    fmt::print(stderr,
               "vouch history add: interrupted by {} after {} of {} records; the other {} "
               "were not added (the same command again adds them; those stored are "
               "\"unchanged\")\n",
               SignalName(InterruptSignal()), done, dirs.size(), dirs.size() - done);
    return InterruptExitCode();
  }
  return failed ? kExitError : kExitOk;
}

int CmdHistoryList(const GlobalOptions&, std::vector<std::string> args) {
  CLI::App app{"List the stored runs, newest first", "history list"};
  std::string url;
  RunFilter f;
  bool json = false;
  AddStoreOption(app, &url);
  app.add_option("--kind", f.kind, "run, baseline, gate or ab");
  app.add_option("--gpu", f.gpu, "GPU name or UUID prefix");
  app.add_option("--host", f.host, "host name");
  app.add_option("--branch", f.branch, "git branch");
  app.add_option("--commit", f.commit, "commit (prefix)");
  app.add_option("--limit", f.limit, "at most this many runs (50)")
      ->check(NumberFlag(Count(1, 1000000)));
  app.add_flag("--json", json, "print JSON");
  if (int rc = Parse(app, args); rc >= 0) return rc;
  auto st = OpenStore(url, StoreAccess::kRead);
  if (!st) return fmt::print(stderr, "vouch history list: {}\n", st.error().message), kExitError;
  auto runs = st->store->ListRuns(f);
  if (!runs)
    return fmt::print(stderr, "vouch history list: {}\n", runs.error().message), kExitError;
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : *runs)
      out.push_back(
          {{"run_key", r.run_key},
           {"kind", r.kind},
           {"status", r.status},
           {"started", r.started},
           {"commit", r.commit},
           {"branch", r.branch},
           {"dirty", r.dirty ? nlohmann::json(*r.dirty) : nlohmann::json()},
           {"host", r.host},
           {"boot_id", r.boot_id},
           {"gpu", r.gpu_name},
           {"gpu_uuid", r.gpu_uuid},
           {"simulated", r.simulated},
           {"measured_legs", r.measured_legs},
           {"valid_legs", r.valid_legs},
           {"clock_sm_median_mhz",
            r.clock_sm_median_mhz ? nlohmann::json(*r.clock_sm_median_mhz) : nlohmann::json()},
           {"verdict", r.verdict},
           {"source", r.source}});
    fmt::print("{}\n", DumpJson(out, 2));
    return kExitOk;
  }
  fmt::print("{} ({} runs shown)\n", st->where, runs->size());
  // Every cell as the store holds it, escaped: a newline in a stored branch is no new row.
  const auto T = [](const std::string& s) { return TerminalSafe(s); };
  if (runs->empty()) return kExitOk;
  fmt::print("{:<12} {:<8} {:<11} {:<20} {:<10} {:<10} {:<6} {:<9} {}\n", "run", "kind", "status",
             "started", "commit", "branch", "valid", "SM MHz", "GPU / verdict");
  for (const auto& r : *runs)
    fmt::print(
        "{:<12} {:<8} {:<11} {:<20} {:<10} {:<10} {:<6} {:<9} {}{}{}{}\n", T(Short(r.run_key, 12)),
        T(r.kind), T(r.status), T(r.started), r.commit.empty() ? "-" : T(Short(r.commit, 10)),
        r.branch.empty() ? "-" : T(r.branch), fmt::format("{}/{}", r.valid_legs, r.measured_legs),
        r.clock_sm_median_mhz ? fmt::format("{:.0f}", *r.clock_sm_median_mhz) : "-",
        r.gpu_name.empty() ? "?" : T(r.gpu_name),
        // The simulated device's name says so already: not "(simulated) (simulated)".
        r.simulated && r.gpu_name.find("(simulated)") == std::string::npos ? " (simulated)" : "",
        r.dirty.value_or(false) ? " dirty" : "", r.verdict.empty() ? "" : " | " + T(r.verdict));
  return kExitOk;
}

int CmdHistoryShow(const GlobalOptions&, std::vector<std::string> args) {
  CLI::App app{"Print a stored run again (its key or a unique prefix, from vouch history list)",
               "history show"};
  std::string url, run;
  bool json = false;
  AddStoreOption(app, &url);
  app.add_option("RUN", run, "run key or prefix (6 characters or more)")->required();
  app.add_flag("--json", json, "print the stored record as JSON");
  if (int rc = Parse(app, args); rc >= 0) return rc;
  auto st = OpenStore(url, StoreAccess::kRead);
  if (!st) return fmt::print(stderr, "vouch history show: {}\n", st.error().message), kExitError;
  auto key = st->store->ResolveRunKey(run);
  if (!key) return fmt::print(stderr, "vouch history show: {}\n", key.error().message), kExitError;
  auto doc = st->store->RunDocument(*key);
  if (!doc) return fmt::print(stderr, "vouch history show: {}\n", doc.error().message), kExitError;
  if (json) {
    fmt::print("{}\n", DumpJson(*doc, 2));
    return kExitOk;
  }
  const auto& stored = (*doc)["stored"];
  fmt::print("run {} from {}\n", TerminalSafe(*key), TerminalSafe(stored.value("source", "")));
  if ((*doc)["revisions"].is_array())
    for (const auto& r : (*doc)["revisions"])
      if (r.is_object() && r.value("git", false))
        fmt::print("revision {}{}{} ({})\n", TerminalSafe(r.value("commit", "?")),
                   r.contains("branch") && r["branch"].is_string()
                       ? " on " + TerminalSafe(r["branch"].get<std::string>())
                       : "",
                   r.value("dirty", false) ? " dirty" : "", TerminalSafe(r.value("path", "")));
  fmt::print("{}", RenderRecordText(*doc));
  for (const auto& g : stored["gates"]) {
    const auto& t = g["gate"];
    fmt::print("gate against {}: {}{}\n", TerminalSafe(g.value("baseline_path", "?")),
               TerminalSafe(t.value("overall", "?")),
               t.value("clock_attributed", true) ? "" : " (not clock-attributed)");
  }
  return kExitOk;
}

int CmdHistoryTrend(const GlobalOptions&, std::vector<std::string> args) {
  CLI::App app{
      "A metric across stored runs, per commit (or day or run), with the steps E-Divisive finds.\n"
      "Only clock-attributed points (a valid window) unless --unattributed; a series that mixes "
      "GPUs or clock states says so instead of reporting a step.",
      "history trend"};
  std::string url, by = "commit", format = "text";
  TrendQuery q;
  EDivisiveOptions eo;
  bool no_steps = false, json = false;
  std::string markdown;
  AddStoreOption(app, &url);
  app.add_option("METRIC", q.metric, "the metric's name (as in the record's summary)")->required();
  app.add_option("--by", by, "commit, day or run (commit)")
      ->check(CLI::IsMember({"commit", "day", "run"}));
  app.add_option("--arm", q.arm, "the arm whose values are followed (run; A or B for an A/B)");
  app.add_option("--gpu", q.gpu, "only runs on this GPU (name or UUID prefix)");
  app.add_option("--host", q.host, "only runs on this host");
  app.add_option("--branch", q.branch, "only runs of this branch");
  app.add_flag("--unattributed", q.include_unattributed,
               "also points without a valid clock window (marked; steps are then not looked for)");
  app.add_flag("--no-steps", no_steps, "do not look for steps");
  app.add_option("--significance", eo.significance, "largest p value of a step (0.01)")
      ->check(NumberFlag({0.0001, 0.5}));
  app.add_option("--permutations", eo.permutations, "permutations of the test (199)")
      ->check(NumberFlag(Count(19, 100000)));
  app.add_flag("--json", json, "print JSON (schema vouch.trend)");
  // --markdown FILE|- as on every command that prints a table; alone, it prints Markdown.
  AddMarkdownOption(app, markdown, "the trend")->expected(0, 1);
  if (int rc = Parse(app, args); rc >= 0) return rc;
  if (app.count("--markdown") > 0 && markdown.empty()) markdown = "-";
  auto st = OpenStore(url, StoreAccess::kRead);
  if (!st) return fmt::print(stderr, "vouch history trend: {}\n", st.error().message), kExitError;
  TrendBy b = by == "day" ? TrendBy::kDay : by == "run" ? TrendBy::kRun : TrendBy::kCommit;
  // The series is built as the store's rows come (issue 39: no point kept twice).
  TrendBuilder builder(q, b);
  if (auto walked = st->store->TrendEach(q,
                                         [&](const TrendRow& r) {
                                           builder.Add(r);
                                           return OkStatus();
                                         });
      !walked)
    return fmt::print(stderr, "vouch history trend: {}\n", walked.error().message), kExitError;
  TrendSeries s = builder.Finish();
  // A misspelled metric is not an empty series: say so, with the names the store has.
  if (s.points.empty() && !KnownTrendMetric("history trend", *st->store, st->where, q.metric))
    return kExitError;
  if (!no_steps) DetectSteps(s, eo);
  if (!WriteMarkdownFile(
          markdown, [&] { return RenderTrendMarkdown(s); }, "history trend"))
    return kExitError;
  // Written as they are, not through fmt (no second copy of 30 MB at 100,000 points); the
  // JSON in parts, as it is made.
  auto write = [](std::string_view part) { std::fwrite(part.data(), 1, part.size(), stdout); };
  if (json) {
    WriteTrendJson(s, write);
    write("\n");
  } else {
    write(markdown == "-" ? RenderTrendMarkdown(s) : RenderTrendText(s));
  }
  return kExitOk;
}

}  // namespace vouch::cli
