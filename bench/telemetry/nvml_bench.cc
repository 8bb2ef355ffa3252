// nvml_bench: how often NVML really updates each quantity, what polling at vouch's default
// interval misses, what one poll costs, and what the sampler thread costs.
//
//   nvml_bench [--seconds S] [--gpu N]      (run it while the GPU is busy)
//
// Prints one JSON document. Real NVML only (no --sim): the numbers are the driver's.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "telemetry/device.h"
#include "telemetry/sampler.h"

using namespace vouch;
using Clock = std::chrono::steady_clock;

namespace {

struct Series {
  std::vector<double> t_s;
  std::vector<double> v;
};

double Median(std::vector<double> x) {
  if (x.empty()) return 0;
  std::sort(x.begin(), x.end());
  return x[x.size() / 2];
}

double Pct(std::vector<double> x, double p) {
  if (x.empty()) return 0;
  std::sort(x.begin(), x.end());
  return x[std::min(x.size() - 1, static_cast<size_t>(p * static_cast<double>(x.size())))];
}

// Change points of a polled series: the times at which the value differs from the last.
std::vector<double> Changes(const Series& s) {
  std::vector<double> c;
  for (size_t i = 1; i < s.v.size(); ++i)
    if (s.v[i] != s.v[i - 1]) c.push_back(s.t_s[i]);
  return c;
}

nlohmann::json PeriodOf(const Series& s) {
  auto c = Changes(s);
  std::vector<double> gaps;
  for (size_t i = 1; i < c.size(); ++i) gaps.push_back((c[i] - c[i - 1]) * 1000);
  return {{"changes", c.size()},
          {"median_ms", Median(gaps)},
          {"p10_ms", Pct(gaps, 0.1)},
          {"p90_ms", Pct(gaps, 0.9)}};
}

// Appends each polled quantity of S, at time T_S, to its series.
void AddToSeries(const Sample& s, double t_s, std::map<std::string, Series>* series) {
  auto put = [&](const char* n, auto opt) {
    if (opt) {
      (*series)[n].t_s.push_back(t_s);
      (*series)[n].v.push_back(static_cast<double>(*opt));
    }
  };
  put("sm_mhz", s.sm_mhz);
  put("mem_mhz", s.mem_mhz);
  put("power_mw", s.power_mw);
  put("util_gpu_pct", s.util_gpu_pct);
  put("util_mem_pct", s.util_mem_pct);
  put("reasons", s.reasons);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  int gpu = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--seconds")
      seconds = std::atof(argv[i + 1]);
    else if (a == "--gpu")
      gpu = std::atoi(argv[i + 1]);
  }
  auto dev = OpenNvml();
  if (!dev) {
    fmt::print(stderr, "nvml_bench: {}\n", dev.error().message);
    return 1;
  }
  Device& d = **dev;
  nlohmann::json out;
  out["device"] = d.Describe();
  out["static"] = ToJson(d.Static(gpu));

  // 1) Poll every 1 ms (the ground truth of changes) and, at the same time, run the real
  //    sampler at vouch's default 10 ms; compare what each saw.
  const char* names[] = {"sm_mhz",       "mem_mhz",      "power_mw",
                         "util_gpu_pct", "util_mem_pct", "reasons"};
  std::map<std::string, Series> fast;
  std::vector<double> cost_us;
  Sampler sampler(d, SamplerOptions{{gpu}, 0.010, 0.1, "", 0.5});
  (void)sampler.Start();
  auto t0 = Clock::now();
  auto next = t0;
  while (std::chrono::duration<double>(Clock::now() - t0).count() < seconds) {
    auto b = Clock::now();
    Sample s = d.Poll(gpu);
    cost_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - b).count());
    AddToSeries(s, std::chrono::duration<double>(b - t0).count(), &fast);
    next += std::chrono::milliseconds(1);
    std::this_thread::sleep_until(next);
  }
  (void)sampler.Stop();
  auto slow_samples = sampler.Samples();
  std::map<std::string, Series> slow;
  for (const auto& s : slow_samples) AddToSeries(s, s.t_s, &slow);
  nlohmann::json q;
  for (const char* n : names) {
    q[n]["polled_1ms"] = PeriodOf(fast[n]);
    q[n]["polled_10ms"] = PeriodOf(slow[n]);
    // Readings the 10 ms sampler missed: changes the 1 ms poller saw beyond those it saw.
    long missed =
        static_cast<long>(Changes(fast[n]).size()) - static_cast<long>(Changes(slow[n]).size());
    q[n]["missed_at_10ms"] = std::max(0L, missed);
  }
  out["update_periods"] = q;

  // 2) The driver's own timestamped samples, where available.
  nlohmann::json drv;
  for (auto qty : {DriverQuantity::kPower, DriverQuantity::kGpuUtil, DriverQuantity::kMemUtil,
                   DriverQuantity::kSmClock, DriverQuantity::kMemClock}) {
    auto r = d.DriverSamples(gpu, qty, 0);
    if (!r) {
      drv[ToString(qty)] = {{"error", r.error().message}};
      continue;
    }
    std::vector<double> gaps;
    for (size_t i = 1; i < r->size(); ++i)
      gaps.push_back(static_cast<double>((*r)[i].timestamp_us - (*r)[i - 1].timestamp_us) / 1000.0);
    drv[ToString(qty)] = {{"samples", r->size()}, {"median_period_ms", Median(gaps)}};
  }
  out["driver_samples"] = drv;

  // 3) The cost of one poll (8 NVML queries) and of a process listing.
  std::vector<double> proc_us;
  for (int i = 0; i < 200; ++i) {
    auto b = Clock::now();
    (void)d.Processes(gpu);
    proc_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - b).count());
  }
  out["poll_cost_us"] = {{"median", Median(cost_us)},
                         {"p99", Pct(cost_us, 0.99)},
                         {"max", Pct(cost_us, 1.0)},
                         {"n", cost_us.size()}};
  out["process_list_cost_us"] = {{"median", Median(proc_us)}, {"p99", Pct(proc_us, 0.99)}};

  // 4) The sampler thread's CPU time at the default interval.
  Sampler s2(d, SamplerOptions{{gpu}, 0.010, 0.1, "/dev/null", 0.5});
  (void)s2.Start();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  (void)s2.Stop();
  auto st = s2.Stats();
  out["sampler"] = {{"polls", st.polls},
                    {"late_polls", st.late_polls},
                    {"wall_s", st.wall_s},
                    {"thread_cpu_s", st.thread_cpu_s},
                    {"cpu_percent_of_one_core", 100 * st.thread_cpu_s / st.wall_s},
                    {"poll_cost_mean_us", st.poll_cost_mean_us},
                    {"poll_cost_max_us", st.poll_cost_max_us}};
  out["not_supported"] = d.NotSupported();
  fmt::print("{}\n", out.dump(2));
  return 0;
}
