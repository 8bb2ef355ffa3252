// One leg inside its own window: the sampler starts before the command and stops after
// it, the samples and the summary are written, and only then is the window judged. A
// failure at any point leaves the evidence on disk (seed 001, "The clock is part of the
// measurement": the arm opens and closes its own window).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "clock/window.h"
#include "leg/executor.h"
#include "telemetry/device.h"
#include "telemetry/sampler.h"
#include "util/fs.h"

namespace vouch {

struct WindowOptions {
  std::vector<int> gpus;      // empty: every GPU of the device
  bool gpus_named = false;    // GPUS were named (--gpu, CUDA_VISIBLE_DEVICES): each must be busy
  std::string gpu_source;     // how they were chosen, for the record and the reasons
  double interval_s = 0.010;  // sampler poll period
  Policy policy;
  std::string dir;  // evidence directory: samples.jsonl, window.json or window-idle.json
  std::optional<int> lock_clocks_mhz;  // opt-in clock lock, always reset
  bool require_lock_clocks = false;    // fail rather than fall back when locking is refused
  bool allow_cross_boot = false;
  // window.json synced before its rename; a run's legs skip it (their journal is synced).
  FileSync summary_sync = FileSync::kFsync;
};

struct Region {
  double begin_unix_s = 0, end_unix_s = 0;
};

struct MeasuredLeg {
  LegResult leg;
  WindowSummary window;  // verdict.status kIdle: no fold stats are quotable
  SamplerStats sampler;
  std::optional<std::uint64_t> peak_device_mem_bytes;  // the leg's process tree, from NVML
  std::string samples_path;
  std::string summary_path;         // window.json, or window-idle.json for an idle window
  std::vector<std::string> errors;  // evidence that could not be written, lock reset failures
};

// REGION_OF, when given, is asked after the leg ends for the measured region (from the
// metrics channel); the window is then judged over it while the whole window is recorded.
// OBSERVER sees the leg's polls (progress lines).
Result<MeasuredLeg> MeasureLeg(
    Device& device, LegExecutor& executor, const LegSpec& spec, const WindowOptions& options,
    const std::function<std::optional<Region>(const LegResult&)>& region_of, LegObserver* observer,
    const std::function<void(const std::optional<Sample>&)>& on_tick = nullptr);

// Static state and host facts of a window, without samples (for doctor and records).
WindowSummary DescribeDevice(Device& device, const std::vector<int>& gpus);

}  // namespace vouch
