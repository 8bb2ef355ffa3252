#include "telemetry/sample.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "util/bounded_file.h"
#include "util/json_io.h"
#include "util/strings.h"

namespace vouch {
namespace {

struct ReasonInfo {
  std::uint64_t bit;
  const char* name;
  const char* advice;
};

// nvml.h: nvmlClocksEventReason*.
constexpr ReasonInfo kReasons[] = {
    {0x1, "gpu_idle", "the GPU had no work"},
    {0x2, "applications_clocks_setting", "the applications clock setting holds the clock down"},
    {0x4, "sw_power_cap",
     "the GPU hit its power limit and the driver lowered the clock (lock the clocks with "
     "--lock-clocks, or expect the clock to wander)"},
    {0x8, "hw_slowdown", "hardware slowdown (power brake or temperature): check cooling and power"},
    {0x10, "sync_boost", "sync boost with other GPUs holds the clock"},
    {0x20, "sw_thermal_slowdown", "the GPU is too hot: let it cool or improve cooling"},
    {0x40, "hw_thermal_slowdown", "hardware thermal slowdown: the GPU is far too hot"},
    {0x80, "hw_power_brake_slowdown", "external power brake asserted"},
    {0x100, "display_clock_setting", "the display clock setting holds the clock down"},
};

// Read only after the schema checked the field's type and range (so get<T> cannot cut it).
template <class T>
std::optional<T> Opt(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

// Plausible bounds of every telemetry field: a value past them is a corrupt or hostile
// stream, never a reading (an SM clock of 2^32 + 1980 MHz must not replay as 1980).
constexpr std::int64_t kMaxMhz = 100000;
constexpr std::int64_t kMaxPowerMw = 100000000;  // 100 kW
constexpr std::uint64_t kMaxMemBytes = 1ull << 50;
constexpr double kMaxTimeS = 1e11;  // ~3000 years

const JsonSchema& SampleSchema() {
  static const JsonSchema s = JsonSchema::Object({
      May("gpu", JsonSchema::Integer(0, 1023)),
      Must("t_s", JsonSchema::Number(-kMaxTimeS, kMaxTimeS)),
      May("unix_s", JsonSchema::Number(0, kMaxTimeS)),
      May("sm_mhz", JsonSchema::Integer(0, kMaxMhz).OrNull()),
      May("mem_mhz", JsonSchema::Integer(0, kMaxMhz).OrNull()),
      May("power_mw", JsonSchema::Integer(0, kMaxPowerMw).OrNull()),
      May("util_gpu_pct", JsonSchema::Integer(0, 100).OrNull()),
      May("util_mem_pct", JsonSchema::Integer(0, 100).OrNull()),
      May("reasons", JsonSchema::Unsigned().OrNull()),
      May("mem_used_bytes", JsonSchema::Unsigned(kMaxMemBytes).OrNull()),
      May("temp_c", JsonSchema::Integer(-273, 1000).OrNull()),
  });
  return s;
}

}  // namespace

std::string ReasonName(std::uint64_t bit) {
  for (const auto& r : kReasons)
    if (r.bit == bit) return r.name;
  return fmt::format("reason_0x{:x}", bit);
}

std::string ReasonAdvice(std::uint64_t bit) {
  for (const auto& r : kReasons)
    if (r.bit == bit) return r.advice;
  return "";
}

std::vector<std::string> ReasonNames(std::uint64_t reasons) {
  std::vector<std::string> out;
  for (int b = 0; b < 64; ++b)
    if (reasons & (1ull << b)) out.push_back(ReasonName(1ull << b));
  return out;
}

nlohmann::json ToJson(const Sample& s) {
  nlohmann::json j;
  j["gpu"] = s.gpu;
  j["t_s"] = s.t_s;
  j["unix_s"] = s.unix_s;
  if (s.sm_mhz) j["sm_mhz"] = *s.sm_mhz;
  if (s.mem_mhz) j["mem_mhz"] = *s.mem_mhz;
  if (s.power_mw) j["power_mw"] = *s.power_mw;
  if (s.util_gpu_pct) j["util_gpu_pct"] = *s.util_gpu_pct;
  if (s.util_mem_pct) j["util_mem_pct"] = *s.util_mem_pct;
  if (s.reasons) j["reasons"] = *s.reasons;
  if (s.mem_used_bytes) j["mem_used_bytes"] = *s.mem_used_bytes;
  if (s.temp_c) j["temp_c"] = *s.temp_c;
  return j;
}

nlohmann::json ToJson(const ProcessSnapshot& p) {
  nlohmann::json procs = nlohmann::json::array();
  for (const auto& q : p.processes) {
    nlohmann::json e = {{"pid", q.pid}, {"name", q.name}};
    if (q.used_bytes) e["used_bytes"] = *q.used_bytes;
    procs.push_back(std::move(e));
  }
  return {{"gpu", p.gpu}, {"t_s", p.t_s}, {"unix_s", p.unix_s}, {"processes", procs}};
}

nlohmann::json ToJson(const StaticState& s) {
  nlohmann::json j = {{"index", s.index},
                      {"name", s.name},
                      {"uuid", s.uuid},
                      {"pci_bus_id", s.pci_bus_id},
                      {"driver_version", s.driver_version},
                      {"cuda_driver_version", s.cuda_driver_version}};
  j["max_sm_mhz"] = s.max_sm_mhz ? nlohmann::json(*s.max_sm_mhz) : nlohmann::json();
  j["app_sm_mhz"] = s.app_sm_mhz ? nlohmann::json(*s.app_sm_mhz) : nlohmann::json();
  j["persistence"] = s.persistence ? nlohmann::json(*s.persistence) : nlohmann::json();
  j["total_mem_bytes"] = s.total_mem_bytes ? nlohmann::json(*s.total_mem_bytes) : nlohmann::json();
  j["not_supported"] = s.not_supported;
  return j;
}

const JsonSchema& StaticStateSchema() {
  static const JsonSchema s = JsonSchema::Object({
      May("index", JsonSchema::Integer(0, 1023)),
      May("name", JsonSchema::String()),
      May("uuid", JsonSchema::String()),
      May("pci_bus_id", JsonSchema::String()),
      May("driver_version", JsonSchema::String()),
      May("cuda_driver_version", JsonSchema::String()),
      May("max_sm_mhz", JsonSchema::Integer(0, kMaxMhz).OrNull()),
      May("app_sm_mhz", JsonSchema::Integer(0, kMaxMhz).OrNull()),
      May("persistence", JsonSchema::Bool().OrNull()),
      May("total_mem_bytes", JsonSchema::Unsigned(kMaxMemBytes).OrNull()),
      May("not_supported", JsonSchema::Array(JsonSchema::String())),
  });
  return s;
}

Result<StaticState> StaticStateFromJson(const nlohmann::json& j, const std::string& where) {
  if (auto ok = StaticStateSchema().Check(j, where); !ok) return ok.error();
  StaticState s;
  s.index = j.value("index", 0);
  s.name = j.value("name", "");
  s.uuid = j.value("uuid", "");
  s.pci_bus_id = j.value("pci_bus_id", "");
  s.driver_version = j.value("driver_version", "");
  s.cuda_driver_version = j.value("cuda_driver_version", "");
  s.max_sm_mhz = Opt<int>(j, "max_sm_mhz");
  s.app_sm_mhz = Opt<int>(j, "app_sm_mhz");
  s.persistence = Opt<bool>(j, "persistence");
  s.total_mem_bytes = Opt<std::uint64_t>(j, "total_mem_bytes");
  if (j.contains("not_supported"))
    s.not_supported = j.at("not_supported").get<std::vector<std::string>>();
  return s;
}

Result<Sample> SampleFromJsonLine(std::string_view line, const std::string& where) {
  auto parsed = ParseJson(line, where, 8);
  if (!parsed) return parsed.error();
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) return MakeError("{}: a sample must be a JSON object", where);
  if (auto ok = SampleSchema().Check(j, where); !ok) return ok.error();
  Sample s;
  s.gpu = j.value("gpu", 0);
  s.t_s = j["t_s"].get<double>();
  s.unix_s = j.value("unix_s", 0.0);
  s.sm_mhz = Opt<int>(j, "sm_mhz");
  s.mem_mhz = Opt<int>(j, "mem_mhz");
  s.power_mw = Opt<std::int64_t>(j, "power_mw");
  s.util_gpu_pct = Opt<int>(j, "util_gpu_pct");
  s.util_mem_pct = Opt<int>(j, "util_mem_pct");
  s.reasons = Opt<std::uint64_t>(j, "reasons");
  s.mem_used_bytes = Opt<std::uint64_t>(j, "mem_used_bytes");
  s.temp_c = Opt<int>(j, "temp_c");
  return s;
}

Result<std::vector<Sample>> ReadSampleStream(const std::string& path) {
  auto text = ReadBoundedFile(path, kMaxSamplesFileBytes);
  if (!text) return MakeError("telemetry stream {}", text.error().message);
  return ParseSampleStream(*text, path);
}

Result<std::vector<Sample>> ParseSampleStream(std::string_view text, const std::string& path) {
  std::vector<Sample> out;
  LineReader lines(text);
  LineReader::Line l;
  while (lines.Next(&l)) {
    std::string_view line = l.text;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (line.find("\"processes\"") != std::string_view::npos) continue;  // process snapshots
    auto s = SampleFromJsonLine(line, fmt::format("{}:{}", path, l.number));
    if (!s)
      return MakeError(
          "{}{}", s.error().message,
          l.terminated ? "" : " (the last line is cut short: the stream was truncated)");
    if (!out.empty() && s->gpu == out.back().gpu && s->t_s < out.back().t_s)
      return MakeError("{}:{}: t_s goes backwards ({} after {})", path, l.number, s->t_s,
                       out.back().t_s);
    out.push_back(std::move(*s));
  }
  if (out.empty()) return MakeError("telemetry stream {} holds no samples (empty file?)", path);
  return out;
}

}  // namespace vouch
