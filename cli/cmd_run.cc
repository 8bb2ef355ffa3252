// vouch run: warm-up legs (discarded, cause "warmup"), then measured legs, each in its own
// process and its own clock window; the record after every leg; a summary at the end.
// vouch show: prints a record's summary again.
#include <fmt/format.h>

#include "ab_verdict.h"
#include "run_common.h"
#include "util/json_io.h"

namespace vouch::cli {

int CmdRun(const GlobalOptions& g, std::vector<std::string> args) {
  auto [opts, cmd] = SplitAtDoubleDash(args);
  CLI::App app{
      "Run a benchmark command in guarded legs and write a record.\n"
      "Exit: 0 at least one valid measured leg, 1 none valid (with the reasons) or an expectation "
      "violated, 130 interrupted",
      "run"};
  RunFlags f;
  f.Add(app, true);
  if (int rc = Parse(app, opts); rc >= 0) return rc;
  auto env = ParseEnv(f.env);
  if (!env) {
    fmt::print(stderr, "vouch run: {}\n", env.error().message);
    return kExitUsage;
  }
  Arm arm;
  arm.name = "run";
  arm.argv = cmd;
  arm.env = *env;
  arm.cwd = f.cwd;
  arm.shell = f.shell;
  std::vector<std::string> argv = {"run"};
  argv.insert(argv.end(), args.begin(), args.end());
  RunContext ctx;
  ctx.spill_legs = true;  // memory flat in the legs: a 10,000-leg run holds one
  if (int rc = PrepareRun(g, f, {arm}, "run", argv, &ctx); rc >= 0) return rc;
  RunWarmupAndMeasured(ctx, arm, f.warmup, f.reps);
  int rc = FinishRun(ctx, !f.json);
  if (f.json) PrintRecordJson(ctx.record, ctx.dir, stdout);
  if (!StoreResult(f.store, "run", ctx.dir) && rc == kExitOk) rc = kExitError;
  return rc;
}

int CmdShow(const GlobalOptions&, std::vector<std::string> args) {
  CLI::App app{"Print a record's summary again (a run directory or its record.json)", "show"};
  std::string path;
  bool json = false;
  app.add_option("RECORD", path, "run directory or record.json")->required();
  app.add_flag("--json", json, "print the whole record as JSON");
  if (int rc = Parse(app, args); rc >= 0) return rc;
  auto rec = ReadRecordJson(path);
  if (!rec) {
    fmt::print(stderr, "vouch show: {}\n", rec.error().message);
    return kExitError;
  }
  if (json)
    fmt::print("{}\n", DumpJson(*rec, 2));
  else
    fmt::print("{}{}", RenderRecordText(*rec), AbRecomputeHint(*rec, path));
  return kExitOk;
}

}  // namespace vouch::cli
