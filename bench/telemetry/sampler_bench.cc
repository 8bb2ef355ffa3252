// sampler_bench: what the sampler thread costs, alone (issue 24), on a simulated device or NVML.
//
//   sampler_bench [--sim STREAM] [--seconds S] [--interval-ms MS] [--out FILE.jsonl]
//                 [--process-ms MS] [--process-reread-ms MS] [--driver-ms MS]
//                 [--driver-max-ms MS] [--timer-slack-us US] [--pin] [--legs N]
//
// Runs vouch's Sampler as `vouch clock sample` does (GPU 0, 10 ms polls, processes every
// 100 ms, the JSONL stream written and flushed every 0.5 s) for S seconds and prints one JSON
// line: polls, samples, the sampler thread's CPU time and share of one core, the mean poll
// round. Without --sim it opens NVML. Small enough to run under callgrind
// (bench/telemetry/sampler_cpu.sh: instructions per poll, collection toggled on Sampler::Loop),
// which `vouch` itself is not: boost's long-double erf_inv initializer aborts under valgrind.
// --process-ms and --driver-ms change how often the process list and the driver's sample
// buffers are read (0: never), to tell their share of the cost apart; --process-reread-ms
// the longest a process list is repeated while the GPU's memory used holds (0: the list is
// read every time, as before 2026-12-05; the default is the sampler's, 1000); --driver-max-ms caps
// each driver buffer's learned interval (1000: every second, as before 2026-12-04). The line also
// says how many driver reads were made and, per driver stream, its readings and its longest
// step between two (a step well over the driver's period would be a lost reading).
// --timer-slack-us sets the thread's timer slack (prctl PR_SET_TIMERSLACK; Linux's default is
// 50 us) before the sampler starts, which its thread inherits: how late the kernel may wake it,
// so that its wake-up can share a timer interrupt with another's. --pin binds the process to the
// CPU it starts on before the sampler starts (its thread inherits it).
// --legs N starts and stops N samplers in turn, S seconds each, as N legs of `vouch run` do, and
// prints the median wall time of Start() and of Stop() (which joins the thread after its last
// driver-buffer reads) and the driver reads a leg makes: a short leg's fixed cost.
#include <fmt/format.h>
#include <sched.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "telemetry/device.h"
#include "telemetry/sampler.h"
#include "util/median.h"
#include "util/number.h"

using namespace vouch;

namespace {

// --legs: N samplers started and stopped in turn; the medians of Start() and Stop().
int StartStopLegs(Device& dev, const SamplerOptions& so, double seconds, int legs,
                  const char* device) {
  using clock = std::chrono::steady_clock;
  std::vector<double> start_us, stop_us, reads;
  for (int i = 0; i < legs; ++i) {
    Sampler sampler(dev, so);
    const auto t0 = clock::now();
    if (auto s = sampler.Start(); !s) {
      std::fprintf(stderr, "sampler_bench: %s\n", s.error().message.c_str());
      return 1;
    }
    const auto t1 = clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    const auto t2 = clock::now();
    if (auto s = sampler.Stop(); !s) {
      std::fprintf(stderr, "sampler_bench: %s\n", s.error().message.c_str());
      return 1;
    }
    const auto t3 = clock::now();
    start_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    stop_us.push_back(std::chrono::duration<double, std::micro>(t3 - t2).count());
    reads.push_back(static_cast<double>(sampler.Stats().driver_reads));
  }
  std::printf("%s\n",
              fmt::format("{{\"device\":\"{}\",\"legs\":{},\"seconds\":{},"
                          "\"start_us_median\":{:.1f},\"stop_us_median\":{:.1f},"
                          "\"stop_us_max\":{:.1f},\"driver_reads_median\":{}}}",
                          device, legs, seconds, MedianOf(start_us), MedianOf(stop_us),
                          *std::max_element(stop_us.begin(), stop_us.end()), MedianOf(reads))
                  .c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string sim, out = "/dev/null";
  double seconds = 10, interval_ms = 10, process_ms = 100, driver_ms = 1000,
         driver_max_ms = SamplerOptions{}.driver_max_interval_s * 1000, slack_us = -1,
         process_reread_ms = SamplerOptions{}.process_reread_s * 1000;
  bool pin = false;
  int legs = 1;
  for (int i = 1; i < argc; ++i) {
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "sampler_bench: %s needs a value\n", argv[i]);
        std::exit(64);
      }
      return argv[++i];
    };
    // A number that is one, not negative (atof read "abc" as 0 and "1e400" as infinity).
    auto number = [&]() -> double {
      const char* flag = argv[i];
      auto v = ParseFiniteDouble(next(), flag);
      if (!v || *v < 0) {
        std::fprintf(
            stderr, "sampler_bench: %s\n",
            v ? fmt::format("{}: {} is negative", flag, *v).c_str() : v.error().message.c_str());
        std::exit(64);
      }
      return *v;
    };
    if (!std::strcmp(argv[i], "--pin")) {
      pin = true;
    } else if (!std::strcmp(argv[i], "--sim")) {
      sim = next();
    } else if (!std::strcmp(argv[i], "--seconds")) {
      seconds = number();
    } else if (!std::strcmp(argv[i], "--interval-ms")) {
      interval_ms = number();
    } else if (!std::strcmp(argv[i], "--process-ms")) {
      process_ms = number();
    } else if (!std::strcmp(argv[i], "--process-reread-ms")) {
      process_reread_ms = number();
    } else if (!std::strcmp(argv[i], "--driver-ms")) {
      driver_ms = number();
    } else if (!std::strcmp(argv[i], "--driver-max-ms")) {
      driver_max_ms = number();
    } else if (!std::strcmp(argv[i], "--legs")) {
      const char* flag = argv[i];
      auto n = ParseInt64In(next(), 1, 1000000, flag);
      if (!n) {
        std::fprintf(stderr, "sampler_bench: %s\n", n.error().message.c_str());
        return 64;
      }
      legs = static_cast<int>(*n);
    } else if (!std::strcmp(argv[i], "--timer-slack-us")) {
      slack_us = number();
    } else if (!std::strcmp(argv[i], "--out")) {
      out = next();
    } else {
      std::fprintf(stderr,
                   "usage: sampler_bench [--sim STREAM] [--seconds S] [--interval-ms MS] "
                   "[--out FILE.jsonl] [--process-ms MS] [--process-reread-ms MS] [--driver-ms MS] "
                   "[--driver-max-ms MS] [--timer-slack-us US] [--pin] [--legs N]\n");
      return 64;
    }
  }
  auto dev = sim.empty() ? OpenNvml() : OpenSimulated(sim, "", 0);
  if (!dev) {
    std::fprintf(stderr, "sampler_bench: %s\n", dev.error().message.c_str());
    return 1;
  }
  SamplerOptions so{{0}, interval_ms / 1000, 0.1, out, 0.5};
  const double never = 1e9;  // seconds
  so.process_interval_s = process_ms > 0 ? process_ms / 1000 : never;
  so.process_reread_s = process_reread_ms / 1000;
  so.driver_interval_s = driver_ms > 0 ? driver_ms / 1000 : never;
  so.driver_max_interval_s = driver_ms > 0 ? driver_max_ms / 1000 : never;
  if (slack_us >= 0 &&
      ::prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(slack_us * 1000)) != 0) {
    std::fprintf(stderr, "sampler_bench: prctl(PR_SET_TIMERSLACK): %s\n", std::strerror(errno));
    return 1;
  }
  if (pin) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
      std::fprintf(stderr, "sampler_bench: sched_setaffinity: %s\n", std::strerror(errno));
      return 1;
    }
  }
  if (legs > 1) return StartStopLegs(**dev, so, seconds, legs, sim.empty() ? "nvml" : "sim");
  Sampler sampler(**dev, so);
  if (auto s = sampler.Start(); !s) {
    std::fprintf(stderr, "sampler_bench: %s\n", s.error().message.c_str());
    return 1;
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  if (auto s = sampler.Stop(); !s) {
    std::fprintf(stderr, "sampler_bench: %s\n", s.error().message.c_str());
    return 1;
  }
  SamplerStats st = sampler.Stats();
  std::string streams;
  for (const auto& d : sampler.DriverStreams()) {
    std::uint64_t longest = 0;
    for (std::size_t i = 1; i < d.samples.size(); ++i)
      longest = std::max(longest, d.samples[i].timestamp_us - d.samples[i - 1].timestamp_us);
    streams += fmt::format(
        "{}{{\"quantity\":\"{}\",\"readings\":{},\"longest_step_us\":{},"
        "\"answered\":{}}}",
        streams.empty() ? "" : ",", ToString(d.quantity), d.samples.size(), longest,
        d.error.empty());
  }
  std::printf(
      "%s\n",
      fmt::format("{{\"device\":\"{}\",\"interval_ms\":{},\"polls\":{},\"samples\":{},"
                  "\"timer_slack_ns\":{},\"pinned\":{},\"process_ms\":{},\"driver_ms\":{},\"driver_"
                  "max_ms\":{},"
                  "\"driver_reads\":{},\"process_reread_ms\":{},\"process_reads\":{},"
                  "\"process_reused\":{},"
                  "\"late_polls\":{},\"thread_cpu_s\":{:.6f},\"wall_s\":{:.3f},"
                  "\"cpu_pct_of_core\":{:.4f},\"poll_cost_mean_us\":{:.2f},\"driver\":[{}]}}",
                  sim.empty() ? "nvml" : "sim", interval_ms, st.polls, sampler.Samples().size(),
                  ::prctl(PR_GET_TIMERSLACK), pin, process_ms, driver_ms, driver_max_ms,
                  st.driver_reads, process_reread_ms, st.process_reads, st.process_reused,
                  st.late_polls, st.thread_cpu_s, st.wall_s,
                  st.wall_s > 0 ? 100 * st.thread_cpu_s / st.wall_s : 0.0, st.poll_cost_mean_us,
                  streams)
          .c_str());
  return 0;
}
