#include "record/leg_runner.h"

#include <filesystem>

#include "metrics/channel.h"
#include "util/fs.h"

namespace vouch {
namespace {

Metric Builtin(std::string name, double v, std::string unit, Better b) {
  Metric m;
  m.name = std::move(name);
  m.value = v;
  m.unit = std::move(unit);
  m.better = b;
  m.source = "vouch";
  return m;
}

}  // namespace

std::vector<Metric> BuiltinMetrics(const LegResult& r, std::optional<std::uint64_t> device_mem,
                                   const WindowSummary& w) {
  std::vector<Metric> out;
  out.push_back(Builtin("vouch.wall_s", static_cast<double>(r.wall_ns) / 1e9, "s", Better::kLower));
  out.push_back(Builtin("vouch.exit_status", r.exit_code ? *r.exit_code : -1, "", Better::kNone));
  out.push_back(Builtin("vouch.peak_rss_bytes", static_cast<double>(r.peak_rss_bytes), "bytes",
                        Better::kLower));
  if (device_mem)
    out.push_back(Builtin("vouch.peak_device_mem_bytes", static_cast<double>(*device_mem), "bytes",
                          Better::kLower));
  if (!w.gpus.empty() && w.verdict.status != WindowStatus::kIdle) {
    double busy = 0;
    for (const auto& g : w.gpus) busy = std::max(busy, g.fold.busy_fraction);
    out.push_back(Builtin("vouch.gpu_busy_fraction", busy, "", Better::kNone));
    if (w.gpus.size() > 1)
      for (const auto& g : w.gpus)
        out.push_back(Builtin(fmt::format("vouch.gpu{}_busy_fraction", g.fold.gpu),
                              g.fold.busy_fraction, "", Better::kNone));
  }
  return out;
}

nlohmann::json ToJson(const LegRecord& l) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const auto& m : l.metrics) {
    nlohmann::json j = {
        {"name", m.name}, {"unit", m.unit}, {"better", BetterName(m.better)}, {"source", m.source}};
    if (m.text)
      j["text"] = *m.text;
    else
      j["value"] = m.value;
    if (!m.samples.empty()) j["samples"] = m.samples;
    metrics.push_back(std::move(j));
  }
  nlohmann::json leftovers = nlohmann::json::array();
  for (const auto& p : l.result.leftovers) leftovers.push_back({{"pid", p.pid}, {"name", p.name}});
  nlohmann::json res = {
      {"argv", l.result.argv},
      {"pid", l.result.pid},
      {"exit_code", l.result.exit_code ? nlohmann::json(*l.result.exit_code) : nlohmann::json()},
      {"signal", l.result.term_signal ? nlohmann::json(l.result.signal_name) : nlohmann::json()},
      {"timed_out", l.result.timed_out},
      {"interrupted", l.result.interrupted},
      {"outcome", l.result.Describe()},
      {"wall_ns", l.result.wall_ns},
      {"start_unix_ns", l.result.start_unix_ns},
      {"end_unix_ns", l.result.end_unix_ns},
      {"peak_rss_bytes", l.result.peak_rss_bytes},
      {"peak_device_mem_bytes",
       l.peak_device_mem_bytes ? nlohmann::json(*l.peak_device_mem_bytes) : nlohmann::json()},
      {"stdout",
       {{"file", "stdout.txt"},
        {"bytes", l.result.out.produced_bytes},
        {"dropped_bytes", l.result.out.dropped_bytes},
        {"write_error", l.result.out.write_error}}},
      {"stderr",
       {{"file", "stderr.txt"},
        {"bytes", l.result.err.produced_bytes},
        {"dropped_bytes", l.result.err.dropped_bytes},
        {"write_error", l.result.err.write_error}}},
      {"leftover_processes", leftovers},
      {"notes", l.result.notes}};
  return {{"index", l.index},    // 0-based position in legs[]
          {"leg", l.index + 1},  // the number people see (progress, reasons, dir)
          {"arm", l.arm},
          {"role", l.role},
          {"discard_cause",
           l.discard_cause.empty() ? nlohmann::json() : nlohmann::json(l.discard_cause)},
          {"dir", l.dir},
          {"result", res},
          {"metrics", metrics},
          {"metrics_error", l.metrics_error},
          {"window", ToJson(l.window)},
          {"evidence_errors", l.evidence_errors},
          {"valid", l.valid},
          {"reasons", l.reasons}};
}

Result<LegRecord> RunLeg(Device& device, LegExecutor& executor, const LegConfig& config,
                         const std::string& run_dir, const Arm& arm, int index,
                         const std::string& role, const ProgressFn& progress) {
  namespace fs = std::filesystem;
  LegRecord rec;
  rec.index = index;
  rec.arm = arm.name;
  rec.role = role;
  if (role == "warmup") rec.discard_cause = "warmup";
  // People count legs from 1 (progress lines, reasons, directories); INDEX is the 0-based
  // position in the record's legs[].
  rec.dir = fmt::format("legs/{:03d}-{}-{}", index + 1, arm.name, role);
  std::string dir = (fs::path(run_dir) / rec.dir).string();
  std::string metrics_path = (fs::path(dir) / "metrics.jsonl").string();
  LegSpec spec;
  spec.argv = arm.argv;
  spec.shell = arm.shell;
  spec.env = arm.env;
  spec.env.emplace_back("VOUCH_METRICS", fs::absolute(metrics_path).string());
  spec.cwd = arm.cwd;
  spec.timeout_ns = static_cast<std::int64_t>(config.timeout_s * 1e9);
  spec.stdout_path = (fs::path(dir) / "stdout.txt").string();
  spec.stderr_path = (fs::path(dir) / "stderr.txt").string();
  spec.tee_stdout = spec.tee_stderr = config.tee;
  spec.output_cap_bytes = config.output_cap_bytes;
  spec.label = fmt::format("leg {} ({} {})", index + 1, arm.name, role);
  WindowOptions wo = config.window;
  wo.dir = dir;
  if (auto s = MakeDirs(dir); !s) return s.error();

  // The measured region comes from the channel's begin/end markers.
  std::string channel_error;
  auto region_of = [&](const LegResult& r) -> std::optional<Region> {
    std::error_code ec;
    if (!fs::exists(metrics_path, ec)) return std::nullopt;
    auto ch = ReadMetricsChannel(metrics_path);
    if (!ch) {
      channel_error = ch.error().message;
      return std::nullopt;
    }
    std::optional<double> begin, end;
    for (const auto& e : ch->events) {
      if (!e.unix_s) continue;
      if (e.kind == ChannelEvent::Kind::kBegin && !begin) begin = *e.unix_s;
      if (e.kind == ChannelEvent::Kind::kEnd) end = *e.unix_s;
    }
    if (!begin) return std::nullopt;
    if (!end) end = static_cast<double>(r.end_unix_ns) / 1e9;  // opened but never closed
    return Region{*begin, *end};
  };
  auto t0 = std::chrono::steady_clock::now();
  std::function<void(const std::optional<Sample>&)> tick;
  if (progress)
    tick = [&](const std::optional<Sample>& last) {
      progress(last, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    };
  auto m = MeasureLeg(device, executor, spec, wo, region_of, nullptr, tick);
  if (!m) return MakeError("{}: {}", spec.label, m.error().message);
  rec.result = std::move(m->leg);
  rec.window = std::move(m->window);
  rec.peak_device_mem_bytes = m->peak_device_mem_bytes;
  rec.evidence_errors = m->errors;

  if (!rec.result.Succeeded())
    rec.reasons.push_back(fmt::format("the command {}", rec.result.Describe()));
  if (rec.window.verdict.status != WindowStatus::kValid) {
    if (rec.window.verdict.reasons.empty())
      rec.reasons.push_back(fmt::format("window {}", ToString(rec.window.verdict.status)));
    for (const auto& r : rec.window.verdict.reasons)
      rec.reasons.push_back(fmt::format("window {}: {}", ToString(rec.window.verdict.status), r));
  }
  // Metrics: only from a leg that ran to completion; a failed leg's output is not a number.
  if (rec.result.Succeeded()) {
    LegOutputs outs{spec.stdout_path, spec.stderr_path, metrics_path,
                    arm.cwd.empty() ? fs::current_path().string() : arm.cwd};
    std::vector<MetricSpec> specs = config.metrics;
    std::error_code ec;
    if (specs.empty() && fs::exists(metrics_path, ec)) specs.push_back(*ParseMetricSpec("channel"));
    if (!specs.empty()) {
      auto got = ExtractAllMetrics(specs, outs);
      if (got)
        rec.metrics = std::move(*got);
      else
        rec.metrics_error = got.error().message;
    }
    if (!rec.metrics_error.empty()) rec.reasons.push_back("metrics: " + rec.metrics_error);
  }
  if (!channel_error.empty() && rec.metrics_error != channel_error)
    rec.reasons.push_back("metrics channel: " + channel_error);
  auto builtin = BuiltinMetrics(rec.result, rec.peak_device_mem_bytes, rec.window);
  rec.metrics.insert(rec.metrics.end(), builtin.begin(), builtin.end());
  rec.valid = rec.reasons.empty();
  // The leg's own record beside its evidence.
  (void)WriteFileAtomic((fs::path(dir) / "leg.json").string(), ToJson(rec).dump(2) + "\n");
  return rec;
}

}  // namespace vouch
