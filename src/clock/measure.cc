#include "clock/measure.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "util/fs.h"
#include "util/host.h"
#include "util/json_io.h"
#include "util/redact.h"

namespace vouch {
namespace {

std::vector<int> AllGpus(Device& d) {
  std::vector<int> g;
  for (int i = 0; i < d.Count(); ++i) g.push_back(i);
  return g;
}

}  // namespace

WindowSummary DescribeDevice(Device& device, const std::vector<int>& gpus) {
  WindowSummary w;
  w.simulated = device.Simulated();
  w.device = device.Describe();
  HostInfo h = ReadHostInfo();
  w.hostname = h.hostname;
  w.kernel = h.kernel;
  w.boot_id = device.BootId();
  for (int g : gpus) w.gpus.push_back({device.Static(g), Fold{}, false, std::nullopt});
  return w;
}

Result<MeasuredLeg> MeasureLeg(
    Device& device, LegExecutor& executor, const LegSpec& spec, const WindowOptions& opt,
    const std::function<std::optional<Region>(const LegResult&)>& region_of, LegObserver* observer,
    const std::function<void(const std::optional<Sample>&)>& on_tick) {
  std::vector<int> gpus = opt.gpus.empty() ? AllGpus(device) : opt.gpus;
  if (gpus.empty()) return MakeError("the device has no GPU to sample");
  if (auto s = MakeDirs(opt.dir); !s) return s.error();
  MeasuredLeg m;
  m.samples_path = (std::filesystem::path(opt.dir) / "samples.jsonl").string();
  m.window = DescribeDevice(device, gpus);
  m.window.policy = opt.policy;
  m.window.command = RedactArgv(spec.argv);
  m.window.samples_file = "samples.jsonl";
  m.window.gpu_source = opt.gpu_source;
  if (device.Simulated())
    m.window.caveats.push_back("simulated device: these clocks are a replay, not a measurement");

  // Opt-in clock lock, reset on every path out of this function.
  std::vector<int> locked;
  struct Reset {
    Device& d;
    std::vector<int>& g;
    std::vector<std::string>& errors;
    ~Reset() {
      for (int x : g)
        if (auto s = d.ResetClocks(x); !s)
          errors.push_back("resetting the clock lock: " + s.error().message);
    }
  } reset{device, locked, m.errors};
  if (opt.lock_clocks_mhz) {
    for (int g : gpus) {
      auto s = device.LockClocks(g, *opt.lock_clocks_mhz);
      if (!s) {
        if (opt.require_lock_clocks)
          return MakeError("clock locking was required and refused: {}", s.error().message);
        m.window.caveats.push_back(
            fmt::format("clock lock at {} MHz refused ({}); fell back to sampling the clock",
                        *opt.lock_clocks_mhz, s.error().message));
        break;
      }
      locked.push_back(g);
    }
    if (!locked.empty())
      m.window.caveats.push_back(fmt::format("SM clock locked at {} MHz for this leg (reset after)",
                                             *opt.lock_clocks_mhz));
  }

  Sampler sampler(device, SamplerOptions{gpus, opt.interval_s, 0.1, m.samples_path, 0.5});
  if (auto s = sampler.Start(); !s) return s.error();
  m.window.started_unix_s = UnixNowSeconds();
  // The driver's violation counters and instant power at the window's edges: milliseconds a
  // read, so never in the poll loop (telemetry/edge.h).
  auto read_edges = [&] {
    std::vector<EdgeReading> e;
    for (int g : gpus) {
      e.push_back(device.ReadEdge(g));
      e.back().unix_s = UnixNowSeconds();
    }
    return e;
  };
  const std::vector<EdgeReading> edges_begin = read_edges();
  // Forwards the leg's polls to OBSERVER and shows the sampler's latest reading to ON_TICK.
  struct Tick : LegObserver {
    LegObserver* inner;
    const std::function<void(const std::optional<Sample>&)>& tick;
    Sampler& sampler;
    int gpu;
    Tick(LegObserver* i, const std::function<void(const std::optional<Sample>&)>& t, Sampler& s,
         int g)
        : inner(i), tick(t), sampler(s), gpu(g) {}
    void OnStart(int pid) override {
      if (inner) inner->OnStart(pid);
    }
    void OnPoll(const std::vector<int>& pids) override {
      if (inner) inner->OnPoll(pids);
      if (tick) tick(sampler.Last(gpu));
    }
  } tick_observer(observer, on_tick, sampler, gpus.front());
  auto leg = executor.Run(spec, &tick_observer);
  const std::vector<EdgeReading> edges_end = read_edges();
  m.window.ended_unix_s = UnixNowSeconds();
  // The boot id at the close of the window: on a real machine it cannot change while the
  // leg runs (a reboot ends the leg), and reading it last lets a simulated reboot land.
  m.window.boot_id = device.BootId();
  Status stopped = sampler.Stop();
  if (!stopped) m.errors.push_back(stopped.error().message);
  m.sampler = sampler.Stats();
  if (!leg) {
    // The leg never started; the samples are still on disk.
    return MakeError("{} (the window's samples are in {})", leg.error().message, m.samples_path);
  }
  m.leg = std::move(*leg);
  m.peak_device_mem_bytes = sampler.PeakDeviceMemory(m.leg.pids_seen);

  std::vector<Sample> all = sampler.Samples();
  std::vector<DriverStream> driver = sampler.DriverStreams();
  std::optional<Region> region = region_of ? region_of(m.leg) : std::nullopt;
  if (region) {
    m.window.region_begin_unix_s = region->begin_unix_s;
    m.window.region_end_unix_s = region->end_unix_s;
  }
  for (size_t gi = 0; gi < m.window.gpus.size(); ++gi) {
    auto& g = m.window.gpus[gi];
    g.throttle = FoldEdges(edges_begin[gi], edges_end[gi]);
    if (g.throttle && region)
      g.throttle->notes.push_back(
          "the counters cover the whole window (read at its edges), not only the marked region");
    auto mine = SelectGpu(all, g.state.index);
    if (region) mine = Slice(mine, region->begin_unix_s, region->end_unix_s);
    g.fold = FoldWindow(mine, opt.policy);
    g.fold.gpu = g.state.index;
    // The driver's own timestamps, where nvmlDeviceGetSamples answers (power and
    // utilization on the H200): the readings the polls missed, counted by the driver.
    for (const auto& d : driver)
      if (d.gpu == g.state.index) {
        if (!d.error.empty()) {
          g.fold.driver_errors.push_back(d.error);
          continue;
        }
        if (mine.empty()) continue;
        auto c = CountDriverReadings(ToString(d.quantity), d.samples, mine, mine.front().unix_s,
                                     mine.back().unix_s);
        if (c) g.fold.driver.push_back(*c);
      }
    g.named = opt.gpus_named;
  }
  m.window.verdict = JudgeWindow(m.window);
  if (!region && m.window.verdict.status == WindowStatus::kInvalid) {
    for (const auto& r : m.window.verdict.reasons)
      if (r.find("busy readings are") != std::string::npos) {
        m.window.verdict.notes.push_back(
            "the whole leg was judged (no begin/end markers): start-up idle counts against it");
        break;
      }
  }
  nlohmann::json j = ToJson(m.window);
  if (m.window.verdict.status == WindowStatus::kIdle) {
    // An idle window gives no summary; its evidence and reason are still written.
    m.summary_path = (std::filesystem::path(opt.dir) / "window-idle.json").string();
    nlohmann::json idle = {
        {"schema", "vouch.window-idle"},         {"schema_version", 1},
        {"simulated", m.window.simulated},       {"device", m.window.device},
        {"command", m.window.command},           {"started_unix_s", m.window.started_unix_s},
        {"ended_unix_s", m.window.ended_unix_s}, {"samples_file", m.window.samples_file},
        {"reasons", m.window.verdict.reasons}};
    j = idle;
  } else {
    m.summary_path = (std::filesystem::path(opt.dir) / "window.json").string();
  }
  if (auto s = WriteFileAtomic(m.summary_path, DumpJson(j, 2) + "\n", opt.summary_sync); !s)
    m.errors.push_back(s.error().message);
  return m;
}

}  // namespace vouch
