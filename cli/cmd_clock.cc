// vouch clock sample | check | pair | replay: clock windows around a command, and the
// judgement of saved windows and recorded streams.
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "clock/measure.h"
#include "common.h"
#include "gputrace/leg_trace.h"
#include "leg/executor.h"
#include "lock/lock.h"
#include "number_flag.h"
#include "record/leg_runner.h"
#include "run_common.h"
#include "util/bounded_file.h"
#include "util/fs.h"
#include "util/host.h"
#include "util/json_io.h"
#include "util/redact.h"
#include "util/strings.h"

namespace vouch::cli {
namespace {

int ExitFor(WindowStatus s) {
  switch (s) {
    case WindowStatus::kValid:
      return kExitOk;
    case WindowStatus::kInvalid:
      return kExitInvalidWindow;
    case WindowStatus::kIdle:
      return kExitIdleWindow;
  }
  return kExitError;
}

void PrintWindow(const WindowSummary& w, bool json) {
  if (json) {
    fmt::print("{}\n", DumpJson(ToJson(w), 2));
  } else {
    fmt::print("{}", RenderWindowText(w));
  }
}

}  // namespace

int CmdClockSample(const GlobalOptions& g, std::vector<std::string> args) {
  auto [opts, cmd] = SplitAtDoubleDash(args);
  CLI::App app{
      "Run a command inside a clock window: lock, sample, run, write, judge.\n"
      "Exit: 0 valid window, 2 idle window (no summary; evidence kept), 3 invalid window "
      "(summary with reasons), 4 the command failed, 1 error",
      "clock sample"};
  std::string out;
  WindowFlags wf;
  bool json = false, quiet = false;
  PolicyFlags pf;
  app.add_option("--out", out, "evidence directory (default vouch-clock-DATE-TIME)");
  wf.Add(app);
  app.add_flag("--json", json, "print the summary as JSON");
  app.add_flag("--quiet", quiet, "do not show the command's output on the terminal");
  pf.Add(app);
  if (int rc = Parse(app, opts); rc >= 0) return rc;
  if (cmd.empty()) {
    fmt::print(
        stderr,
        "vouch clock sample: no command; usage: vouch clock sample [OPTIONS] -- CMD ARGS...\n");
    return kExitUsage;
  }
  auto dev = OpenDevice(g);
  if (!dev) return kExitError;
  auto checked = ChooseGpus(wf.gpus, *dev, {});
  if (!checked) {
    fmt::print(stderr, "vouch clock sample: {}\n", checked.error().message);
    return kExitUsage;
  }
  for (const auto& n : checked->notes) fmt::print(stderr, "vouch clock sample: warning: {}\n", n);
  (void)InstallInterruptHandler();
  auto lock = TakeLock(g, "clock sample", ShellJoin(RedactArgv(cmd)), wf.lock_timeout_s);
  if (!lock) {
    fmt::print(stderr, "vouch clock sample: {}\n", lock.error().message);
    return Interrupted() ? InterruptExitCode() : kExitError;
  }
  std::string tracer;
  if (wf.gpu_trace || !wf.gpu_trace_lib.empty()) {
    auto lib = FindTracerLibrary(wf.gpu_trace_lib);
    if (!lib) {
      fmt::print(stderr, "vouch clock sample: {}\n", lib.error().message);
      return kExitUsage;
    }
    tracer = *lib;
  }
  if (out.empty()) out = DefaultRunDir("clock");
  LegSpec spec;
  spec.argv = cmd;
  if (!tracer.empty()) {
    spec.env = {
        {"CUDA_INJECTION64_PATH", tracer},
        {"NVTX_INJECTION64_PATH", tracer},
        {"VOUCH_GPU_TRACE", (std::filesystem::absolute(out) / "gpu-trace.%p.jsonl").string()}};
  }
  spec.label = "clock sample";
  spec.timeout_ns = static_cast<std::int64_t>(wf.timeout_s * 1e9);  // checked by --timeout
  spec.stdout_path = (std::filesystem::path(out) / "stdout.txt").string();
  spec.stderr_path = (std::filesystem::path(out) / "stderr.txt").string();
  spec.tee_stdout = spec.tee_stderr = !quiet;
  WindowOptions wo;
  wo.gpus = checked->gpus;
  wo.gpus_named = checked->named;
  wo.gpu_source = checked->source;
  wo.interval_s = wf.interval_ms / 1000;
  wo.policy = pf.Apply(Policy{});
  wo.dir = out;
  wo.lock_clocks_mhz = wf.lock_clocks;
  wo.require_lock_clocks = wf.require_lock_clocks;
  if (auto s = MakeDirs(out); !s) {
    fmt::print(stderr, "vouch clock sample: {}\n", s.error().message);
    return kExitError;
  }
  LocalExecutor exec;
  auto m = MeasureLeg(*dev, exec, spec, wo, nullptr, nullptr);
  if (!m) {
    fmt::print(stderr, "vouch clock sample: {}\n", m.error().message);
    return kExitError;
  }
  for (const auto& e : m->errors) fmt::print(stderr, "vouch clock sample: evidence: {}\n", e);
  PrintWindow(m->window, json);
  fmt::print(stderr, "evidence: {} (samples {}, summary {})\n", out, m->samples_path,
             m->summary_path);
  if (!tracer.empty()) {
    // The trace of the whole command, attributed to this window.
    auto gt = gputrace::AnalyzeLegDir(out, std::nullopt);
    if (!gt) {
      fmt::print(stderr, "vouch clock sample: gpu trace: {}\n", gt.error().message);
    } else {
      nlohmann::json j = gputrace::ToJson(*gt);
      nlohmann::json sm = nlohmann::json::array();
      for (const auto& gw : m->window.gpus)
        if (gw.fold.sm_mhz)
          sm.push_back({{"gpu", gw.fold.gpu}, {"median_mhz", gw.fold.sm_mhz->median}});
      j["clock_window"] = {{"leg", 0},
                           {"arm", "clock sample"},
                           {"role", "window"},
                           {"dir", "."},
                           {"verdict", ToString(m->window.verdict.status)},
                           {"reasons", m->window.verdict.reasons},
                           {"sm_clock", sm}};
      (void)WriteFileAtomic((std::filesystem::path(out) / "gpu-trace.json").string(),
                            DumpJson(j, 2) + "\n");
      fmt::print(stderr, "{}",
                 gputrace::RenderLegGpuTraceText(*gt, AttributionLine(j["clock_window"])));
    }
  }
  if (!m->leg.Succeeded()) {
    fmt::print(stderr,
               "vouch clock sample: the command failed: {}; its window is kept as evidence but "
               "gives no number\n",
               m->leg.Describe());
    return m->leg.interrupted ? InterruptExitCode() : kExitCommandFailed;
  }
  return ExitFor(m->window.verdict.status);
}

int CmdClockCheck(const GlobalOptions&, std::vector<std::string> args) {
  CLI::App app{
      "Judge a saved window summary (window.json) by the policy (its own, or flags).\n"
      "Exit: 0 valid, 2 idle, 3 invalid, 1 unreadable",
      "clock check"};
  std::string path;
  bool json = false;
  PolicyFlags pf;
  app.add_option("SUMMARY", path, "window.json (or window-idle.json)")->required();
  app.add_flag("--json", json, "JSON output");
  pf.Add(app);
  if (int rc = Parse(app, args); rc >= 0) return rc;
  auto j = ReadJsonFile(path, kMaxRecordFileBytes);
  if (!j) {
    fmt::print(stderr, "vouch clock check: {}\n", j.error().message);
    return kExitError;
  }
  if (j->is_object() && j->value("schema", nlohmann::json()) == "vouch.window-idle") {
    static const JsonSchema kIdle =
        JsonSchema::Object({May("reasons", JsonSchema::Array(JsonSchema::String()))});
    if (auto ok = kIdle.Check(*j, path); !ok) {
      fmt::print(stderr, "vouch clock check: {}\n", ok.error().message);
      return kExitError;
    }
    fmt::print("{}: idle window (no summary)\n", path);
    for (const auto& r : j->value("reasons", std::vector<std::string>{})) fmt::print("  - {}\n", r);
    return kExitIdleWindow;
  }
  auto w = WindowSummaryFromJson(*j, path);
  if (!w) {
    fmt::print(stderr, "vouch clock check: {}\n", w.error().message);
    return kExitError;
  }
  w->policy = pf.Apply(w->policy);
  w->verdict = JudgeWindow(*w);
  PrintWindow(*w, json);
  return ExitFor(w->verdict.status);
}

int CmdClockPair(const GlobalOptions&, std::vector<std::string> args) {
  CLI::App app{
      "Can two saved windows be compared? Lists every rule with both values.\n"
      "Exit: 0 comparable, 3 refused, 1 unreadable",
      "clock pair"};
  std::string a, b;
  bool cross = false, json = false;
  PolicyFlags pf;
  app.add_option("A", a, "first window.json")->required();
  app.add_option("B", b, "second window.json")->required();
  app.add_flag("--allow-cross-boot", cross,
               "waive the boot id (only the boot id), stamping a caveat");
  app.add_flag("--json", json, "JSON output");
  std::string markdown;
  AddMarkdownOption(app, markdown, "the rules");
  pf.Add(app);
  if (int rc = Parse(app, args); rc >= 0) return rc;
  auto wa = ReadWindowSummary(a);
  auto wb = ReadWindowSummary(b);
  for (const auto* w : {&wa, &wb})
    if (!*w) {
      fmt::print(stderr, "vouch clock pair: {}\n", w->error().message);
      return kExitError;
    }
  Policy p = pf.Apply(wa->policy);
  wa->verdict = JudgeWindow(wa->gpus, p, wa->gpu_source);
  wb->verdict = JudgeWindow(wb->gpus, p, wb->gpu_source);
  auto v = PairWindows(*wa, *wb, p, cross);
  const std::string md = fmt::format("**vouch clock pair**: A {}, B {}\n\n{}", MarkdownCode(a),
                                     MarkdownCode(b), RenderPairMarkdown(v));
  if (!WriteMarkdownFile(
          markdown, [&] { return md; }, "clock pair"))
    return kExitError;
  if (json) {
    auto j = ToJson(v);
    j["a"] = a;
    j["b"] = b;
    j["policy"] = ToJson(p);
    fmt::print("{}\n", DumpJson(j, 2));
  } else if (markdown == "-") {
    fmt::print("{}", md);
  } else {
    fmt::print("A: {}\nB: {}\n{}", a, b, RenderPairText(v));
  }
  return v.paired ? kExitOk : kExitInvalidWindow;
}

int CmdClockReplay(const GlobalOptions&, std::vector<std::string> args) {
  CLI::App app{
      "Fold a recorded telemetry stream (or the part between two unix_s times) and judge it.\n"
      "Exit: 0 valid, 2 idle, 3 invalid, 1 unreadable",
      "clock replay"};
  std::string path, out;
  std::optional<double> from, to;
  std::vector<int> gpus;
  bool json = false;
  PolicyFlags pf;
  app.add_option("STREAM", path, "JSONL telemetry (the fixture format)")->required();
  app.add_option("--from", from, "start, in the stream's unix_s seconds")
      ->check(NumberFlag({-1e12, 1e12}));
  app.add_option("--to", to, "end, in the stream's unix_s seconds")
      ->check(NumberFlag({-1e12, 1e12}));
  AddGpuOption(app, gpus, "GPUs to judge (default: all in the stream)");
  app.add_option("--out", out, "also write the summary here");
  app.add_flag("--json", json, "JSON output");
  pf.Add(app);
  if (int rc = Parse(app, args); rc >= 0) return rc;
  auto dev = OpenSimulated(path, "", 0);
  auto samples = ReadSampleStream(path);
  if (!dev || !samples) {
    fmt::print(stderr, "vouch clock replay: {}\n",
               (!samples ? samples.error() : dev.error()).message);
    return kExitError;
  }
  auto checked = ChooseGpus(gpus, **dev, {}, false);
  if (!checked) {
    fmt::print(stderr, "vouch clock replay: {}\n", checked.error().message);
    return kExitUsage;
  }
  double lo = from.value_or(-1e300), hi = to.value_or(1e300);
  if (lo > hi) {
    fmt::print(stderr, "vouch clock replay: --from {} is after --to {}\n", lo, hi);
    return kExitUsage;
  }
  auto part = Slice(*samples, lo, hi);
  if (part.empty()) {
    fmt::print(
        stderr,
        "vouch clock replay: {} has no sample between {} and {} (it spans {:.3f} to {:.3f})\n",
        path, lo, hi, samples->front().unix_s, samples->back().unix_s);
    return kExitError;
  }
  WindowSummary w = DescribeDevice(**dev, checked->gpus);
  w.gpu_source = checked->source;
  w.device = fmt::format("replay of recorded telemetry {}", path);
  w.simulated = true;
  w.policy = pf.Apply(Policy{});
  w.samples_file = path;
  w.started_unix_s = part.front().unix_s;
  w.ended_unix_s = part.back().unix_s;
  for (auto& gw : w.gpus) {
    gw.fold = FoldWindow(SelectGpu(part, gw.state.index), w.policy);
    gw.fold.gpu = gw.state.index;
    gw.named = checked->named;
  }
  w.verdict = JudgeWindow(w);
  PrintWindow(w, json);
  if (!out.empty()) {
    if (auto s = WriteFileAtomic(out, DumpJson(ToJson(w), 2) + "\n"); !s) {
      fmt::print(stderr, "vouch clock replay: {}\n", s.error().message);
      return kExitError;
    }
  }
  return ExitFor(w.verdict.status);
}

}  // namespace vouch::cli
