// The device interface: NVML on a real machine, a replayed recording in CI. Everything
// above this line (sampler, folds, rules, commands) sees only this interface.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "telemetry/edge.h"
#include "telemetry/sample.h"
#include "util/result.h"

namespace vouch {

struct MemoryInfo {
  std::uint64_t total_bytes = 0, free_bytes = 0, used_bytes = 0;
};

// Quantities NVML can return with the driver's own timestamps (nvmlDeviceGetSamples).
enum class DriverQuantity { kPower, kGpuUtil, kMemUtil, kSmClock, kMemClock };
const char* ToString(DriverQuantity q);

struct DriverSample {
  std::uint64_t timestamp_us = 0;  // driver clock
  double value = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual bool Simulated() const = 0;
  // "NVML (libnvidia-ml.so.1), driver 580.159.04" or "simulated device replaying FILE".
  virtual std::string Describe() const = 0;
  virtual int Count() const = 0;
  // Static state; a query the device does not support is recorded in not_supported.
  virtual StaticState Static(int gpu) = 0;
  // One poll of the live values; t_s and unix_s are the caller's. Unsupported: nullopt.
  // WITH_SLOW: also memory used and temperature, which need no 10 ms cadence (the sampler
  // asks for them every 100 ms, saving two NVML calls on most polls).
  virtual Sample Poll(int gpu, bool with_slow = true) = 0;
  virtual Result<std::vector<GpuProcess>> Processes(int gpu) = 0;
  virtual Result<MemoryInfo> Memory(int gpu) = 0;
  // The host's boot id (the simulated device has its own).
  virtual std::string BootId() = 0;
  // Opt-in clock locking (never without the measurement lock; always reset).
  virtual Status LockClocks(int gpu, int mhz) = 0;
  virtual Status ResetClocks(int gpu) = 0;
  // Driver-timestamped samples newer than SINCE_US; an error when not supported.
  virtual Result<std::vector<DriverSample>> DriverSamples(int gpu, DriverQuantity q,
                                                          std::uint64_t since_us) = 0;
  // Every call that answered "not supported" or failed, with the NVML error text.
  virtual std::vector<std::string> NotSupported() const = 0;
  // The cumulative violation counters and instant power, for a window's edges only (each
  // read costs milliseconds). A device without them answers an empty reading with a note.
  virtual EdgeReading ReadEdge(int gpu) {
    EdgeReading r;
    r.errors.push_back(fmt::format("GPU {}: this device has no violation counters", gpu));
    return r;
  }
};

// Loads libnvidia-ml.so.1 with dlopen; an error (naming what failed) when there is no driver.
Result<std::unique_ptr<Device>> OpenNvml();

// Replays STREAM (JSONL, the fixture format, optional "gpu" field) in real time from
// START_S seconds into it, looping at the end. Static state from STATIC_PATH (JSON) when
// given, else STREAM.static.json when present, else the fixture's H200.
Result<std::unique_ptr<Device>> OpenSimulated(const std::string& stream_path,
                                              const std::string& static_path, double start_s);

}  // namespace vouch
