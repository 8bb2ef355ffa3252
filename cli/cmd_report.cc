// vouch report: one self-contained HTML file (src/report) for a run directory, a stored run,
// a metric's trend from the store, or a trace summary.
#include <fmt/format.h>

#include <filesystem>

#include "command.h"
#include "record/record.h"
#include "report/report.h"
#include "store/store.h"
#include "trend/trend.h"
#include "trend_metric.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "util/redact.h"

namespace vouch::cli {

int CmdReport(const GlobalOptions&, std::vector<std::string> args) {
  CLI::App app{
      "Write one self-contained HTML report (it opens with no network): for a run directory (a "
      "run, baseline, gate or A/B record), a stored run (--run), a metric's trend from the store "
      "(--trend), or a trace summary (vouch trace summarize --json output).\nExit: 0 written, 1 "
      "error",
      "report"};
  std::string input, run, metric, url, out = "vouch-report.html", by = "commit";
  TrendQuery q;
  app.add_option("INPUT", input, "a run directory (or its record.json), or a trace summary JSON");
  app.add_option("--run", run, "a stored run (key or prefix, from vouch history list)");
  app.add_option("--trend", metric, "a metric's trend across the stored runs, with its steps");
  app.add_option("--store", url, "the history store for --run and --trend (as vouch history)");
  app.add_option("--by", by, "trend points per commit, day or run (commit)")
      ->check(CLI::IsMember({"commit", "day", "run"}));
  app.add_option("--arm", q.arm, "trend: the arm followed (run)");
  app.add_option("--gpu", q.gpu, "trend: only this GPU (name or UUID prefix)");
  app.add_option("--host", q.host, "trend: only this host");
  app.add_option("--branch", q.branch, "trend: only this branch");
  app.add_flag("--unattributed", q.include_unattributed, "trend: also unattributed points");
  app.add_option("-o,--out", out, "the HTML file to write (vouch-report.html)");
  if (int rc = Parse(app, args); rc >= 0) return rc;
  auto say = [](const std::string& m) { fmt::print(stderr, "vouch report: {}\n", m); };
  if ((input.empty() ? 0 : 1) + (run.empty() ? 0 : 1) + (metric.empty() ? 0 : 1) != 1)
    return say("give one of: a run directory, --run KEY, --trend METRIC, or a trace summary"),
           kExitUsage;
  const ReportAssets& assets = BuiltinReportAssets();
  Result<std::string> html = std::string();
  if (!input.empty()) {
    std::error_code ec;
    bool dir = std::filesystem::is_directory(input, ec);
    nlohmann::json doc;
    if (!dir) {
      auto text = ReadFile(input, 512ull << 20);
      if (!text) return say(text.error().message), kExitError;
      auto parsed = ParseJson(*text, input);
      if (!parsed) return say(parsed.error().message), kExitError;
      doc = std::move(*parsed);
    }
    if (!dir && doc.is_object() && doc.contains("components") && doc.contains("kernels")) {
      html = RenderTraceReport(doc, assets);
    } else {
      auto rec = ReadRecordJson(input);
      if (!rec) return say(rec.error().message), kExitError;
      AttachLegSeries(*rec, dir ? input : std::filesystem::path(input).parent_path().string());
      html = RenderRecordReport(*rec, assets);
    }
  } else {
    auto where = ResolveStore(url);
    if (!where) return say(where.error().message), kExitError;
    auto store = Store::Open(where->url, StoreAccess::kRead);
    if (!store) return say(store.error().message), kExitError;
    if (!run.empty()) {
      auto key = (*store)->ResolveRunKey(run);
      if (!key) return say(key.error().message), kExitError;
      auto doc = (*store)->RunDocument(*key);
      if (!doc) return say(doc.error().message), kExitError;
      html = RenderRecordReport(*doc, assets);
    } else {
      q.metric = metric;
      // The series is built as the store's rows come, as `history trend` builds it: no point
      // of a million runs is kept twice (issue 39: 667 MB at a million, now as the series).
      TrendBuilder builder(q, by == "day"   ? TrendBy::kDay
                              : by == "run" ? TrendBy::kRun
                                            : TrendBy::kCommit);
      if (auto walked = (*store)->TrendEach(q,
                                            [&](const TrendRow& r) {
                                              builder.Add(r);
                                              return OkStatus();
                                            });
          !walked)
        return say(walked.error().message), kExitError;
      TrendSeries s = builder.Finish();
      // A misspelled metric: the names the store has, exit 1, no page.
      if (s.points.empty() && !KnownTrendMetric("report", **store, RedactUrl(where->url), metric))
        return kExitError;
      DetectSteps(s);
      html = RenderTrendReport(s, assets);
    }
  }
  if (!html) return say(html.error().message), kExitError;
  if (auto s = WriteFileAtomic(out, *html); !s) return say(s.error().message), kExitError;
  fmt::print("report written to {} ({} bytes)\n", out, html->size());
  return kExitOk;
}

}  // namespace vouch::cli
