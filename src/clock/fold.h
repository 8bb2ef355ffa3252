// The fold of a window: telemetry polls in, readings and clock statistics out. Pure.
//
// Readings, not polls: NVML refreshes its values at its own period (100 ms on the H200),
// so polling every 10 ms sees each value about ten times. The fold groups consecutive polls
// with identical values into runs, measures the update period from the spacing of the
// changes, and counts each run as round(observed duration / period) readings. Every count
// and every floor is in readings.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "clock/policy.h"
#include "telemetry/sample.h"

namespace vouch {

struct ClockStats {
  double min = 0, median = 0, max = 0, mean = 0;
};

// One run of polls that saw the same driver values.
struct Reading {
  Sample value;   // the first poll of the run
  int polls = 0;  // polls in the run
  int count = 0;  // driver readings the run stands for
  bool busy = false;
};

struct ReadingSeries {
  std::vector<Reading> runs;
  double update_period_s = 0;
  bool period_measured = false;  // false: the policy's default was assumed
  int polls = 0;
  int readings = 0;
  int missed_readings = 0;  // readings that fell in gaps between polls
};

// A sample is busy when the GPU-idle reason (0x1) is clear AND utilization is above 0;
// where reasons are unsupported, utilization alone. The reason alone is not enough: on the
// H200 the idle bit stays clear for ~1.4 s after work ends, at max clock and 0 % util.
bool IsBusy(const Sample& s);

// SAMPLES must belong to one GPU and be in time order.
ReadingSeries ToReadings(const std::vector<Sample>& samples, double default_period_s);

struct Fold {
  int gpu = 0;
  int polls = 0;
  int readings = 0;
  int busy_readings = 0;
  int idle_readings = 0;
  int missed_readings = 0;
  double update_period_s = 0;
  bool period_measured = false;
  double busy_fraction = 0;
  std::optional<ClockStats> sm_mhz;  // over busy readings
  std::optional<double> spread;      // (max - min) / median of sm_mhz
  std::optional<ClockStats> mem_mhz, power_mw;
  std::uint64_t reasons_union = 0;  // over busy readings
  std::map<std::string, double> busy_fraction_by_reason;
  std::optional<std::uint64_t> peak_mem_used_bytes;
  std::optional<int> max_temp_c;
  double first_unix_s = 0, last_unix_s = 0;
};

Fold FoldWindow(const std::vector<Sample>& samples, const Policy& policy);

// Samples of one GPU whose unix_s lies in [from, to].
std::vector<Sample> SelectGpu(const std::vector<Sample>& samples, int gpu);
std::vector<Sample> Slice(const std::vector<Sample>& samples, double from_unix_s, double to_unix_s);

nlohmann::json ToJson(const Fold& f);
class JsonSchema;
const JsonSchema& FoldSchema();
Result<Fold> FoldFromJson(const nlohmann::json& j, const std::string& where);

}  // namespace vouch
