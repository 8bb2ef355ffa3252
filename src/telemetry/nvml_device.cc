// NVML loaded at run time with dlopen: the build needs no NVIDIA header or library and the
// binary runs where there is no GPU. Versioned symbols (nvmlInit_v2, ..._v3) are tried
// first. Every error carries the call and nvmlErrorString (after nvbench's NVML macro).
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <fstream>
#include <mutex>
#include <set>

#include "telemetry/device.h"
#include "util/host.h"
#include "util/strings.h"

namespace vouch {
namespace {

// The few NVML types used here, as nvml.h defines them.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
constexpr unsigned NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2;
struct nvmlUtilization_t {
  unsigned gpu, memory;
};
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct nvmlProcessInfo_v1_t {
  unsigned pid;
  unsigned long long usedGpuMemory;
};
struct nvmlProcessInfo_t {  // _v2 and _v3
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId, computeInstanceId;
};
union nvmlValue_t {
  double d;
  unsigned ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
  signed short ss;
};
struct nvmlSample_t {
  unsigned long long timeStamp;
  nvmlValue_t sampleValue;
};
constexpr unsigned long long kNotAvailable = 0xFFFFFFFFFFFFFFFFull;  // NVML_VALUE_NOT_AVAILABLE
struct nvmlViolationTime_t {
  unsigned long long referenceTime;  // CPU timestamp, microseconds
  unsigned long long violationTime;  // nanoseconds, cumulative
};
struct nvmlFieldValue_t {
  unsigned fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;  // nvmlValueType_t
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};
constexpr unsigned NVML_FI_DEV_POWER_AVERAGE = 185, NVML_FI_DEV_POWER_INSTANT = 186;  // mW

struct Api {
  void* lib = nullptr;
  nvmlReturn_t (*Init)() = nullptr;
  nvmlReturn_t (*Shutdown)() = nullptr;
  const char* (*ErrorString)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*SystemGetDriverVersion)(char*, unsigned) = nullptr;
  nvmlReturn_t (*SystemGetCudaDriverVersion)(int*) = nullptr;
  nvmlReturn_t (*DeviceGetCount)(unsigned*) = nullptr;
  nvmlReturn_t (*DeviceGetHandleByIndex)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*DeviceGetName)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*DeviceGetUUID)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*DeviceGetPciInfo)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*DeviceGetMaxClockInfo)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*DeviceGetApplicationsClock)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*DeviceGetPersistenceMode)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*DeviceGetMemoryInfo)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*DeviceGetClockInfo)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*DeviceGetEventReasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*DeviceGetUtilizationRates)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*DeviceGetPowerUsage)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*DeviceGetTemperature)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*DeviceGetComputeProcesses)(nvmlDevice_t, unsigned*, void*) = nullptr;
  bool process_v1_layout = false;
  nvmlReturn_t (*DeviceGetSamples)(nvmlDevice_t, unsigned, unsigned long long, int*, unsigned*,
                                   nvmlSample_t*) = nullptr;
  nvmlReturn_t (*DeviceGetViolationStatus)(nvmlDevice_t, unsigned, nvmlViolationTime_t*) = nullptr;
  nvmlReturn_t (*DeviceGetFieldValues)(nvmlDevice_t, int, nvmlFieldValue_t*) = nullptr;
  nvmlReturn_t (*DeviceSetGpuLockedClocks)(nvmlDevice_t, unsigned, unsigned) = nullptr;
  nvmlReturn_t (*DeviceResetGpuLockedClocks)(nvmlDevice_t) = nullptr;
};

template <class F>
void Load(void* lib, F& fn, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (void* p = ::dlsym(lib, n)) {
      fn = reinterpret_cast<F>(p);
      return;
    }
  }
}

std::string ProcessName(unsigned pid) {
  std::ifstream in(fmt::format("/proc/{}/comm", pid));
  std::string name;
  std::getline(in, name);
  return name.empty() ? "?" : name;
}

class NvmlDevice final : public Device {
 public:
  NvmlDevice(Api api, std::vector<nvmlDevice_t> handles, std::string driver)
      : api_(api),
        handles_(std::move(handles)),
        driver_(std::move(driver)),
        unsupported_fields_(new std::atomic<std::uint32_t>[handles_.size()]()) {}
  ~NvmlDevice() override {
    if (api_.Shutdown) api_.Shutdown();
    // The library stays loaded: unloading NVML while a thread may touch it is not worth it.
  }

  bool Simulated() const override { return false; }
  std::string Describe() const override {
    return fmt::format("NVML (libnvidia-ml.so.1), driver {}", driver_);
  }
  int Count() const override { return static_cast<int>(handles_.size()); }

  StaticState Static(int gpu) override {
    StaticState s;
    s.index = gpu;
    nvmlDevice_t d = handles_.at(static_cast<size_t>(gpu));
    char buf[256] = {};
    if (Ok("nvmlDeviceGetName", api_.DeviceGetName, d, buf, unsigned{sizeof buf})) s.name = buf;
    if (Ok("nvmlDeviceGetUUID", api_.DeviceGetUUID, d, buf, unsigned{sizeof buf})) s.uuid = buf;
    nvmlPciInfo_t pci{};
    if (Ok("nvmlDeviceGetPciInfo_v3", api_.DeviceGetPciInfo, d, &pci)) s.pci_bus_id = pci.busId;
    s.driver_version = driver_;
    int cuda = 0;
    if (Ok("nvmlSystemGetCudaDriverVersion_v2", api_.SystemGetCudaDriverVersion, &cuda))
      s.cuda_driver_version = fmt::format("{}.{}", cuda / 1000, (cuda % 1000) / 10);
    unsigned mhz = 0;
    if (Ok("nvmlDeviceGetMaxClockInfo(SM)", api_.DeviceGetMaxClockInfo, d, NVML_CLOCK_SM, &mhz))
      s.max_sm_mhz = static_cast<int>(mhz);
    if (Ok("nvmlDeviceGetApplicationsClock(GRAPHICS)", api_.DeviceGetApplicationsClock, d,
           NVML_CLOCK_GRAPHICS, &mhz))
      s.app_sm_mhz = static_cast<int>(mhz);
    int mode = 0;
    if (Ok("nvmlDeviceGetPersistenceMode", api_.DeviceGetPersistenceMode, d, &mode))
      s.persistence = mode != 0;
    nvmlMemory_t m{};
    if (Ok("nvmlDeviceGetMemoryInfo", api_.DeviceGetMemoryInfo, d, &m)) s.total_mem_bytes = m.total;
    s.not_supported = NotSupported();
    return s;
  }

  // A poll asks only for what the GPU can answer: a field answered NOT_SUPPORTED (or whose
  // symbol this NVML lacks) is recorded once (NotSupported()) and not asked again, since that
  // answer does not change; every other error is asked again on the next poll.
  Sample Poll(int gpu, bool with_slow) override {
    Sample s;
    s.gpu = gpu;
    nvmlDevice_t d = handles_.at(static_cast<size_t>(gpu));
    unsigned v = 0;
    if (Ask(gpu, kSmClock, "nvmlDeviceGetClockInfo(SM)", api_.DeviceGetClockInfo, d, NVML_CLOCK_SM,
            &v))
      s.sm_mhz = static_cast<int>(v);
    if (Ask(gpu, kMemClock, "nvmlDeviceGetClockInfo(MEM)", api_.DeviceGetClockInfo, d,
            NVML_CLOCK_MEM, &v))
      s.mem_mhz = static_cast<int>(v);
    if (Ask(gpu, kPower, "nvmlDeviceGetPowerUsage", api_.DeviceGetPowerUsage, d, &v))
      s.power_mw = v;
    nvmlUtilization_t u{};
    if (Ask(gpu, kUtil, "nvmlDeviceGetUtilizationRates", api_.DeviceGetUtilizationRates, d, &u)) {
      s.util_gpu_pct = static_cast<int>(u.gpu);
      s.util_mem_pct = static_cast<int>(u.memory);
    }
    unsigned long long r = 0;
    if (Ask(gpu, kReasons, "nvmlDeviceGetCurrentClocksEventReasons", api_.DeviceGetEventReasons, d,
            &r))
      s.reasons = r;
    if (!with_slow) return s;
    nvmlMemory_t m{};
    if (Ask(gpu, kMemInfo, "nvmlDeviceGetMemoryInfo", api_.DeviceGetMemoryInfo, d, &m))
      s.mem_used_bytes = m.used;
    if (Ask(gpu, kTemp, "nvmlDeviceGetTemperature(GPU)", api_.DeviceGetTemperature, d, 0u, &v))
      s.temp_c = static_cast<int>(v);
    return s;
  }

  Result<std::vector<GpuProcess>> Processes(int gpu) override {
    if (!api_.DeviceGetComputeProcesses)
      return MakeError("nvmlDeviceGetComputeRunningProcesses: not in this NVML");
    nvmlDevice_t d = handles_.at(static_cast<size_t>(gpu));
    std::vector<GpuProcess> out;
    for (unsigned cap = 16; cap <= 4096; cap *= 4) {
      unsigned n = cap;
      std::vector<nvmlProcessInfo_t> v2(api_.process_v1_layout ? 0 : cap);
      std::vector<nvmlProcessInfo_v1_t> v1(api_.process_v1_layout ? cap : 0);
      void* buf = api_.process_v1_layout ? static_cast<void*>(v1.data()) : v2.data();
      nvmlReturn_t rc = api_.DeviceGetComputeProcesses(d, &n, buf);
      if (rc == NVML_ERROR_INSUFFICIENT_SIZE) continue;
      if (rc != NVML_SUCCESS)
        return MakeError("nvmlDeviceGetComputeRunningProcesses(GPU {}): {}", gpu,
                         api_.ErrorString(rc));
      for (unsigned i = 0; i < n; ++i) {
        GpuProcess p;
        p.pid = api_.process_v1_layout ? v1[i].pid : v2[i].pid;
        unsigned long long used =
            api_.process_v1_layout ? v1[i].usedGpuMemory : v2[i].usedGpuMemory;
        if (used != kNotAvailable) p.used_bytes = used;
        p.name = ProcessName(p.pid);
        out.push_back(p);
      }
      return out;
    }
    return MakeError("nvmlDeviceGetComputeRunningProcesses(GPU {}): more than 4096 processes", gpu);
  }

  Result<MemoryInfo> Memory(int gpu) override {
    nvmlMemory_t m{};
    nvmlReturn_t rc = Call(api_.DeviceGetMemoryInfo, handles_.at(static_cast<size_t>(gpu)), &m);
    if (rc != NVML_SUCCESS) return MakeError("nvmlDeviceGetMemoryInfo(GPU {}): {}", gpu, Text(rc));
    return MemoryInfo{m.total, m.free, m.used};
  }

  std::string BootId() override { return ReadBootId(); }

  Status LockClocks(int gpu, int mhz) override {
    nvmlReturn_t rc = Call(api_.DeviceSetGpuLockedClocks, handles_.at(static_cast<size_t>(gpu)),
                           static_cast<unsigned>(mhz), static_cast<unsigned>(mhz));
    if (rc != NVML_SUCCESS)
      return MakeError("nvmlDeviceSetGpuLockedClocks(GPU {}, {} MHz): {}", gpu, mhz, Text(rc));
    return OkStatus();
  }
  Status ResetClocks(int gpu) override {
    nvmlReturn_t rc = Call(api_.DeviceResetGpuLockedClocks, handles_.at(static_cast<size_t>(gpu)));
    if (rc != NVML_SUCCESS)
      return MakeError("nvmlDeviceResetGpuLockedClocks(GPU {}): {}", gpu, Text(rc));
    return OkStatus();
  }

  Result<std::vector<DriverSample>> DriverSamples(int gpu, DriverQuantity q,
                                                  std::uint64_t since_us) override {
    // nvmlSamplingType_t: TOTAL_POWER 0, GPU_UTILIZATION 1, MEMORY_UTILIZATION 2,
    // PROCESSOR_CLK 5, MEMORY_CLK 6.
    unsigned type = q == DriverQuantity::kPower     ? 0
                    : q == DriverQuantity::kGpuUtil ? 1
                    : q == DriverQuantity::kMemUtil ? 2
                    : q == DriverQuantity::kSmClock ? 5
                                                    : 6;
    if (!api_.DeviceGetSamples) return MakeError("nvmlDeviceGetSamples: not in this NVML");
    nvmlDevice_t d = handles_.at(static_cast<size_t>(gpu));
    int vtype = 0;
    unsigned n = 0;
    nvmlReturn_t rc = api_.DeviceGetSamples(d, type, since_us, &vtype, &n, nullptr);
    if (rc != NVML_SUCCESS)
      return MakeError("nvmlDeviceGetSamples({}): {}", ToString(q), api_.ErrorString(rc));
    std::vector<nvmlSample_t> buf(n);
    rc = api_.DeviceGetSamples(d, type, since_us, &vtype, &n, buf.data());
    if (rc != NVML_SUCCESS)
      return MakeError("nvmlDeviceGetSamples({}): {}", ToString(q), api_.ErrorString(rc));
    std::vector<DriverSample> out;
    for (unsigned i = 0; i < n; ++i) {
      // nvmlValueType_t: DOUBLE 0, UNSIGNED_INT 1, UNSIGNED_LONG 2, UNSIGNED_LONG_LONG 3,
      // SIGNED_LONG_LONG 4, SIGNED_INT 5.
      const auto& v = buf[i].sampleValue;
      double x = vtype == 0   ? v.d
                 : vtype == 1 ? v.ui
                 : vtype == 2 ? static_cast<double>(v.ul)
                 : vtype == 3 ? static_cast<double>(v.ull)
                 : vtype == 4 ? static_cast<double>(v.sll)
                              : static_cast<double>(static_cast<int>(v.ui));
      out.push_back({buf[i].timeStamp, x});
    }
    return out;
  }

  // At a window's edges only: eight violation counters and two field values cost a few ms.
  EdgeReading ReadEdge(int gpu) override {
    EdgeReading r;
    nvmlDevice_t d = handles_.at(static_cast<size_t>(gpu));
    for (ThrottleCause c : kThrottleCauses) {
      nvmlViolationTime_t v{};
      nvmlReturn_t rc = Call(api_.DeviceGetViolationStatus, d, static_cast<unsigned>(c), &v);
      if (rc == NVML_SUCCESS)
        r.violation_ns[c] = v.violationTime;
      else
        r.errors.push_back(
            fmt::format("nvmlDeviceGetViolationStatus({}): {}", CounterName(c),
                        rc == NVML_ERROR_NOT_SUPPORTED ? "Not Supported" : Text(rc)));
    }
    nvmlFieldValue_t f[2] = {};
    f[0].fieldId = NVML_FI_DEV_POWER_INSTANT;
    f[1].fieldId = NVML_FI_DEV_POWER_AVERAGE;
    nvmlReturn_t rc = Call(api_.DeviceGetFieldValues, d, 2, f);
    for (int i = 0; i < 2 && rc == NVML_SUCCESS; ++i) {
      if (f[i].nvmlReturn != NVML_SUCCESS) continue;
      // nvmlValueType_t: DOUBLE 0, UNSIGNED_INT 1, UNSIGNED_LONG 2, UNSIGNED_LONG_LONG 3.
      const auto& v = f[i].value;
      double mw = f[i].valueType == 0   ? v.d
                  : f[i].valueType == 1 ? v.ui
                  : f[i].valueType == 2 ? static_cast<double>(v.ul)
                                        : static_cast<double>(v.ull);
      (i == 0 ? r.power_instant_w : r.power_average_w) = mw / 1000;
    }
    if (rc != NVML_SUCCESS)
      r.errors.push_back(fmt::format("nvmlDeviceGetFieldValues(POWER_INSTANT, POWER_AVERAGE): {}",
                                     rc == NVML_ERROR_NOT_SUPPORTED ? "Not Supported" : Text(rc)));
    return r;
  }

  std::vector<std::string> NotSupported() const override {
    std::lock_guard<std::mutex> l(mu_);
    return {unsupported_.begin(), unsupported_.end()};
  }

 private:
  std::string Text(nvmlReturn_t rc) const {
    return rc == -1 ? "symbol not found in libnvidia-ml.so.1" : api_.ErrorString(rc);
  }
  template <class F, class... A>
  nvmlReturn_t Call(F fn, A... args) const {
    return fn ? fn(args...) : -1;
  }
  // True on success; otherwise records "call: error" once and returns false.
  template <class F, class... A>
  bool Ok(const char* what, F fn, A... args) {
    nvmlReturn_t rc = Call(fn, args...);
    if (rc == NVML_SUCCESS) return true;
    std::lock_guard<std::mutex> l(mu_);
    unsupported_.insert(
        fmt::format("{}: {}", what, rc == NVML_ERROR_NOT_SUPPORTED ? "Not Supported" : Text(rc)));
    return false;
  }

  // Poll's fields, one bit each in unsupported_fields_.
  enum PollField : std::uint32_t {
    kSmClock = 1u << 0,
    kMemClock = 1u << 1,
    kPower = 1u << 2,
    kUtil = 1u << 3,
    kReasons = 1u << 4,
    kMemInfo = 1u << 5,
    kTemp = 1u << 6,
  };
  template <class F, class... A>
  bool Ask(int gpu, PollField field, const char* what, F fn, A... args) {
    auto& skip = unsupported_fields_[static_cast<size_t>(gpu)];
    if (skip.load(std::memory_order_relaxed) & field) return false;
    nvmlReturn_t rc = Call(fn, args...);
    if (rc == NVML_SUCCESS) return true;
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == -1) skip.fetch_or(field, std::memory_order_relaxed);
    std::lock_guard<std::mutex> l(mu_);
    unsupported_.insert(
        fmt::format("{}: {}", what, rc == NVML_ERROR_NOT_SUPPORTED ? "Not Supported" : Text(rc)));
    return false;
  }

  Api api_;
  std::vector<nvmlDevice_t> handles_;
  std::string driver_;
  mutable std::mutex mu_;
  std::set<std::string> unsupported_;
  std::unique_ptr<std::atomic<std::uint32_t>[]> unsupported_fields_;  // per GPU, PollField bits
};

}  // namespace

Result<std::unique_ptr<Device>> OpenNvml() {
  Api a;
  a.lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!a.lib)
    return MakeError(
        "cannot load NVML (libnvidia-ml.so.1): {}; is the NVIDIA driver installed? Without a GPU, "
        "use the simulated device: --sim FILE or VOUCH_SIM=FILE",
        ::dlerror());
  Load(a.lib, a.Init, {"nvmlInit_v2", "nvmlInit"});
  Load(a.lib, a.Shutdown, {"nvmlShutdown"});
  Load(a.lib, a.ErrorString, {"nvmlErrorString"});
  Load(a.lib, a.SystemGetDriverVersion, {"nvmlSystemGetDriverVersion"});
  Load(a.lib, a.SystemGetCudaDriverVersion,
       {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"});
  Load(a.lib, a.DeviceGetCount, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  Load(a.lib, a.DeviceGetHandleByIndex,
       {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  Load(a.lib, a.DeviceGetName, {"nvmlDeviceGetName"});
  Load(a.lib, a.DeviceGetUUID, {"nvmlDeviceGetUUID"});
  Load(a.lib, a.DeviceGetPciInfo, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"});
  Load(a.lib, a.DeviceGetMaxClockInfo, {"nvmlDeviceGetMaxClockInfo"});
  Load(a.lib, a.DeviceGetApplicationsClock, {"nvmlDeviceGetApplicationsClock"});
  Load(a.lib, a.DeviceGetPersistenceMode, {"nvmlDeviceGetPersistenceMode"});
  Load(a.lib, a.DeviceGetMemoryInfo, {"nvmlDeviceGetMemoryInfo"});
  Load(a.lib, a.DeviceGetClockInfo, {"nvmlDeviceGetClockInfo"});
  Load(a.lib, a.DeviceGetEventReasons,
       {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  Load(a.lib, a.DeviceGetUtilizationRates, {"nvmlDeviceGetUtilizationRates"});
  Load(a.lib, a.DeviceGetPowerUsage, {"nvmlDeviceGetPowerUsage"});
  Load(a.lib, a.DeviceGetTemperature, {"nvmlDeviceGetTemperature"});
  Load(a.lib, a.DeviceGetComputeProcesses,
       {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
  if (!a.DeviceGetComputeProcesses) {
    Load(a.lib, a.DeviceGetComputeProcesses, {"nvmlDeviceGetComputeRunningProcesses"});
    a.process_v1_layout = true;
  }
  Load(a.lib, a.DeviceGetSamples, {"nvmlDeviceGetSamples"});
  Load(a.lib, a.DeviceGetViolationStatus, {"nvmlDeviceGetViolationStatus"});
  Load(a.lib, a.DeviceGetFieldValues, {"nvmlDeviceGetFieldValues"});
  Load(a.lib, a.DeviceSetGpuLockedClocks, {"nvmlDeviceSetGpuLockedClocks"});
  Load(a.lib, a.DeviceResetGpuLockedClocks, {"nvmlDeviceResetGpuLockedClocks"});
  if (!a.Init || !a.ErrorString || !a.DeviceGetCount || !a.DeviceGetHandleByIndex)
    return MakeError("libnvidia-ml.so.1 lacks nvmlInit_v2/nvmlDeviceGetCount_v2: driver too old");
  nvmlReturn_t rc = a.Init();
  if (rc != NVML_SUCCESS) return MakeError("nvmlInit_v2: {}", a.ErrorString(rc));
  unsigned count = 0;
  rc = a.DeviceGetCount(&count);
  if (rc != NVML_SUCCESS) return MakeError("nvmlDeviceGetCount_v2: {}", a.ErrorString(rc));
  std::vector<nvmlDevice_t> handles;
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t d = nullptr;
    rc = a.DeviceGetHandleByIndex(i, &d);
    if (rc != NVML_SUCCESS)
      return MakeError("nvmlDeviceGetHandleByIndex_v2({}): {}", i, a.ErrorString(rc));
    handles.push_back(d);
  }
  char drv[96] = "?";
  if (a.SystemGetDriverVersion) a.SystemGetDriverVersion(drv, sizeof drv);
  return std::unique_ptr<Device>(new NvmlDevice(a, std::move(handles), drv));
}

}  // namespace vouch
