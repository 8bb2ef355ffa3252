// What the device gives: static state per GPU, one poll's readout, and compute processes.
// Field names carry units. A field the device does not support is std::nullopt, never 0.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace vouch {

class JsonSchema;

// Clock event reasons (nvmlClocksEventReasons); bit 0x1 is "GPU idle".
inline constexpr std::uint64_t kReasonGpuIdle = 0x1;
// Names of the set bits, e.g. {"gpu_idle", "sw_power_cap"}.
std::vector<std::string> ReasonNames(std::uint64_t reasons);
std::string ReasonName(std::uint64_t bit);
// What a reason means for a measurement, in words a user can act on ("" when none).
std::string ReasonAdvice(std::uint64_t bit);

struct Sample {
  int gpu = 0;
  double t_s = 0;     // seconds since the sampler started (steady clock)
  double unix_s = 0;  // wall-clock time of the poll
  std::optional<int> sm_mhz, mem_mhz;
  std::optional<std::int64_t> power_mw;
  std::optional<int> util_gpu_pct, util_mem_pct;
  std::optional<std::uint64_t> reasons;
  std::optional<std::uint64_t> mem_used_bytes;
  std::optional<int> temp_c;
};

struct GpuProcess {
  std::uint32_t pid = 0;
  std::string name;  // from /proc/PID/comm where visible
  std::optional<std::uint64_t> used_bytes;
};

struct ProcessSnapshot {
  int gpu = 0;
  double t_s = 0;
  double unix_s = 0;
  std::vector<GpuProcess> processes;
};

struct StaticState {
  int index = 0;
  std::string name, uuid, pci_bus_id, driver_version, cuda_driver_version;
  std::optional<int> max_sm_mhz, app_sm_mhz;
  std::optional<bool> persistence;
  std::optional<std::uint64_t> total_mem_bytes;
  std::vector<std::string> not_supported;  // "nvmlDeviceGetApplicationsClock: Not Supported"
};

nlohmann::json ToJson(const Sample& s);
nlohmann::json ToJson(const ProcessSnapshot& p);
// Appends a line of the samples stream (the sampler's writers: no JSON tree is built). A
// sample's times have six decimals ("{:.6f}"); a process snapshot's line is byte for byte
// DumpJson(ToJson(p)).
void AppendJsonLine(const Sample& s, std::string* out);
void AppendJsonLine(const ProcessSnapshot& p, std::string* out);
nlohmann::json ToJson(const StaticState& s);
// What a static state read back from a file must be (types and ranges; util/json_io.h).
const JsonSchema& StaticStateSchema();
Result<StaticState> StaticStateFromJson(const nlohmann::json& j, const std::string& where);
// The same of J that passed StaticStateSchema: not checked again.
StaticState StaticStateFromCheckedJson(const nlohmann::json& j);

// Parses one JSONL line in the fixture's format (plus an optional "gpu" field).
// WHERE names the file and line for errors.
Result<Sample> SampleFromJsonLine(std::string_view line, const std::string& where);

// Reads a whole stream (samples; process lines are skipped). Empty, malformed and
// truncated files are errors that name the file and line.
Result<std::vector<Sample>> ReadSampleStream(const std::string& path);
// The same over TEXT already read; PATH names it in errors.
Result<std::vector<Sample>> ParseSampleStream(std::string_view text, const std::string& path);

}  // namespace vouch
