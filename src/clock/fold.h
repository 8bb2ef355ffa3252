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
#include "telemetry/device.h"
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
  int missed_readings = 0;     // readings that fell in gaps between polls
  double poll_interval_s = 0;  // the median spacing of the polls
  // The polls were slower than the driver updates: nearly every poll saw a new value, so the
  // spacing of changes measures the poll interval, not the driver's period. The period is
  // then the policy's (the driver's known one) and the readings in between count as missed.
  bool polls_slower_than_updates = false;
};

// A sample is busy when the GPU-idle reason (0x1) is clear AND utilization is above 0;
// where reasons are unsupported, utilization alone. The reason alone is not enough: on the
// H200 the idle bit stays clear for ~1.4 s after work ends, at max clock and 0 % util.
bool IsBusy(const Sample& s);

// SAMPLES must belong to one GPU and be in time order.
ReadingSeries ToReadings(const std::vector<Sample>& samples, double default_period_s);

// The readings of one quantity as the driver itself timestamped them (nvmlDeviceGetSamples),
// and how many of them no poll saw: a reading lives from its timestamp to the next one, and
// it is missed when no poll fell in that time. Counted from the driver's clock, this needs no
// assumption about the update period.
struct DriverReadings {
  std::string quantity;  // "power", "gpu_utilization"
  int readings = 0;
  double period_s = 0;  // median spacing of the driver's timestamps
  int missed = 0;
};

// From the driver's samples (unix microseconds) and the polls (unix_s) of one GPU, over
// [FROM_UNIX_S, TO_UNIX_S]. nullopt when the driver gave no sample in that span.
std::optional<DriverReadings> CountDriverReadings(const std::string& quantity,
                                                  const std::vector<DriverSample>& driver,
                                                  const std::vector<Sample>& polls,
                                                  double from_unix_s, double to_unix_s);

struct Fold {
  int gpu = 0;
  int polls = 0;
  int readings = 0;
  int busy_readings = 0;
  int idle_readings = 0;
  int missed_readings = 0;
  double update_period_s = 0;
  bool period_measured = false;
  double poll_interval_s = 0;
  bool polls_slower_than_updates = false;  // see ReadingSeries
  double busy_fraction = 0;
  std::optional<ClockStats> sm_mhz;  // over busy readings
  std::optional<double> spread;      // (max - min) / median of sm_mhz
  std::optional<ClockStats> mem_mhz, power_mw;
  std::uint64_t reasons_union = 0;  // over busy readings
  std::map<std::string, double> busy_fraction_by_reason;
  std::optional<std::uint64_t> peak_mem_used_bytes;
  std::optional<int> max_temp_c;
  double first_unix_s = 0, last_unix_s = 0;
  std::vector<DriverReadings> driver;      // nvmlDeviceGetSamples, where it answered
  std::vector<std::string> driver_errors;  // where it did not (the clocks on the H200)
};

Fold FoldWindow(const std::vector<Sample>& samples, const Policy& policy);

// Samples of one GPU whose unix_s lies in [from, to].
std::vector<Sample> SelectGpu(const std::vector<Sample>& samples, int gpu);
std::vector<Sample> Slice(const std::vector<Sample>& samples, double from_unix_s, double to_unix_s);

nlohmann::json ToJson(const Fold& f);
class JsonSchema;
const JsonSchema& FoldSchema();
Result<Fold> FoldFromJson(const nlohmann::json& j, const std::string& where);
// The same of J that passed FoldSchema (inside WindowSummarySchema, say): not checked again.
Fold FoldFromCheckedJson(const nlohmann::json& j);

}  // namespace vouch
