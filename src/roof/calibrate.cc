#include "roof/calibrate.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "util/fs.h"
#include "util/json_io.h"

namespace vouch {
namespace {

// The few CUDA driver API types used here, as cuda.h defines them.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUevent = struct CUevent_st*;
using CUstream = struct CUstream_st*;
struct CUuuid {
  unsigned char bytes[16];
};

struct Cuda {
  CUresult (*Init)(unsigned) = nullptr;
  CUresult (*GetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*DeviceGetCount)(int*) = nullptr;
  CUresult (*DeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*DeviceGetUuid)(CUuuid*, CUdevice) = nullptr;
  CUresult (*PrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*PrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*CtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*MemAlloc)(CUdeviceptr*, std::size_t) = nullptr;
  CUresult (*MemFree)(CUdeviceptr) = nullptr;
  CUresult (*MemsetD8)(CUdeviceptr, unsigned char, std::size_t) = nullptr;
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, std::size_t, CUstream) = nullptr;
  CUresult (*EventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*EventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*EventSynchronize)(CUevent) = nullptr;
  CUresult (*EventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  CUresult (*EventDestroy)(CUevent) = nullptr;
};

template <class F>
bool Sym(void* lib, F& fn, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (void* p = ::dlsym(lib, n)) {
      fn = reinterpret_cast<F>(p);
      return true;
    }
  return false;
}

std::string UuidText(const CUuuid& u) {
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += fmt::format("{:02x}", u.bytes[i]);
  }
  return s;
}

}  // namespace

Result<Ceiling> MeasureCopyBandwidth(const std::string& uuid, std::size_t bytes, int repeats) {
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return MakeError("no CUDA driver (dlopen libcuda.so.1: {})", ::dlerror());
  Cuda c;
  bool ok =
      Sym(lib, c.Init, {"cuInit"}) && Sym(lib, c.GetErrorString, {"cuGetErrorString"}) &&
      Sym(lib, c.DeviceGetCount, {"cuDeviceGetCount"}) && Sym(lib, c.DeviceGet, {"cuDeviceGet"}) &&
      Sym(lib, c.DeviceGetUuid, {"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}) &&
      Sym(lib, c.PrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}) &&
      Sym(lib, c.PrimaryCtxRelease,
          {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}) &&
      Sym(lib, c.CtxSetCurrent, {"cuCtxSetCurrent"}) && Sym(lib, c.MemAlloc, {"cuMemAlloc_v2"}) &&
      Sym(lib, c.MemFree, {"cuMemFree_v2"}) && Sym(lib, c.MemsetD8, {"cuMemsetD8_v2"}) &&
      Sym(lib, c.MemcpyDtoDAsync, {"cuMemcpyDtoDAsync_v2"}) &&
      Sym(lib, c.EventCreate, {"cuEventCreate"}) && Sym(lib, c.EventRecord, {"cuEventRecord"}) &&
      Sym(lib, c.EventSynchronize, {"cuEventSynchronize"}) &&
      Sym(lib, c.EventElapsedTime, {"cuEventElapsedTime"}) &&
      Sym(lib, c.EventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"});
  if (!ok) return MakeError("libcuda.so.1 lacks a driver API call the calibration needs");
  auto err = [&](const char* what, CUresult rc) {
    const char* s = nullptr;
    c.GetErrorString(rc, &s);
    return MakeError("{}: {} (CUDA error {})", what, s ? s : "?", rc);
  };
  if (CUresult rc = c.Init(0)) return err("cuInit", rc);
  int n = 0;
  if (CUresult rc = c.DeviceGetCount(&n)) return err("cuDeviceGetCount", rc);
  CUdevice dev = -1;
  for (int i = 0; i < n && dev < 0; ++i) {
    CUdevice d = 0;
    CUuuid u{};
    if (c.DeviceGet(&d, i) == 0 && c.DeviceGetUuid(&u, d) == 0 && UuidText(u) == uuid) dev = d;
  }
  if (dev < 0)
    return MakeError("no CUDA device has UUID {} (CUDA_VISIBLE_DEVICES hides it?)", uuid);
  CUcontext ctx = nullptr;
  if (CUresult rc = c.PrimaryCtxRetain(&ctx, dev)) return err("cuDevicePrimaryCtxRetain", rc);
  struct Release {
    Cuda& c;
    CUdevice d;
    ~Release() { c.PrimaryCtxRelease(d); }
  } release{c, dev};
  if (CUresult rc = c.CtxSetCurrent(ctx)) return err("cuCtxSetCurrent", rc);
  CUdeviceptr src = 0, dst = 0;
  if (CUresult rc = c.MemAlloc(&src, bytes)) return err("cuMemAlloc", rc);
  if (CUresult rc = c.MemAlloc(&dst, bytes)) {
    c.MemFree(src);
    return err("cuMemAlloc", rc);
  }
  CUevent e0 = nullptr, e1 = nullptr;
  c.EventCreate(&e0, 0);
  c.EventCreate(&e1, 0);
  std::vector<double> rates;
  CUresult rc = c.MemsetD8(src, 1, bytes);
  const int copies = 20;
  for (int w = 0; w < 3 && rc == 0; ++w) rc = c.MemcpyDtoDAsync(dst, src, bytes, nullptr);
  for (int r = 0; r < repeats && rc == 0; ++r) {
    rc = c.EventRecord(e0, nullptr);
    for (int k = 0; k < copies && rc == 0; ++k) rc = c.MemcpyDtoDAsync(dst, src, bytes, nullptr);
    if (rc == 0) rc = c.EventRecord(e1, nullptr);
    if (rc == 0) rc = c.EventSynchronize(e1);
    float ms = 0;
    if (rc == 0) rc = c.EventElapsedTime(&ms, e0, e1);
    if (rc == 0 && ms > 0) rates.push_back(2.0 * static_cast<double>(bytes) * copies / (ms / 1e3));
  }
  c.EventDestroy(e0);
  c.EventDestroy(e1);
  c.MemFree(src);
  c.MemFree(dst);
  if (rc != 0) return err("timing the device-to-device copies", rc);
  if (rates.empty()) return MakeError("no timed copy batch");
  const auto [lo, hi] = std::minmax_element(rates.begin(), rates.end());
  Ceiling ceil;
  ceil.kind = RateKind::kBytes;
  ceil.quantity = "copy_bandwidth";
  ceil.per_second = *hi;
  ceil.noise = (*hi - *lo) / *hi;
  ceil.measured = true;
  ceil.source = "vouch doctor --calibrate";
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  ceil.date = date;
  return ceil;
}

std::string CeilingsPath(const std::string& uuid) {
  std::string dir;
  if (const char* d = std::getenv("VOUCH_CEILINGS_DIR"); d && *d)
    dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    dir = std::string(x) + "/vouch";
  else if (const char* h = std::getenv("HOME"); h && *h)
    dir = std::string(h) + "/.cache/vouch";
  else
    dir = "/tmp/vouch-cache";
  return dir + "/ceilings-" + uuid + ".json";
}

Status WriteGpuCeilings(const GpuCeilings& g) {
  nlohmann::json j = {{"schema", "vouch.ceilings"},
                      {"schema_version", 1},
                      {"uuid", g.uuid},
                      {"name", g.name},
                      {"boot_id", g.boot_id},
                      {"measured_unix_s", g.measured_unix_s},
                      {"ceilings", nlohmann::json::array()}};
  for (const auto& c : g.ceilings) j["ceilings"].push_back(ToJson(c));
  const std::string path = CeilingsPath(g.uuid);
  if (auto s = MakeDirs(std::filesystem::path(path).parent_path().string()); !s) return s;
  return WriteFileAtomic(path, DumpJson(j, 2) + "\n");
}

Result<std::vector<Ceiling>> ReadGpuCeilings(const std::string& uuid, const std::string& boot_id) {
  const std::string path = CeilingsPath(uuid);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::vector<Ceiling>{};
  auto j = ReadJsonFile(path, 1 << 20);
  if (!j) return j.error();
  static const JsonSchema schema = JsonSchema::Object({
      Must("schema", JsonSchema::String()),
      Must("uuid", JsonSchema::String()),
      Must("boot_id", JsonSchema::String()),
      Must("ceilings", JsonSchema::Array(JsonSchema::Any())),
  });
  if (auto ok = schema.Check(*j, path); !ok) return ok.error();
  if ((*j)["schema"] != "vouch.ceilings")
    return MakeError("{}: not a vouch ceilings file (schema is not 'vouch.ceilings')", path);
  if ((*j)["uuid"] != uuid || (*j)["boot_id"] != boot_id) return std::vector<Ceiling>{};
  std::vector<Ceiling> out;
  for (std::size_t i = 0; i < (*j)["ceilings"].size(); ++i) {
    auto c = CeilingFromJson((*j)["ceilings"][i], fmt::format("{}: ceilings[{}]", path, i));
    if (!c) return c.error();
    out.push_back(*c);
  }
  return out;
}

}  // namespace vouch
