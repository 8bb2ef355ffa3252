#include "telemetry/sampler.h"

#include <fmt/format.h>
#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "util/host.h"
#include "util/json_io.h"

namespace vouch {

Sampler::Sampler(Device& device, SamplerOptions options)
    : device_(device), opt_(std::move(options)) {}

Sampler::~Sampler() { (void)Stop(); }

Status Sampler::Start() {
  if (running_) return MakeError("sampler already running");
  for (int g : opt_.gpus)
    if (g < 0 || g >= device_.Count())
      return MakeError("GPU {} does not exist (the device has {} GPUs: 0..{})", g, device_.Count(),
                       device_.Count() - 1);
  if (!opt_.jsonl_path.empty()) {
    out_ = std::fopen(opt_.jsonl_path.c_str(), "we");
    if (!out_)
      return MakeError("cannot create samples file {}: {}", opt_.jsonl_path, std::strerror(errno));
  }
  stop_ = false;
  running_ = true;
  thread_ = std::thread([this] { Loop(); });
  return OkStatus();
}

Status Sampler::Stop() {
  if (!running_) return OkStatus();
  {
    std::lock_guard<std::mutex> l(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
  running_ = false;
  Flush();
  if (out_) {
    if (std::fclose(out_) != 0 && stats_.write_error.empty())
      stats_.write_error = fmt::format("closing {}: {}", opt_.jsonl_path, std::strerror(errno));
    out_ = nullptr;
  }
  if (!stats_.write_error.empty()) return MakeError("samples stream: {}", stats_.write_error);
  return OkStatus();
}

void Sampler::Flush() {
  std::string data;
  {
    std::lock_guard<std::mutex> l(mu_);
    data.swap(buffer_);
  }
  if (!out_ || data.empty()) return;
  bool failed =
      std::fwrite(data.data(), 1, data.size(), out_) != data.size() || std::fflush(out_) != 0;
  int err = errno;
  data.clear();
  std::lock_guard<std::mutex> l(mu_);
  if (failed && stats_.write_error.empty())
    stats_.write_error = fmt::format("writing {}: {}", opt_.jsonl_path, std::strerror(err));
  // The buffer goes back with its capacity: no regrowth from empty after every flush.
  if (buffer_.empty()) buffer_.swap(data);
}

void Sampler::Loop() {
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  auto interval =
      std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(opt_.interval_s));
  auto next = t0;
  double next_procs_s = 0, next_flush_s = opt_.flush_interval_s;
  double next_driver_s = opt_.driver_interval_s;
  double cost_sum_us = 0;
  timespec cpu0{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
  // Named, so that a profile or /proc/PID/task/TID/comm tells the sampler from the leg's poller.
  pthread_setname_np(pthread_self(), "vouch-sampler");
  // One round's readings, kept across rounds: no allocation per poll once they have grown.
  std::vector<Sample> round;
  std::vector<ProcessSnapshot> snaps;
  std::vector<ProcessRead> last_procs(opt_.gpus.size());
  round.reserve(opt_.gpus.size());
  while (!stop_) {
    auto begin = clock::now();
    double t_s = std::chrono::duration<double>(begin - t0).count();
    double unix_s = UnixNowSeconds();
    round.clear();
    snaps.clear();
    bool slow_due = t_s >= next_procs_s;  // memory used, temperature and processes: every 100 ms
    for (int g : opt_.gpus) {
      Sample s = device_.Poll(g, slow_due);
      s.gpu = g;
      s.t_s = t_s;
      s.unix_s = unix_s;
      round.push_back(s);
    }
    long proc_reads = 0, proc_reused = 0;
    if (slow_due) {
      next_procs_s = t_s + opt_.process_interval_s;
      for (std::size_t i = 0; i < opt_.gpus.size(); ++i) {
        int g = opt_.gpus[i];
        ProcessRead& last = last_procs[i];
        const std::optional<std::uint64_t>& mem = round[i].mem_used_bytes;
        if (ProcessListStillHolds(last, mem, t_s, opt_.process_reread_s)) {
          snaps.push_back({g, t_s, unix_s, last.processes});
          ++proc_reused;
          continue;
        }
        auto p = device_.Processes(g);
        ++proc_reads;
        last.settled = last.ok && p && mem && last.mem_used_bytes == mem;
        last.ok = static_cast<bool>(p);
        if (!p) continue;
        last.at_s = t_s;
        last.mem_used_bytes = mem;
        last.processes = *p;
        snaps.push_back({g, t_s, unix_s, std::move(*p)});
      }
    }
    double cost_us = std::chrono::duration<double, std::micro>(clock::now() - begin).count();
    {
      std::lock_guard<std::mutex> l(mu_);
      for (auto& s : round) {
        if (out_) AppendJsonLine(s, &buffer_);
        samples_.push_back(std::move(s));
      }
      for (auto& p : snaps) {
        if (out_) AppendJsonLine(p, &buffer_);
        procs_.push_back(std::move(p));
      }
      ++stats_.polls;
      stats_.process_reads += proc_reads;
      stats_.process_reused += proc_reused;
      cost_sum_us += cost_us;
      stats_.poll_cost_mean_us = cost_sum_us / static_cast<double>(stats_.polls);
      stats_.poll_cost_max_us = std::max(stats_.poll_cost_max_us, cost_us);
    }
    if (t_s >= next_flush_s) {
      next_flush_s = t_s + opt_.flush_interval_s;
      Flush();
    }
    if (t_s >= next_driver_s) next_driver_s = FetchDriverSamples(t_s);
    next += interval;
    auto now = clock::now();
    if (now > next + interval) {  // fell behind: count it and re-anchor rather than burst
      std::lock_guard<std::mutex> l(mu_);
      ++stats_.late_polls;
      next = now;
    }
    std::unique_lock<std::mutex> l(stop_mu_);
    stop_cv_.wait_until(l, next, [this] { return stop_.load(); });
  }
  FetchDriverSamples(std::numeric_limits<double>::infinity());  // the last ones, up to the stop
  timespec cpu1{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
  std::lock_guard<std::mutex> l(mu_);
  stats_.thread_cpu_s = static_cast<double>(cpu1.tv_sec - cpu0.tv_sec) +
                        static_cast<double>(cpu1.tv_nsec - cpu0.tv_nsec) * 1e-9;
  stats_.wall_s = std::chrono::duration<double>(clock::now() - t0).count();
}

bool ProcessListStillHolds(const ProcessRead& last, std::optional<std::uint64_t> mem_used_now,
                           double t_s, double reread_s) {
  return reread_s > 0 && last.ok && last.settled && last.mem_used_bytes && mem_used_now &&
         *last.mem_used_bytes == *mem_used_now && t_s - last.at_s < reread_s;
}

void LearnDriverPace(const std::vector<DriverSample>& read, double floor_s, double ceiling_s,
                     DriverPace* pace) {
  pace->most_entries = std::max(pace->most_entries, read.size());
  for (std::size_t i = 1; i < read.size(); ++i) {
    if (read[i].timestamp_us <= read[i - 1].timestamp_us) continue;
    std::uint64_t step = read[i].timestamp_us - read[i - 1].timestamp_us;
    if (pace->min_step_us == 0 || step < pace->min_step_us) pace->min_step_us = step;
  }
  // The time the buffer is seen to hold: one read's most entries, each step the shortest. A
  // ring of N entries at period P holds (N - 1) P; one that keeps T seconds shows at most T.
  double holds_s = pace->most_entries < 2 ? 0
                                          : static_cast<double>(pace->most_entries - 1) *
                                                static_cast<double>(pace->min_step_us) * 1e-6;
  pace->interval_s = std::clamp(holds_s / 2, floor_s, std::max(floor_s, ceiling_s));
}

// Reads each GPU's driver samples newer than the last one kept, for the streams due (see
// SamplerOptions: each at its own pace). A quantity whose first read answers an error is not
// asked again (its error is kept: the H200's clocks); a later error (e.g. nothing new yet) is
// asked again at the first interval.
double Sampler::FetchDriverSamples(double t_s) {
  size_t streams = 0;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (driver_.empty())
      for (int g : opt_.gpus)
        // The SM clock too: where it answers NOT_FOUND (the H200) that is recorded once, and
        // the clocks are polled.
        for (DriverQuantity q :
             {DriverQuantity::kPower, DriverQuantity::kGpuUtil, DriverQuantity::kSmClock})
          driver_.push_back({g, q, {}, ""});
    streams = driver_.size();
  }
  if (pace_.size() != streams) pace_.assign(streams, DriverPace{0, opt_.driver_interval_s, 0, 0});
  double next = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < streams; ++i) {
    DriverPace& pace = pace_[i];
    std::uint64_t since = 0;
    bool first = true;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!driver_[i].error.empty()) continue;
      if (!driver_[i].samples.empty()) since = driver_[i].samples.back().timestamp_us;
      first = driver_[i].samples.empty();
    }
    if (t_s < pace.due_s) {
      next = std::min(next, pace.due_s);
      continue;
    }
    auto got = device_.DriverSamples(driver_[i].gpu, driver_[i].quantity, since);
    std::lock_guard<std::mutex> l(mu_);
    ++stats_.driver_reads;
    if (!got) {
      if (first) {
        driver_[i].error = got.error().message;
        continue;
      }
      pace.interval_s = opt_.driver_interval_s;
    } else {
      LearnDriverPace(*got, opt_.driver_interval_s, opt_.driver_max_interval_s, &pace);
      for (const auto& d : *got)
        if (d.timestamp_us > since) driver_[i].samples.push_back(d);
    }
    pace.due_s = t_s + pace.interval_s;
    next = std::min(next, pace.due_s);
  }
  return next;
}

std::vector<DriverStream> Sampler::DriverStreams() const {
  std::lock_guard<std::mutex> l(mu_);
  return driver_;
}

std::vector<Sample> Sampler::Samples() const {
  std::lock_guard<std::mutex> l(mu_);
  return samples_;
}

std::vector<ProcessSnapshot> Sampler::Processes() const {
  std::lock_guard<std::mutex> l(mu_);
  return procs_;
}

std::optional<Sample> Sampler::Last(int gpu) const {
  std::lock_guard<std::mutex> l(mu_);
  for (auto it = samples_.rbegin(); it != samples_.rend(); ++it)
    if (it->gpu == gpu) return *it;
  return std::nullopt;
}

SamplerStats Sampler::Stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

std::optional<std::uint64_t> Sampler::PeakDeviceMemory(const std::vector<int>& pids) const {
  std::set<std::uint32_t> want(pids.begin(), pids.end());
  std::lock_guard<std::mutex> l(mu_);
  std::map<double, std::uint64_t> by_time;  // summed over GPUs at each snapshot time
  bool any = false;
  for (const auto& snap : procs_) {
    for (const auto& p : snap.processes) {
      if (want.count(p.pid) && p.used_bytes) {
        by_time[snap.t_s] += *p.used_bytes;
        any = true;
      }
    }
  }
  if (!any) return std::nullopt;
  std::uint64_t peak = 0;
  for (const auto& [t, b] : by_time) peak = std::max(peak, b);
  return peak;
}

}  // namespace vouch
