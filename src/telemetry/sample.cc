#include "telemetry/sample.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

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

template <class T>
std::optional<T> Opt(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
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

Result<StaticState> StaticStateFromJson(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return MakeError("{}: static state must be a JSON object", where);
  try {
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
  } catch (const nlohmann::json::exception& e) {
    return MakeError("{}: bad static state: {}", where, e.what());
  }
}

Result<Sample> SampleFromJsonLine(std::string_view line, const std::string& where) {
  auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return MakeError("{}: not valid JSON (a truncated or corrupt line?)", where);
  if (!j.is_object()) return MakeError("{}: a sample must be a JSON object", where);
  try {
    Sample s;
    s.gpu = j.value("gpu", 0);
    if (!j.contains("t_s") || !j["t_s"].is_number())
      return MakeError("{}: missing number field 't_s'", where);
    s.t_s = j["t_s"].get<double>();
    s.unix_s = j.value("unix_s", 0.0);
    if (!std::isfinite(s.t_s) || !std::isfinite(s.unix_s))
      return MakeError("{}: time fields must be finite", where);
    s.sm_mhz = Opt<int>(j, "sm_mhz");
    s.mem_mhz = Opt<int>(j, "mem_mhz");
    s.power_mw = Opt<std::int64_t>(j, "power_mw");
    s.util_gpu_pct = Opt<int>(j, "util_gpu_pct");
    s.util_mem_pct = Opt<int>(j, "util_mem_pct");
    s.reasons = Opt<std::uint64_t>(j, "reasons");
    s.mem_used_bytes = Opt<std::uint64_t>(j, "mem_used_bytes");
    s.temp_c = Opt<int>(j, "temp_c");
    if (s.gpu < 0 || s.gpu > 1023) return MakeError("{}: gpu index {} out of range", where, s.gpu);
    return s;
  } catch (const nlohmann::json::exception& e) {
    return MakeError("{}: wrong field type: {}", where, e.what());
  }
}

Result<std::vector<Sample>> ReadSampleStream(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError("cannot open telemetry stream {}", path);
  std::vector<Sample> out;
  std::string line;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    bool last = in.peek() == EOF;
    if (line.empty() || line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (line.find("\"processes\"") != std::string::npos) continue;  // process snapshots
    auto s = SampleFromJsonLine(line, fmt::format("{}:{}", path, lineno));
    if (!s) {
      if (last && !in.eof()) break;
      return MakeError("{}{}", s.error().message,
                       last ? " (the last line is cut short: the stream was truncated)" : "");
    }
    if (!out.empty() && s->gpu == out.back().gpu && s->t_s < out.back().t_s)
      return MakeError("{}:{}: t_s goes backwards ({} after {})", path, lineno, s->t_s,
                       out.back().t_s);
    out.push_back(std::move(*s));
  }
  if (in.bad()) return MakeError("cannot read telemetry stream {}", path);
  if (out.empty()) return MakeError("telemetry stream {} holds no samples (empty file?)", path);
  return out;
}

}  // namespace vouch
