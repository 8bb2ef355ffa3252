// The sampler: a thread that polls the device often enough to catch every driver update,
// keeps samples in memory and streams them to a JSONL file, flushed often enough that a
// crash loses at most one buffer.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "telemetry/device.h"

namespace vouch {

struct SamplerOptions {
  std::vector<int> gpus;              // which GPUs to poll
  double interval_s = 0.010;          // poll period
  double process_interval_s = 0.100;  // compute-process list period
  std::string jsonl_path;             // "" keeps samples in memory only
  double flush_interval_s = 0.5;      // the most a crash can lose
  // How often the driver's own timestamped samples (nvmlDeviceGetSamples) are fetched; NVML
  // keeps about 2.4 s of power samples, so this must stay well below that.
  double driver_interval_s = 1.0;
};

// The driver's timestamped samples of one quantity of one GPU over the sampler's life, or
// the error it answered (the H200 answers NOT_FOUND for the clocks, which are then polled).
struct DriverStream {
  int gpu = 0;
  DriverQuantity quantity = DriverQuantity::kPower;
  std::vector<DriverSample> samples;  // timestamps in unix microseconds, increasing
  std::string error;                  // "" when it answered
};

struct SamplerStats {
  long polls = 0;       // poll rounds (all GPUs)
  long late_polls = 0;  // rounds that started more than one interval late
  double poll_cost_mean_us = 0, poll_cost_max_us = 0;  // one round
  double thread_cpu_s = 0;                             // CPU time of the sampler thread
  double wall_s = 0;
  std::string write_error;  // first error writing the stream ("" if none)
};

class Sampler {
 public:
  Sampler(Device& device, SamplerOptions options);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  Status Start();
  // Stops the thread and flushes; returns the stream write error, if any. Idempotent.
  Status Stop();

  std::vector<Sample> Samples() const;
  std::vector<ProcessSnapshot> Processes() const;
  std::optional<Sample> Last(int gpu) const;
  SamplerStats Stats() const;
  // Highest device memory NVML reported for any of PIDS at one time (summed over GPUs).
  std::optional<std::uint64_t> PeakDeviceMemory(const std::vector<int>& pids) const;
  // Power, GPU utilization and the SM clock with the driver's timestamps, per GPU (see
  // DriverStream; the H200 answers NOT_FOUND for the clock).
  std::vector<DriverStream> DriverStreams() const;

 private:
  void Loop();
  void Flush();
  void FetchDriverSamples();

  Device& device_;
  SamplerOptions opt_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;  // wakes the thread at once on Stop (no poll-period wait)
  bool running_ = false;
  mutable std::mutex mu_;
  std::vector<Sample> samples_;
  std::vector<ProcessSnapshot> procs_;
  std::vector<DriverStream> driver_;
  SamplerStats stats_;
  std::FILE* out_ = nullptr;
  std::string buffer_;
};

}  // namespace vouch
