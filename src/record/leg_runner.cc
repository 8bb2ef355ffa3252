#include "record/leg_runner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "gputrace/leg_trace.h"
#include "gputrace/trust.h"
#include "metrics/channel.h"
#include "metrics/reserved.h"
#include "stats/percentiles.h"
#include "stats/serving_load.h"
#include "util/fs.h"
#include "util/host.h"
#include "util/json_io.h"
#include "util/number.h"
#include "util/redact.h"

namespace vouch {
namespace {

// A metric file as it was before the leg: one this leg did not write (left by an earlier
// leg or run) must not give this leg's numbers (issue 11: legs 2 and 3 quoted leg 1's).
// User files are never deleted or moved; the file is compared with this snapshot.
struct FileSnapshot {
  std::string spec, path;
  bool existed = false;
  struct stat st {};
  double taken_unix_s = 0;
};

std::int64_t Ns(const struct timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

bool ReadsNamedFile(const MetricSpec& spec) {
  return spec.kind != MetricSpec::Kind::kChannel && spec.from != "stdout" && spec.from != "stderr";
}

std::vector<FileSnapshot> SnapshotMetricFiles(const std::vector<MetricSpec>& specs,
                                              const LegOutputs& outs) {
  std::vector<FileSnapshot> snaps;
  for (const auto& spec : specs) {
    if (!ReadsNamedFile(spec)) continue;
    FileSnapshot f;
    f.spec = spec.text;
    f.path = SourcePath(spec, outs);
    f.existed = ::stat(f.path.c_str(), &f.st) == 0;
    f.taken_unix_s = UnixNowSeconds();
    snaps.push_back(std::move(f));
  }
  return snaps;
}

// Filesystems stamp with a coarse clock, network ones with the server's: a file is "older
// than the leg" only beyond this margin.
constexpr double kMtimeToleranceS = 1.0;

// "" when the file is this leg's (or absent: extraction says so), else the reason.
std::string StaleMetricFile(const FileSnapshot& before) {
  struct stat now {};
  if (::stat(before.path.c_str(), &now) != 0) return "";
  const double mtime_s = static_cast<double>(Ns(now.st_mtim)) / 1e9;
  const std::string when = IsoTimeUtc(mtime_s);
  if (before.existed && now.st_dev == before.st.st_dev && now.st_ino == before.st.st_ino &&
      now.st_size == before.st.st_size && Ns(now.st_mtim) == Ns(before.st.st_mtim) &&
      Ns(now.st_ctim) == Ns(before.st.st_ctim)) {
    return fmt::format(
        "metric file '{}' ({}) was not written by this leg: it is unchanged since before the leg "
        "started (last modified {}); a metric must come from its own leg: have the command "
        "write the file every time it runs",
        before.path, before.spec, when);
  }
  if (mtime_s < before.taken_unix_s - kMtimeToleranceS) {
    return fmt::format(
        "metric file '{}' ({}) is older than the leg (last modified {}, the leg started {}): "
        "it was not written by this leg",
        before.path, before.spec, when, IsoTimeUtc(before.taken_unix_s));
  }
  return "";
}

// Reads the channel while the leg runs (on the executor's polls, every 20 ms), so that a
// begin/end line without unix_s gets the time vouch saw it, as docs/metrics.md says.
// Bounded: a regular file only (never a FIFO or device: O_NONBLOCK, fstat), at most 4 MiB a
// poll, and it stops following past the channel's own size cap.
class ChannelTail : public LegObserver {
 public:
  explicit ChannelTail(std::string path) : path_(std::move(path)) {}
  void OnPoll(const std::vector<int>&) override { Read(); }
  void Read() {
    if (done_) return;
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        static_cast<std::uint64_t>(st.st_size) > kMaxChannelBytes) {
      done_ = true;  // not something to follow; the reader after the leg says why
      ::close(fd);
      return;
    }
    const double now = UnixNowSeconds();
    char buf[64 * 1024];
    std::uint64_t budget = 4u << 20;
    while (budget > 0 && offset_ < static_cast<std::uint64_t>(st.st_size)) {
      const ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(offset_));
      if (n <= 0) break;
      offset_ += static_cast<std::uint64_t>(n);
      budget -= std::min<std::uint64_t>(budget, static_cast<std::uint64_t>(n));
      for (ssize_t i = 0; i < n; ++i) {
        if (buf[i] != '\n') {
          if (partial_.size() < 4096) partial_ += buf[i];  // an event line is short
          continue;
        }
        ++lines_;
        if (partial_.find("\"event\"") != std::string::npos &&
            partial_.find("\"unix_s\"") == std::string::npos)
          seen_[lines_] = now;
        partial_.clear();
      }
    }
    ::close(fd);
  }
  // When line LINE (1-based) was first seen complete, if it was.
  std::optional<double> SeenAt(int line) const {
    auto it = seen_.find(line);
    return it == seen_.end() ? std::nullopt : std::optional<double>(it->second);
  }

 private:
  static constexpr std::uint64_t kMaxChannelBytes = 256ull << 20;  // ReadMetricsChannel's cap
  std::string path_;
  std::uint64_t offset_ = 0;
  int lines_ = 0;
  std::string partial_;
  std::map<int, double> seen_;
  bool done_ = false;
};

// A stream that lost bytes over the cap may have lost its last figures (the final
// throughput after the progress lines): nothing read from it can be quoted.
std::string CutStream(const MetricSpec& spec, const LegResult& r) {
  if (spec.kind == MetricSpec::Kind::kChannel || ReadsNamedFile(spec)) return "";
  const StreamResult& st = spec.from == "stderr" ? r.err : r.out;
  if (st.dropped_bytes == 0) return "";
  return fmt::format(
      "metric spec '{}' reads {}, which was cut at the output cap ({} of {} bytes kept): its "
      "last figures may be lost, so no metric from it can be quoted; raise --output-cap-mib",
      spec.text, spec.from, st.written_bytes, st.produced_bytes);
}

Metric Builtin(std::string name, double v, std::string unit, Better b) {
  Metric m;
  m.name = std::move(name);
  m.value = v;
  m.unit = std::move(unit);
  m.better = b;
  m.source = std::string(kVouchSource);
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
    if (!m.config.empty()) j["config"] = m.config;
    metrics.push_back(std::move(j));
  }
  nlohmann::json leftovers = nlohmann::json::array();
  for (const auto& p : l.result.leftovers)
    leftovers.push_back(
        {{"pid", p.pid},
         {"name", p.name},
         {"argv", RedactArgv(p.argv)},
         {"ended_by", p.ended_by.empty() ? nlohmann::json() : nlohmann::json(p.ended_by)}});
  nlohmann::json res = {
      {"argv", RedactArgv(l.result.argv)},
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
  if (auto hex = HexIfNotUtf8(RedactArgv(l.result.argv)); !hex.is_null()) res["argv_hex"] = hex;
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
          {"reasons", l.reasons},
          {"gpu_trace", l.gpu_trace}};
}

nlohmann::json WindowAttribution(const LegRecord& l) {
  nlohmann::json sm;
  for (const auto& g : l.window.gpus)
    if (g.fold.sm_mhz)
      sm.push_back({{"gpu", g.fold.gpu},
                    {"median_mhz", g.fold.sm_mhz->median},
                    {"min_mhz", g.fold.sm_mhz->min},
                    {"max_mhz", g.fold.sm_mhz->max}});
  return {{"leg", l.index},
          {"arm", l.arm},
          {"role", l.role},
          {"dir", l.dir},
          {"verdict", ToString(l.window.verdict.status)},
          {"reasons", l.window.verdict.reasons},
          {"sm_clock", sm.is_null() ? nlohmann::json::array() : sm}};
}

std::string AttributionLine(const nlohmann::json& window) {
  if (!window.is_object() || !window.contains("leg")) return "unattributed: no clock window";
  std::string clock;
  for (const auto& g : window.value("sm_clock", nlohmann::json::array()))
    clock += fmt::format(", GPU {} SM median {:.0f} MHz", g.value("gpu", -1),
                         g.value("median_mhz", 0.0));
  // "leg" is the 0-based position in legs[]; people count legs from 1.
  const int leg = window.value("leg", -1);
  return fmt::format("clock window: leg {} ({} {}), window {}{}", leg >= 0 ? leg + 1 : leg,
                     window.value("arm", ""), window.value("role", ""),
                     window.value("verdict", "?"), clock);
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
  if (!config.gpu_trace_lib.empty()) {
    for (const auto& [k, v] : arm.env)
      if (k == "CUDA_INJECTION64_PATH" || k == "NVTX_INJECTION64_PATH" || k == "VOUCH_GPU_TRACE")
        return MakeError("leg {} ({} {}): --gpu-trace sets {} itself, and the arm sets it too ({})",
                         index + 1, arm.name, role, k, v);
    spec.env.emplace_back("CUDA_INJECTION64_PATH", config.gpu_trace_lib);
    spec.env.emplace_back("NVTX_INJECTION64_PATH", config.gpu_trace_lib);
    spec.env.emplace_back("VOUCH_GPU_TRACE", (fs::absolute(dir) / "gpu-trace.%p.jsonl").string());
  }
  spec.cwd = arm.cwd;
  auto timeout_ns = SecondsToNs(config.timeout_s, "--timeout");
  if (!timeout_ns || *timeout_ns < 0)
    return MakeError("leg {} ({} {}): --timeout {} s is not a timeout", index + 1, arm.name, role,
                     config.timeout_s);
  spec.timeout_ns = *timeout_ns;
  spec.stdout_path = (fs::path(dir) / "stdout.txt").string();
  spec.stderr_path = (fs::path(dir) / "stderr.txt").string();
  spec.tee_stdout = spec.tee_stderr = config.tee;
  spec.output_cap_bytes = config.output_cap_bytes;
  spec.label = fmt::format("leg {} ({} {})", index + 1, arm.name, role);
  WindowOptions wo = config.window;
  wo.dir = dir;
  wo.summary_sync = FileSync::kNoFsync;  // the run's journal holds the window, synced
  if (auto s = MakeDirs(dir); !s) return s.error();
  // The channel is fresh for every leg: a file left in this leg's folder (by an earlier
  // run there) must not lend it values. It is vouch's own file.
  std::error_code rm_ec;
  std::filesystem::remove(metrics_path, rm_ec);
  const LegOutputs outs{spec.stdout_path, spec.stderr_path, metrics_path,
                        arm.cwd.empty() ? CurrentDirOrEmpty() : arm.cwd};
  const std::vector<FileSnapshot> before = SnapshotMetricFiles(config.metrics, outs);

  // The measured region comes from the channel's begin/end markers; a marker without
  // unix_s is placed where the tail saw it (or at the leg's end, when it came last).
  std::string channel_error;
  ChannelTail tail(metrics_path);
  auto region_of = [&](const LegResult& r) -> std::optional<Region> {
    std::error_code ec;
    if (!fs::exists(metrics_path, ec)) return std::nullopt;
    auto ch = ReadMetricsChannel(metrics_path);
    if (!ch) {
      channel_error = ch.error().message;
      return std::nullopt;
    }
    if (auto in = CheckMarkersInLeg(*ch, metrics_path, spec.label, r.start_unix_ns, r.end_unix_ns);
        !in) {
      channel_error = in.error().message;
      return std::nullopt;
    }
    const double leg_end_s = static_cast<double>(r.end_unix_ns) / 1e9;
    std::optional<double> begin, end;
    for (const auto& e : ch->events) {
      const double at =
          e.unix_s ? *e.unix_s : std::min(tail.SeenAt(e.line).value_or(leg_end_s), leg_end_s);
      if (e.kind == ChannelEvent::Kind::kBegin && !begin) begin = at;
      if (e.kind == ChannelEvent::Kind::kEnd) end = at;
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
  auto m = MeasureLeg(device, executor, spec, wo, region_of, &tail, tick);
  if (!m) return MakeError("{}: {}", spec.label, m.error().message);
  rec.result = std::move(m->leg);
  rec.window = std::move(m->window);
  rec.peak_device_mem_bytes = m->peak_device_mem_bytes;
  rec.evidence_errors = m->errors;

  if (!rec.result.Succeeded())
    rec.reasons.push_back(fmt::format("the command {}", rec.result.Describe()));
  else if (!rec.result.leftovers.empty())
    // Its work may have gone on past the leg's end (on the GPU too), outside its window.
    rec.reasons.push_back(rec.result.DescribeLeftovers() +
                          ": work of the leg ran past its end, outside its window");
  // A command that crashed or was stopped ended its window early: the window's own reasons
  // ("only 3 busy readings ... give the command more work") would send the user after the
  // wrong cause. They stay in the window's verdict; the leg's reason is the command's failure.
  if (rec.window.verdict.status != WindowStatus::kValid && rec.result.Succeeded()) {
    if (rec.window.verdict.reasons.empty())
      rec.reasons.push_back(fmt::format("window {}", ToString(rec.window.verdict.status)));
    for (const auto& r : rec.window.verdict.reasons)
      rec.reasons.push_back(fmt::format("window {}: {}", ToString(rec.window.verdict.status), r));
  }
  // Metrics: only from a leg that ran to completion; a failed leg's output is not a number.
  if (rec.result.Succeeded()) {
    std::vector<MetricSpec> specs = config.metrics;
    std::error_code ec;
    if (specs.empty() && fs::exists(metrics_path, ec)) specs.push_back(*ParseMetricSpec("channel"));
    for (const auto& f : before)
      if (auto stale = StaleMetricFile(f); !stale.empty() && rec.metrics_error.empty())
        rec.metrics_error = stale;
    for (const auto& sp : specs)
      if (auto cut = CutStream(sp, rec.result); !cut.empty() && rec.metrics_error.empty())
        rec.metrics_error = cut;
    if (!specs.empty() && rec.metrics_error.empty()) {
      auto got = ExtractAllMetrics(specs, outs);
      if (got) {
        rec.metrics = std::move(*got);
        // Serving figures that are no figures (a saturated run's latencies, a percentile its
        // request count cannot support) leave the metrics; the leg's notes say why.
        for (auto& line : RefuseLatenciesOfAnInvalidLoad(&rec.metrics))
          rec.result.notes.push_back(kServingNotePrefix + line);
        for (auto& line : RefuseUnsupportedPercentiles(&rec.metrics))
          rec.result.notes.push_back(kServingNotePrefix + line);
      } else
        rec.metrics_error = got.error().message;
    }
    if (!rec.metrics_error.empty()) rec.reasons.push_back("metrics: " + rec.metrics_error);
  }
  if (!channel_error.empty() && rec.metrics_error != channel_error)
    rec.reasons.push_back("metrics channel: " + channel_error);
  // vouch's own figures: a leg's metric of the same name (which every source refuses) makes
  // the leg's metrics an error, never vouch's figure shadowed.
  auto add_own = [&](const std::vector<Metric>& own) {
    if (auto s = AddVouchMetrics(&rec.metrics, own); !s) {
      std::erase_if(rec.metrics, [](const Metric& x) { return !IsVouchSource(x.source); });
      if (rec.metrics_error.empty()) rec.metrics_error = s.error().message;
      rec.reasons.push_back("metrics: " + s.error().message);
      (void)AddVouchMetrics(&rec.metrics, own);
    }
  };
  add_own(BuiltinMetrics(rec.result, rec.peak_device_mem_bytes, rec.window));
  if (!config.gpu_trace_lib.empty()) {
    // The markers lie inside the leg (region_of checks them): their nanoseconds fit.
    std::optional<gputrace::RegionNs> region;
    std::string region_error;
    if (auto r = region_of(rec.result)) {
      auto b = SecondsToNs(r->begin_unix_s, "measured region begin");
      auto e = SecondsToNs(r->end_unix_s, "measured region end");
      if (b && e)
        region = gputrace::RegionNs{*b, *e};
      else
        region_error = (!b ? b : e).error().message;
    }
    auto g = region_error.empty() ? gputrace::AnalyzeLegDir(dir, region)
                                  : Result<gputrace::LegGpuTrace>(Error{region_error});
    if (!g) {
      rec.reasons.push_back("gpu trace: " + g.error().message);
    } else {
      // An override that does not parse was refused before any leg (run_common.cc).
      auto cost_ns = gputrace::TracerLaunchCostOverride();
      gputrace::EstimateTracerCost(&*g, cost_ns ? *cost_ns : std::nullopt);
      if (g->dropped > 0)
        rec.reasons.push_back(fmt::format(
            "gpu trace: CUPTI dropped {} record(s): its GPU figures are lower bounds", g->dropped));
      if (g->partial && rec.result.Succeeded())
        rec.reasons.push_back("gpu trace: partial (a traced process did not exit cleanly)");
      // A second CUPTI client, or work the sampler saw and the trace did not: no gpu.* figure
      // (gputrace/trust.h), with the reason; the record keeps what the rule read.
      g->refused = gputrace::TraceRefusals(*g, &rec.window);
      for (const auto& r : g->refused) rec.reasons.push_back("gpu trace: " + r);
      if (rec.result.Succeeded() && g->refused.empty()) add_own(gputrace::GpuTraceMetrics(*g));
      rec.gpu_trace = gputrace::ToJson(*g);
      rec.gpu_trace["clock_window"] = WindowAttribution(rec);
      (void)WriteFileAtomic((fs::path(dir) / "gpu-trace.json").string(),
                            DumpJson(rec.gpu_trace, 2) + "\n");
    }
  }
  rec.valid = rec.reasons.empty();
  // The leg's own record beside its evidence (not synced: the run's journal, synced, holds
  // the same object).
  (void)WriteFileAtomic((fs::path(dir) / "leg.json").string(), DumpJson(ToJson(rec), 2) + "\n",
                        FileSync::kNoFsync);
  return rec;
}

}  // namespace vouch
