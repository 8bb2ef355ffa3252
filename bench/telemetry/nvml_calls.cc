// nvml_calls: what each NVML call the sampler makes costs the calling thread, one call at a
// time, paced as the sampler paces them (issue 24: the sampler's CPU on the H200).
//
//   nvml_calls [--gpu N] [--seconds S] [--interval-ms MS] [--only PREFIX]
//
// For each case, S seconds (default 3) of one call every MS ms (10; the driver-buffer cases
// every 100 ms), the thread waking on clock_nanosleep(TIMER_ABSTIME) as the sampler's loop
// does. Per case: the call's thread CPU time (CLOCK_THREAD_CPUTIME_ID around the call) and wall
// time, median and mean in microseconds, and the whole thread's CPU over the case in % of one
// core (the wake-ups included). "wake" is the thread with no call: the floor. "five" is the
// sampler's poll (SM and memory clock, power, utilization, event reasons); "five_twice" asks the
// same five twice in a row and reports the second set: a second set much cheaper than the first
// says the cost is the cold thread (caches, the core's clock), not the driver.
// One JSON line per case. Needs nvml.h (the CUDA toolkit's include folder) and the driver:
//   g++ -O2 -std=c++17 -I"$CUDA_HOME/include" nvml_calls.cc -ldl -o nvml_calls
// NVML is opened with dlopen, as vouch does, so the build needs no library.
#include <dlfcn.h>
#include <nvml.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

double Now(clockid_t c) {
  timespec t{};
  clock_gettime(c, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) * 1e-3;  // us
}

template <class F>
F Sym(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (!p) {
    std::fprintf(stderr, "nvml_calls: %s not in libnvidia-ml.so.1\n", name);
    std::exit(2);
  }
  return reinterpret_cast<F>(p);
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

struct Case {
  std::string name;
  double interval_ms;
  std::function<int()> call;  // returns the NVML status of its last call
};

}  // namespace

int main(int argc, char** argv) {
  unsigned gpu = 0;
  double seconds = 3, interval_ms = 10;
  std::string only;  // --only PREFIX: the cases whose name starts with it
  for (int i = 1; i < argc; ++i) {
    auto val = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "nvml_calls: %s needs a value\n", argv[i]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--gpu")) {
      gpu = static_cast<unsigned>(std::atoi(val()));
    } else if (!std::strcmp(argv[i], "--seconds")) {
      seconds = std::atof(val());
    } else if (!std::strcmp(argv[i], "--only")) {
      only = val();
    } else if (!std::strcmp(argv[i], "--interval-ms")) {
      interval_ms = std::atof(val());
    } else {
      std::fprintf(
          stderr, "usage: nvml_calls [--gpu N] [--seconds S] [--interval-ms MS] [--only PREFIX]\n");
      return 2;
    }
  }
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "nvml_calls: %s\n", dlerror());
    return 2;
  }
  auto init = Sym<nvmlReturn_t (*)()>(lib, "nvmlInit_v2");
  auto handle =
      Sym<nvmlReturn_t (*)(unsigned, nvmlDevice_t*)>(lib, "nvmlDeviceGetHandleByIndex_v2");
  auto clock_info = Sym<nvmlReturn_t (*)(nvmlDevice_t, nvmlClockType_t, unsigned*)>(
      lib, "nvmlDeviceGetClockInfo");
  auto get_clock = Sym<nvmlReturn_t (*)(nvmlDevice_t, nvmlClockType_t, nvmlClockId_t, unsigned*)>(
      lib, "nvmlDeviceGetClock");
  auto power = Sym<nvmlReturn_t (*)(nvmlDevice_t, unsigned*)>(lib, "nvmlDeviceGetPowerUsage");
  auto util =
      Sym<nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*)>(lib, "nvmlDeviceGetUtilizationRates");
  auto reasons = Sym<nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*)>(
      lib, "nvmlDeviceGetCurrentClocksEventReasons");
  auto meminfo = Sym<nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*)>(lib, "nvmlDeviceGetMemoryInfo");
  auto temp = Sym<nvmlReturn_t (*)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned*)>(
      lib, "nvmlDeviceGetTemperature");
  auto procs = Sym<nvmlReturn_t (*)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*)>(
      lib, "nvmlDeviceGetComputeRunningProcesses_v3");
  auto fields =
      Sym<nvmlReturn_t (*)(nvmlDevice_t, int, nvmlFieldValue_t*)>(lib, "nvmlDeviceGetFieldValues");
  auto samples =
      Sym<nvmlReturn_t (*)(nvmlDevice_t, nvmlSamplingType_t, unsigned long long, nvmlValueType_t*,
                           unsigned*, nvmlSample_t*)>(lib, "nvmlDeviceGetSamples");
  if (init() != NVML_SUCCESS) return 2;
  nvmlDevice_t d{};
  if (handle(gpu, &d) != NVML_SUCCESS) return 2;

  unsigned v = 0;
  unsigned long long r = 0;
  nvmlUtilization_t u{};
  nvmlMemory_t m{};
  std::vector<nvmlProcessInfo_t> pbuf(64);
  std::vector<nvmlSample_t> sbuf(4096);
  nvmlValueType_t vt{};
  unsigned long long last_power = 0, last_util = 0;
  auto five = [&] {
    int rc = clock_info(d, NVML_CLOCK_SM, &v);
    rc |= clock_info(d, NVML_CLOCK_MEM, &v);
    rc |= power(d, &v);
    rc |= util(d, &u);
    rc |= reasons(d, &r);
    return rc;
  };
  // Fetch with a buffer, since a timestamp (0: all the driver keeps); the last one kept.
  auto fetch = [&](nvmlSamplingType_t type, unsigned long long* since) {
    unsigned n = static_cast<unsigned>(sbuf.size());
    nvmlReturn_t rc = samples(d, type, since ? *since : 0, &vt, &n, sbuf.data());
    if (rc == NVML_SUCCESS && n && since) *since = sbuf[n - 1].timeStamp;
    return static_cast<int>(rc);
  };
  // The same with a capacity of CAP entries (0: the count the driver gives for a null buffer,
  // asked once per case, as vouch sizes its buffer).
  unsigned counted = 0;
  auto fetch_cap = [&](nvmlSamplingType_t type, unsigned long long* since, unsigned cap) {
    if (!cap) {
      if (!counted) samples(d, type, 0, &vt, &counted, nullptr);
      cap = counted ? counted : 1;
    }
    unsigned n = cap;
    nvmlReturn_t rc = samples(d, type, *since, &vt, &n, sbuf.data());
    if (rc == NVML_SUCCESS && n) *since = sbuf[n - 1].timeStamp;
    return static_cast<int>(rc);
  };
  auto query = [&](nvmlSamplingType_t type, unsigned long long since) {
    unsigned n = 0;
    return static_cast<int>(samples(d, type, since, &vt, &n, nullptr));
  };
  std::vector<Case> cases = {
      {"wake", interval_ms, [] { return 0; }},
      {"clock_sm", interval_ms, [&] { return static_cast<int>(clock_info(d, NVML_CLOCK_SM, &v)); }},
      {"clock_mem", interval_ms,
       [&] { return static_cast<int>(clock_info(d, NVML_CLOCK_MEM, &v)); }},
      {"getclock_sm_current", interval_ms,
       [&] { return static_cast<int>(get_clock(d, NVML_CLOCK_SM, NVML_CLOCK_ID_CURRENT, &v)); }},
      {"power", interval_ms, [&] { return static_cast<int>(power(d, &v)); }},
      {"power_field_instant", interval_ms,
       [&] {
         nvmlFieldValue_t f{};
         f.fieldId = NVML_FI_DEV_POWER_INSTANT;
         nvmlReturn_t rc = fields(d, 1, &f);
         return static_cast<int>(rc != NVML_SUCCESS ? rc : f.nvmlReturn);
       }},
      {"util", interval_ms, [&] { return static_cast<int>(util(d, &u)); }},
      {"reasons", interval_ms, [&] { return static_cast<int>(reasons(d, &r)); }},
      {"meminfo", interval_ms, [&] { return static_cast<int>(meminfo(d, &m)); }},
      {"temp", interval_ms, [&] { return static_cast<int>(temp(d, NVML_TEMPERATURE_GPU, &v)); }},
      {"procs", interval_ms,
       [&] {
         unsigned n = static_cast<unsigned>(pbuf.size());
         return static_cast<int>(procs(d, &n, pbuf.data()));
       }},
      {"five", interval_ms, five},
      {"five_twice", interval_ms, five},  // timed: the second set (below)
      {"samples_power_query", 100, [&] { return query(NVML_TOTAL_POWER_SAMPLES, last_power); }},
      {"samples_power_fetch_all", 100, [&] { return fetch(NVML_TOTAL_POWER_SAMPLES, nullptr); }},
      {"samples_power_fetch_since", 100,
       [&] { return fetch(NVML_TOTAL_POWER_SAMPLES, &last_power); }},
      {"samples_power_fetch_since_cap_count", 100,
       [&] { return fetch_cap(NVML_TOTAL_POWER_SAMPLES, &last_power, 0); }},
      {"samples_power_fetch_since_cap_64", 100,
       [&] { return fetch_cap(NVML_TOTAL_POWER_SAMPLES, &last_power, 64); }},
      {"samples_power_fetch_since_cap_16", 100,
       [&] { return fetch_cap(NVML_TOTAL_POWER_SAMPLES, &last_power, 16); }},
      {"samples_util_query", 100, [&] { return query(NVML_GPU_UTILIZATION_SAMPLES, last_util); }},
      {"samples_util_fetch_all", 100, [&] { return fetch(NVML_GPU_UTILIZATION_SAMPLES, nullptr); }},
      {"samples_util_fetch_since", 100,
       [&] { return fetch(NVML_GPU_UTILIZATION_SAMPLES, &last_util); }},
      {"samples_util_fetch_since_cap_count", 100,
       [&] { return fetch_cap(NVML_GPU_UTILIZATION_SAMPLES, &last_util, 0); }},
      {"samples_util_fetch_since_cap_64", 100,
       [&] { return fetch_cap(NVML_GPU_UTILIZATION_SAMPLES, &last_util, 64); }},
      {"samples_util_fetch_since_cap_16", 100,
       [&] { return fetch_cap(NVML_GPU_UTILIZATION_SAMPLES, &last_util, 16); }},
  };
  for (auto& c : cases) {
    if (c.name.compare(0, only.size(), only) != 0) continue;
    if (c.name.find("cap_count") != std::string::npos) counted = 0;
    std::vector<double> cpu_us, wall_us;
    int bad = 0, last_rc = 0;
    double step_ns = c.interval_ms * 1e6;
    timespec next{};
    clock_gettime(CLOCK_MONOTONIC, &next);
    double cpu0 = Now(CLOCK_THREAD_CPUTIME_ID), wall0 = Now(CLOCK_MONOTONIC);
    long n = static_cast<long>(seconds * 1000 / c.interval_ms);
    for (long i = 0; i < n; ++i) {
      if (c.name == "five_twice") c.call();
      double t0 = Now(CLOCK_THREAD_CPUTIME_ID), w0 = Now(CLOCK_MONOTONIC);
      int rc = c.call();
      cpu_us.push_back(Now(CLOCK_THREAD_CPUTIME_ID) - t0);
      wall_us.push_back(Now(CLOCK_MONOTONIC) - w0);
      if (rc) ++bad, last_rc = rc;
      long long ns = next.tv_nsec + static_cast<long long>(step_ns);
      next.tv_sec += static_cast<time_t>(ns / 1000000000);
      next.tv_nsec = static_cast<long>(ns % 1000000000);
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
    }
    double cpu = Now(CLOCK_THREAD_CPUTIME_ID) - cpu0, wall = Now(CLOCK_MONOTONIC) - wall0;
    std::printf(
        "{\"case\":\"%s\",\"interval_ms\":%g,\"calls\":%ld,\"errors\":%d,\"last_error\":%d,"
        "\"call_cpu_us_median\":%.2f,\"call_cpu_us_mean\":%.2f,\"call_wall_us_median\":%.2f,"
        "\"call_wall_us_mean\":%.2f,\"thread_cpu_pct\":%.4f}\n",
        c.name.c_str(), c.interval_ms, n, bad, last_rc, Median(cpu_us), Mean(cpu_us),
        Median(wall_us), Mean(wall_us), 100 * cpu / wall);
    std::fflush(stdout);
  }
  return 0;
}
