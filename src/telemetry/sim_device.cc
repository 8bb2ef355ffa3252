// The simulated device: replays recorded telemetry through the Device interface, so that
// every rule runs in CI on real H200 numbers. Always labelled as simulated.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "telemetry/device.h"
#include "telemetry/sim_builtin.h"
#include "util/fs.h"
#include "util/host.h"
#include "util/json_io.h"
#include "util/number.h"
#include "util/strings.h"

namespace vouch {
namespace {

constexpr double kDriverBufferS = 2.4;  // NVML keeps about 120 power samples at 20 ms

// The quantities nvmlDeviceGetSamples answers for on the simulated device.
constexpr size_t kDriverQuantities = 3;
size_t QuantityIndex(DriverQuantity q) {
  return q == DriverQuantity::kPower ? 0 : q == DriverQuantity::kGpuUtil ? 1 : 2;
}

std::optional<double> DriverValue(const Sample& x, DriverQuantity q) {
  if (q == DriverQuantity::kPower && x.power_mw) return static_cast<double>(*x.power_mw);
  if (q == DriverQuantity::kGpuUtil && x.util_gpu_pct) return *x.util_gpu_pct;
  if (q == DriverQuantity::kMemUtil && x.util_mem_pct) return *x.util_mem_pct;
  return std::nullopt;
}

// A driver update of the replayed stream: a sample whose value differs from the sample before
// it, at OFF seconds from the stream's first sample.
struct Change {
  double off = 0;
  double value = 0;
};

// One quantity's updates within a loop of the stream, found once when the stream is loaded.
// The first sample's is kept apart: whether it is an update depends on what came before it.
struct Changes {
  std::optional<double> first_value;  // the first sample's value
  std::vector<Change> later;          // updates at the second sample and after, in order
  std::optional<double> last_value;   // the stream's last value (of the last sample having one)
  std::optional<double> back_value;   // the last sample's value (none when it has none)
};

Changes FindChanges(const std::vector<Sample>& s, DriverQuantity q) {
  Changes c;
  const double t0 = s.front().t_s;
  c.first_value = DriverValue(s.front(), q);
  std::optional<double> prev = c.first_value;
  for (size_t i = 1; i < s.size(); ++i) {
    std::optional<double> v = DriverValue(s[i], q);
    if (v && (!prev || *v != *prev)) c.later.push_back({s[i].t_s - t0, *v});
    prev = v;
  }
  c.back_value = prev;
  for (auto it = s.rbegin(); it != s.rend() && !c.last_value; ++it)
    c.last_value = DriverValue(*it, q);
  return c;
}

// One line of a replayed stream's violation counters (STREAM.counters.jsonl): cumulative
// nanoseconds per cause at stream time t_s, and the power the edges read.
struct CounterLine {
  double t_s = 0;
  std::map<ThrottleCause, double> violation_ns;
  std::optional<double> power_instant_w, power_average_w;
};

// The lines of PATH per GPU, in time order; an error names the line.
Result<std::vector<std::vector<CounterLine>>> ReadCounterLines(const std::string& path, int gpus) {
  auto text = ReadFile(path, 64ull << 20);
  if (!text) return text.error();
  static const JsonSchema kLine = JsonSchema::Object({
      Must("t_s", JsonSchema::Number()),
      May("gpu", JsonSchema::Integer(0, 1023)),
      May("violation_ns", JsonSchema::Map(JsonSchema::Number(0, 1e21))),
      May("power_instant_w", JsonSchema::Number(0, 1e7)),
      May("power_average_w", JsonSchema::Number(0, 1e7)),
  });
  std::vector<std::vector<CounterLine>> out(static_cast<size_t>(gpus));
  std::size_t n = 0;
  for (const auto& line : Split(*text, '\n')) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("{}:{}", path, n);
    auto j = ParseJson(line, where);
    if (!j) return j.error();
    if (auto ok = kLine.Check(*j, where); !ok) return ok.error();
    const int g = j->value("gpu", 0);
    if (g >= gpus) return MakeError("{}: GPU {} is not in the stream ({} GPUs)", where, g, gpus);
    CounterLine c;
    c.t_s = j->at("t_s").get<double>();
    if (j->contains("violation_ns"))
      for (const auto& [k, v] : j->at("violation_ns").items()) {
        auto cause = CauseFromKey(k);
        if (!cause) return MakeError("{}: '{}' is not a violation counter", where, k);
        c.violation_ns[*cause] = v.get<double>();
      }
    if (j->contains("power_instant_w")) c.power_instant_w = j->at("power_instant_w").get<double>();
    if (j->contains("power_average_w")) c.power_average_w = j->at("power_average_w").get<double>();
    auto& list = out[static_cast<size_t>(g)];
    if (!list.empty() && c.t_s <= list.back().t_s)
      return MakeError("{}: t_s {} does not increase", where, c.t_s);
    for (const auto& [cause, ns] : c.violation_ns)
      if (!list.empty() && list.back().violation_ns.count(cause) &&
          ns < list.back().violation_ns.at(cause))
        return MakeError("{}: counter '{}' goes backwards (counters are cumulative)", where,
                         CauseKey(cause));
    list.push_back(std::move(c));
  }
  return out;
}

class SimDevice final : public Device {
 public:
  SimDevice(std::string path, std::vector<std::vector<Sample>> per_gpu, std::vector<StaticState> st,
            std::string boot_id, std::map<int, std::vector<GpuProcess>> procs, bool lock_allowed,
            double start_s, std::string control_file)
      : control_file_(std::move(control_file)),
        path_(std::move(path)),
        per_gpu_(std::move(per_gpu)),
        static_(std::move(st)),
        boot_id_(std::move(boot_id)),
        procs_(std::move(procs)),
        lock_allowed_(lock_allowed),
        start_s_(start_s),
        t0_(std::chrono::steady_clock::now()),
        unix0_(UnixNowSeconds()),
        locked_(per_gpu_.size(), 0) {
    for (const auto& samples : per_gpu_) {
      changes_.emplace_back();
      for (DriverQuantity q :
           {DriverQuantity::kPower, DriverQuantity::kGpuUtil, DriverQuantity::kMemUtil})
        changes_.back()[QuantityIndex(q)] = FindChanges(samples, q);
    }
  }

  bool Simulated() const override { return true; }
  std::string Describe() const override {
    return fmt::format("simulated device replaying {} (not a real GPU)", path_);
  }
  int Count() const override { return static_cast<int>(per_gpu_.size()); }
  StaticState Static(int gpu) override { return static_.at(static_cast<size_t>(gpu)); }

  Sample Poll(int gpu, bool /*with_slow*/) override {
    const auto& s = per_gpu_.at(static_cast<size_t>(gpu));
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    double t0 = s.front().t_s;
    double span = s.back().t_s - t0;
    double t = start_s_ + elapsed;
    if (span > 0) t = std::fmod(t, span + 0.01);  // loop at the end
    auto it = std::upper_bound(s.begin(), s.end(), t0 + t,
                               [](double v, const Sample& x) { return v < x.t_s; });
    Sample out = it == s.begin() ? s.front() : *(it - 1);
    out.gpu = gpu;
    std::lock_guard<std::mutex> l(mu_);
    int lock = locked_[static_cast<size_t>(gpu)];
    if (lock > 0 && out.sm_mhz && out.util_gpu_pct.value_or(0) > 0) out.sm_mhz = lock;
    ReadControl();
    if (sm_offset_mhz_ != 0 && out.sm_mhz && out.util_gpu_pct.value_or(0) > 0)
      *out.sm_mhz += sm_offset_mhz_;
    return out;
  }

  Result<std::vector<GpuProcess>> Processes(int gpu) override {
    auto it = procs_.find(gpu);
    return it == procs_.end() ? std::vector<GpuProcess>{} : it->second;
  }

  Result<MemoryInfo> Memory(int gpu) override {
    MemoryInfo m;
    m.total_bytes = static_.at(static_cast<size_t>(gpu)).total_mem_bytes.value_or(0);
    m.used_bytes = Poll(gpu, true).mem_used_bytes.value_or(0);
    m.free_bytes = m.total_bytes > m.used_bytes ? m.total_bytes - m.used_bytes : 0;
    return m;
  }

  std::string BootId() override {
    std::lock_guard<std::mutex> l(mu_);
    ReadControl();
    return control_boot_id_.empty() ? boot_id_ : control_boot_id_;
  }

  Status LockClocks(int gpu, int mhz) override {
    if (!lock_allowed_)
      return MakeError(
          "nvmlDeviceSetGpuLockedClocks(GPU {}, {} MHz): Insufficient Permissions "
          "(simulated NVML_ERROR_NO_PERMISSION)",
          gpu, mhz);
    std::lock_guard<std::mutex> l(mu_);
    locked_.at(static_cast<size_t>(gpu)) = mhz;
    return OkStatus();
  }
  Status ResetClocks(int gpu) override {
    std::lock_guard<std::mutex> l(mu_);
    locked_.at(static_cast<size_t>(gpu)) = 0;
    return OkStatus();
  }
  // As the H200 answers (driver 580): power and utilization come with the driver's own
  // timestamps, the clocks do not (NVML_ERROR_NOT_FOUND). The replayed stream's driver
  // updates are its value changes; like NVML's ring buffer, only the last kDriverBufferS of
  // them are kept, stamped in unix microseconds.
  Result<std::vector<DriverSample>> DriverSamples(int gpu, DriverQuantity q,
                                                  std::uint64_t since_us) override {
    if (q == DriverQuantity::kSmClock || q == DriverQuantity::kMemClock)
      return MakeError("nvmlDeviceGetSamples({}): Not Found (simulated, as on the H200)",
                       ToString(q));
    const Changes& c = changes_.at(static_cast<size_t>(gpu)).at(QuantityIndex(q));
    const auto& s = per_gpu_.at(static_cast<size_t>(gpu));
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    const double loop = s.back().t_s - s.front().t_s + 0.01;
    const double t = start_s_ + elapsed;  // stream time now, before looping
    std::vector<DriverSample> out;
    const double first_loop = std::floor(std::max(0.0, t - kDriverBufferS) / loop);
    // The readings of each loop that fall in (t - kDriverBufferS, t], found by bisection:
    // O(log n) per fetch however long the stream.
    for (double l = first_loop; l * loop <= t; l += 1) {
      // Whether the loop's first sample is a reading depends on the value before it: none in
      // the stream's first loop; the last value of the stream otherwise (the value of its last
      // sample when the previous loop was read in this fetch).
      bool first_counts = c.first_value.has_value();
      if (first_counts && l > 0) {
        const auto& before = l == first_loop ? c.last_value : c.back_value;
        first_counts = !before || *c.first_value != *before;
      }
      auto in_window = [&](double off) {
        double at = l * loop + off;
        return at <= t && at > t - kDriverBufferS;
      };
      auto emit = [&](double off, double v) {
        double at = l * loop + off;
        auto us = static_cast<std::uint64_t>((unix0_ + (at - start_s_)) * 1e6);
        if (us > since_us) out.push_back({us, v});
      };
      if (first_counts && in_window(0.0)) emit(0.0, *c.first_value);
      auto lo = std::partition_point(c.later.begin(), c.later.end(), [&](const Change& x) {
        return l * loop + x.off <= t - kDriverBufferS;
      });
      for (auto it = lo; it != c.later.end() && in_window(it->off); ++it) emit(it->off, it->value);
    }
    if (out.empty() && !c.first_value)
      return MakeError("nvmlDeviceGetSamples({}): Not Supported (the replayed stream has none)",
                       ToString(q));
    return out;
  }

  std::vector<std::string> NotSupported() const override { return {}; }

  // The replayed counters at the stream time now: linear between lines, and cumulative across
  // loops of the stream (each loop adds the last line's values), as a driver's would be.
  EdgeReading ReadEdge(int gpu) override {
    EdgeReading r;
    if (counters_.empty() || counters_.at(static_cast<size_t>(gpu)).empty()) {
      r.errors.push_back(fmt::format(
          "GPU {}: nvmlDeviceGetViolationStatus: Not Supported (the replayed stream has no "
          "counters file)",
          gpu));
      return r;
    }
    const auto& lines = counters_[static_cast<size_t>(gpu)];
    const auto& s = per_gpu_.at(static_cast<size_t>(gpu));
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    const double loop = s.back().t_s - s.front().t_s + 0.01;
    const double t = start_s_ + elapsed;
    const double loops = std::floor(t / loop);
    const double at = s.front().t_s + (t - loops * loop);
    auto it = std::upper_bound(lines.begin(), lines.end(), at,
                               [](double v, const CounterLine& x) { return v < x.t_s; });
    const CounterLine& lo = it == lines.begin() ? lines.front() : *(it - 1);
    const CounterLine& hi = it == lines.end() ? lines.back() : *it;
    const double w = hi.t_s > lo.t_s ? std::clamp((at - lo.t_s) / (hi.t_s - lo.t_s), 0.0, 1.0) : 0;
    for (const auto& [cause, ns] : lo.violation_ns) {
      const double end =
          lines.back().violation_ns.count(cause) ? lines.back().violation_ns.at(cause) : ns;
      const double next = hi.violation_ns.count(cause) ? hi.violation_ns.at(cause) : ns;
      r.violation_ns[cause] = static_cast<std::uint64_t>(loops * end + ns + w * (next - ns));
    }
    r.power_instant_w = lo.power_instant_w;
    r.power_average_w = lo.power_average_w;
    return r;
  }
  void SetCounters(std::vector<std::vector<CounterLine>> c) { counters_ = std::move(c); }

 private:
  // Tests steer the simulated GPU between legs through a small JSON file (a reboot: a new
  // boot_id; a slower clock: sm_offset_mhz). Re-read when it changes. Caller holds mu_.
  void ReadControl() {
    if (control_file_.empty()) return;
    std::error_code ec;
    auto t = std::filesystem::last_write_time(control_file_, ec);
    if (ec || t == control_mtime_) return;
    control_mtime_ = t;
    auto text = ReadFile(control_file_, 1 << 16);
    if (!text) return;
    static const JsonSchema kControl =
        JsonSchema::Object({May("boot_id", JsonSchema::String()),
                            May("sm_offset_mhz", JsonSchema::Integer(-100000, 100000))});
    auto j = ParseJson(*text, control_file_);
    if (!j || !j->is_object() || !kControl.Check(*j, control_file_)) return;
    control_boot_id_ = j->value("boot_id", std::string());
    sm_offset_mhz_ = j->value("sm_offset_mhz", 0);
  }
  std::string control_file_;
  std::filesystem::file_time_type control_mtime_{};
  std::string control_boot_id_;
  int sm_offset_mhz_ = 0;
  std::string path_;
  std::vector<std::vector<Sample>> per_gpu_;
  std::vector<StaticState> static_;
  std::string boot_id_;
  std::map<int, std::vector<GpuProcess>> procs_;
  bool lock_allowed_;
  double start_s_;
  std::chrono::steady_clock::time_point t0_;
  // Unix time at t0_: a driver reading's stamp is unix0_ + its stream time since start_s_, the
  // same at every fetch (stamps taken from the clocks at each fetch moved by their jitter and
  // drift, and a reading fetched twice came back as two readings microseconds apart).
  double unix0_;
  std::mutex mu_;
  std::vector<int> locked_;
  std::vector<std::array<Changes, kDriverQuantities>> changes_;
  std::vector<std::vector<CounterLine>> counters_;  // per GPU; empty: none replayed
};

// The H200 the fixture was recorded on (tests/fixtures/README.md).
StaticState DefaultStatic(int gpu) {
  StaticState s;
  s.index = gpu;
  s.name = "NVIDIA H200 (simulated)";
  s.uuid = fmt::format("GPU-SIMULATED-{}", gpu);
  s.pci_bus_id = fmt::format("00000000:{:02X}:00.0", gpu + 0x18);
  s.driver_version = "580.159.04";
  s.cuda_driver_version = "13.0";
  s.max_sm_mhz = 1980;
  s.app_sm_mhz = 1980;
  s.persistence = true;
  s.total_mem_bytes = 150754820096ull;
  return s;
}

}  // namespace

const char* ToString(DriverQuantity q) {
  switch (q) {
    case DriverQuantity::kPower:
      return "power";
    case DriverQuantity::kGpuUtil:
      return "gpu_utilization";
    case DriverQuantity::kMemUtil:
      return "memory_utilization";
    case DriverQuantity::kSmClock:
      return "sm_clock";
    case DriverQuantity::kMemClock:
      return "memory_clock";
  }
  return "?";
}

Result<std::unique_ptr<Device>> OpenSimulated(const std::string& stream_path,
                                              const std::string& static_path, double start_s) {
  // A built-in scenario by name (`--sim h200-busy`), unless a file of that name is here.
  const BuiltinSimScenario* builtin = nullptr;
  std::error_code exists_ec;
  if (!std::filesystem::exists(stream_path, exists_ec))
    if ((builtin = FindBuiltinSimScenario(stream_path)) == nullptr &&
        stream_path.find('/') == std::string::npos && stream_path.find('.') == std::string::npos)
      return MakeError(
          "simulated device: no file and no built-in scenario named '{}' (built-in: {}; or give "
          "a JSONL telemetry file)",
          stream_path, BuiltinSimScenarioNames());
  auto samples =
      builtin ? ParseSampleStream(builtin->stream, builtin->name) : ReadSampleStream(stream_path);
  if (!samples) return MakeError("simulated device: {}", samples.error().message);
  int n = 0;
  for (const auto& s : *samples) n = std::max(n, s.gpu + 1);
  std::vector<std::vector<Sample>> per_gpu(static_cast<size_t>(n));
  for (const auto& s : *samples) per_gpu[static_cast<size_t>(s.gpu)].push_back(s);
  for (int g = 0; g < n; ++g)
    if (per_gpu[static_cast<size_t>(g)].empty())
      return MakeError("simulated device {}: GPU {} has no samples (GPU indices must be 0..N-1)",
                       stream_path, g);
  std::vector<StaticState> st;
  for (int g = 0; g < n; ++g) st.push_back(DefaultStatic(g));
  std::string boot_id = "simulated-boot-0";
  std::map<int, std::vector<GpuProcess>> procs;
  bool lock_allowed = true;
  std::string control_file;
  std::string sp = static_path;
  if (sp.empty() && !builtin && std::filesystem::exists(stream_path + ".static.json"))
    sp = stream_path + ".static.json";
  if (!sp.empty()) {
    auto parsed = ReadJsonFile(sp, 1 << 20);
    if (!parsed) return MakeError("simulated device static state: {}", parsed.error().message);
    const nlohmann::json& j = *parsed;
    if (!j.is_object())
      return MakeError("{}: not a JSON object (simulated device static state)", sp);
    static const JsonSchema kStatic = JsonSchema::Object({
        May("boot_id", JsonSchema::String()),
        May("start_s", JsonSchema::Number()),
        May("lock_clocks", JsonSchema::String()),
        May("control_file", JsonSchema::String()),
        May("gpus", JsonSchema::Array(JsonSchema::Any())),
        May("processes", JsonSchema::Map(JsonSchema::Array(JsonSchema::Object({
                             Must("pid", JsonSchema::Integer(0, UINT32_MAX)),
                             May("name", JsonSchema::String()),
                             May("used_bytes", JsonSchema::Unsigned()),
                         })))),
    });
    if (auto ok = kStatic.Check(j, sp); !ok) return ok.error();
    try {
      boot_id = j.value("boot_id", boot_id);
      start_s = j.value("start_s", start_s);
      lock_allowed = j.value("lock_clocks", std::string("allowed")) == "allowed";
      control_file = j.value("control_file", std::string());
      if (!control_file.empty() && std::filesystem::path(control_file).is_relative())
        control_file = (std::filesystem::path(sp).parent_path() / control_file).string();
      if (j.contains("gpus")) {
        const auto& gs = j.at("gpus");
        for (size_t g = 0; g < gs.size() && g < st.size(); ++g) {
          nlohmann::json merged = ToJson(st[g]);
          merged.update(gs[g]);
          auto s = StaticStateFromJson(merged, sp);
          if (!s) return s.error();
          st[g] = *s;
          st[g].index = static_cast<int>(g);
        }
      }
      if (j.contains("processes")) {
        for (const auto& [key, list] : j.at("processes").items()) {
          auto gi = ParseInt64(key, fmt::format("{}: 'processes' key", sp));
          if (!gi) return gi.error();
          if (*gi < 0 || *gi >= n) return MakeError("{}: 'processes.{}': no such GPU", sp, key);
          const int g = static_cast<int>(*gi);
          for (const auto& p : list) {
            GpuProcess q;
            q.pid = p.at("pid").get<std::uint32_t>();
            q.name = p.value("name", "");
            if (p.contains("used_bytes")) q.used_bytes = p.at("used_bytes").get<std::uint64_t>();
            procs[g].push_back(q);
          }
        }
      }
    } catch (const std::exception& e) {
      return MakeError("{}: bad simulated device static state: {}", sp, e.what());
    }
  }
  if (const char* e = std::getenv("VOUCH_SIM_START"); e && *e) {
    auto s = ParseFiniteDouble(e, "VOUCH_SIM_START");
    if (!s) return s.error();
    start_s = *s;
  }
  const std::string described =
      builtin ? fmt::format("built-in scenario {} ({})", builtin->name, builtin->source)
              : stream_path;
  auto device = std::make_unique<SimDevice>(described, std::move(per_gpu), std::move(st), boot_id,
                                            std::move(procs), lock_allowed, start_s, control_file);
  // The driver's violation counters, replayed from STREAM.counters.jsonl when it exists.
  if (!builtin && std::filesystem::exists(stream_path + ".counters.jsonl", exists_ec)) {
    auto counters = ReadCounterLines(stream_path + ".counters.jsonl", n);
    if (!counters) return MakeError("simulated device counters: {}", counters.error().message);
    device->SetCounters(std::move(*counters));
  }
  return std::unique_ptr<Device>(std::move(device));
}

}  // namespace vouch
