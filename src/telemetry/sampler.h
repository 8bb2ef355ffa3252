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
  // How often the driver's own timestamped samples (nvmlDeviceGetSamples) are read: at first
  // every driver_interval_s, then each stream at half the time its buffer is seen to hold (its
  // most entries times its shortest step), between driver_interval_s and driver_max_interval_s.
  // A read is costly (on the H200 0.6 ms of CPU for the power buffer, which holds 2.4 s, and
  // 2.7 ms for utilization's, which holds about 14 s) and its cost does not depend on how many
  // entries are new, so each buffer is read as seldom as it can be without losing a reading.
  double driver_interval_s = 1.0;
  double driver_max_interval_s = 10.0;
  // The list is read from the driver again only when the GPU's memory used has changed since
  // the last read, or changed between the last two (a process cannot start on a GPU or leave
  // it, or grow or shrink there, without changing it), or this long has passed; otherwise the
  // last list is written again at its own time. 0: read every process_interval_s. On the H200 a
  // read costs 46-48 us of CPU (the list and each process's name from /proc); without the list
  // the sampler thread took 0.685 % of a core against 0.778 % (sampler_bench, 2026-12-05).
  double process_reread_s = 1.0;
};

// When a driver stream is next read (the sampler thread's own; see SamplerOptions).
struct DriverPace {
  double due_s = 0;               // sampler time of the next read
  double interval_s = 0;          // the interval the read after that will use
  std::size_t most_entries = 0;   // the most entries one read returned
  std::uint64_t min_step_us = 0;  // the shortest step between two entries seen (0: none yet)
};

// Learns from one read of a stream (its entries, timestamps increasing) and sets the pace's
// interval: half of (most_entries - 1) x min_step_us, within [floor_s, ceiling_s]; floor_s
// until both are known. Pure (tested on its own).
void LearnDriverPace(const std::vector<DriverSample>& read, double floor_s, double ceiling_s,
                     DriverPace* pace);

// The last compute-process list read from the driver for one GPU, with the memory used that
// the same poll read.
struct ProcessRead {
  bool ok = false;  // a read has answered
  double at_s = 0;  // sampler time of that read
  std::optional<std::uint64_t> mem_used_bytes;
  // The read before it saw the same memory used: the list has had a whole process period to
  // catch up with the memory (on the H200 NVML listed a new process 0.32 s after its
  // first allocation moved the memory used).
  bool settled = false;
  std::vector<GpuProcess> processes;
};

// True when LAST still stands for the list at sampler time T_S: it answered and is settled,
// the memory used read with it and MEM_USED_NOW are both known and equal, and less than
// REREAD_S has passed (REREAD_S <= 0: never). Pure (tested on its own).
bool ProcessListStillHolds(const ProcessRead& last, std::optional<std::uint64_t> mem_used_now,
                           double t_s, double reread_s);

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
  long driver_reads = 0;    // nvmlDeviceGetSamples reads, all streams
  long process_reads = 0;   // process lists read from the driver, all GPUs
  long process_reused = 0;  // snapshots that repeated the last list (ProcessListStillHolds)
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
  // Reads the driver streams due at sampler time t_s (all of them with t_s infinite); returns
  // when the next one is due.
  double FetchDriverSamples(double t_s);

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
  std::vector<DriverPace> pace_;  // beside driver_; the sampler thread's only
  SamplerStats stats_;
  std::FILE* out_ = nullptr;
  std::string buffer_;
};

}  // namespace vouch
