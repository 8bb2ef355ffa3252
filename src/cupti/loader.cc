// Loading the CUPTI that matches the traced process (loader.h, select.h).
#include "loader.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <climits>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "select.h"

#ifndef VOUCH_CUPTI_BUILD_LIB
#define VOUCH_CUPTI_BUILD_LIB ""
#endif

namespace vouch_cupti {
namespace {

// The tracer reads these fields of the records of whichever CUPTI it loaded (loader.h): CUPTI
// 11.x to 13.0 emit Kernel6..Kernel10, Memcpy4..6, Memset3..4, Device4..5, Marker2, all with
// these fields at these offsets (checked against the 13.0 headers, where the older versions are
// in cupti_activity_deprecated.h).
#define VOUCH_SAME_OFFSET(A, B, f) static_assert(offsetof(A, f) == offsetof(B, f), #f)
#define VOUCH_KERNEL_FIELDS(V)                                 \
  VOUCH_SAME_OFFSET(CUpti_ActivityKernel10, V, start);         \
  VOUCH_SAME_OFFSET(CUpti_ActivityKernel10, V, end);           \
  VOUCH_SAME_OFFSET(CUpti_ActivityKernel10, V, deviceId);      \
  VOUCH_SAME_OFFSET(CUpti_ActivityKernel10, V, contextId);     \
  VOUCH_SAME_OFFSET(CUpti_ActivityKernel10, V, streamId);      \
  VOUCH_SAME_OFFSET(CUpti_ActivityKernel10, V, gridX);         \
  VOUCH_SAME_OFFSET(CUpti_ActivityKernel10, V, blockZ);        \
  VOUCH_SAME_OFFSET(CUpti_ActivityKernel10, V, correlationId); \
  VOUCH_SAME_OFFSET(CUpti_ActivityKernel10, V, name);          \
  VOUCH_SAME_OFFSET(CUpti_ActivityKernel10, V, graphId);       \
  VOUCH_SAME_OFFSET(CUpti_ActivityKernel10, V, graphNodeId)
VOUCH_KERNEL_FIELDS(CUpti_ActivityKernel6);
VOUCH_KERNEL_FIELDS(CUpti_ActivityKernel9);
VOUCH_SAME_OFFSET(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy4, bytes);
VOUCH_SAME_OFFSET(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy4, correlationId);
VOUCH_SAME_OFFSET(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy4, graphNodeId);
VOUCH_SAME_OFFSET(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy4, graphId);
VOUCH_SAME_OFFSET(CUpti_ActivityMemset4, CUpti_ActivityMemset3, graphId);
VOUCH_SAME_OFFSET(CUpti_ActivityMemset4, CUpti_ActivityMemset3, correlationId);
VOUCH_SAME_OFFSET(CUpti_ActivityDevice5, CUpti_ActivityDevice4, name);
VOUCH_SAME_OFFSET(CUpti_ActivityDevice5, CUpti_ActivityDevice4, computeCapabilityMinor);
#undef VOUCH_KERNEL_FIELDS
#undef VOUCH_SAME_OFFSET

std::string BaseName(const std::string& p) {
  auto s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

std::string DirName(const std::string& p) {
  auto s = p.rfind('/');
  return s == std::string::npos ? std::string(".") : p.substr(0, s);
}

bool Exists(const std::string& p) { return !p.empty() && access(p.c_str(), R_OK) == 0; }

std::string RealPath(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : p;
}

struct Loaded {
  std::vector<std::string> cupti, cudart;
};

int CollectLoaded(dl_phdr_info* info, size_t, void* data) {
  auto* l = static_cast<Loaded*>(data);
  if (!info->dlpi_name || !*info->dlpi_name) return 0;
  std::string name = info->dlpi_name, base = BaseName(name);
  if (base.rfind("libcupti.so", 0) == 0) l->cupti.push_back(name);
  if (base.rfind("libcudart.so.", 0) == 0) l->cudart.push_back(name);
  return 0;
}

int DriverVersion() {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!cuda) return 0;
  using Fn = int (*)(int*);  // CUresult cuDriverGetVersion(int*)
  auto fn = reinterpret_cast<Fn>(dlsym(cuda, "cuDriverGetVersion"));
  int v = 0;
  if (!fn || fn(&v) != 0) v = 0;
  dlclose(cuda);
  return v;
}

CuptiCandidate Candidate(const std::string& path, CuptiSource src, int major_hint) {
  CuptiCandidate c;
  c.path = path;
  c.source = src;
  c.major = CuptiMajorOfName(BaseName(path));
  int a = 0, b = 0;
  if (ToolkitVersionOfPath(RealPath(path), &a, &b) && (c.major == 0 || c.major == a)) {
    c.major = a;
    c.minor = b;
  }
  if (c.major == 0) c.major = major_hint;
  return c;
}

// The major of an already loaded CUPTI whose file name does not say: ask it.
int AskMajor(const std::string& path) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!h) return 0;
  auto fn = reinterpret_cast<decltype(&::cuptiGetVersion)>(dlsym(h, "cuptiGetVersion"));
  std::uint32_t v = 0;
  int major = fn && fn(&v) == CUPTI_SUCCESS ? CuptiMajorOfApiVersion(v) : 0;
  dlclose(h);
  return major;
}

void AddUnique(std::vector<CuptiCandidate>* cs, CuptiCandidate c) {
  if (!Exists(c.path)) return;
  const std::string real = RealPath(c.path);
  for (const auto& o : *cs)
    if (RealPath(o.path) == real) return;
  cs->push_back(std::move(c));
}

CuptiFacts GatherFacts() {
  CuptiFacts f;
  f.driver_version = DriverVersion();
  Loaded l;
  dl_iterate_phdr(CollectLoaded, &l);
  if (!l.cudart.empty()) {
    f.runtime_path = l.cudart.front();
    f.runtime_major = CuptiMajorOfName("libcupti.so." + BaseName(f.runtime_path).substr(13));
  }
  for (const auto& p : l.cupti) {
    CuptiCandidate c = Candidate(p, CuptiSource::kLoaded, 0);
    if (c.major == 0) c.major = AskMajor(p);
    f.candidates.push_back(c);
  }
  for (const auto& p : CuptiPathsBesideRuntime(f.runtime_path, f.runtime_major))
    AddUnique(&f.candidates, Candidate(p, CuptiSource::kRuntime, 0));
  std::vector<int> majors;
  if (f.runtime_major > 0) majors.push_back(f.runtime_major);
  for (int m : {13, 12})
    if (m != f.runtime_major) majors.push_back(m);
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* root = std::getenv(var);
    if (!root || !*root) continue;
    for (int m : majors) {
      const std::string so = "/libcupti.so." + std::to_string(m);
      AddUnique(&f.candidates, Candidate(std::string(root) + "/extras/CUPTI/lib64" + so,
                                         CuptiSource::kToolkit, 0));
      AddUnique(&f.candidates,
                Candidate(std::string(root) + "/lib64" + so, CuptiSource::kToolkit, 0));
    }
  }
  for (int m : majors) {
    const std::string so = "/libcupti.so." + std::to_string(m);
    AddUnique(&f.candidates,
              Candidate("/usr/local/cuda/extras/CUPTI/lib64" + so, CuptiSource::kToolkit, 0));
    AddUnique(&f.candidates, Candidate("/usr/local/cuda/lib64" + so, CuptiSource::kToolkit, 0));
  }
  // Beside this library (the wheel's copy), then the one it was built against.
  const int built_major = static_cast<int>(CUPTI_API_VERSION / 10000);
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&Api), &self) && self.dli_fname)
    AddUnique(&f.candidates,
              Candidate(DirName(self.dli_fname) + "/libcupti.so." + std::to_string(built_major),
                        CuptiSource::kBundled, built_major));
  AddUnique(&f.candidates, Candidate(VOUCH_CUPTI_BUILD_LIB, CuptiSource::kBundled, built_major));
  return f;
}

}  // namespace

CuptiApi& Api() {
  static CuptiApi api;
  return api;
}

bool LoadCupti(std::string* error) {
  CuptiApi& api = Api();
  std::string path, choice;
  if (const char* forced = std::getenv("VOUCH_CUPTI_PATH"); forced && *forced) {
    path = forced;
    choice = "VOUCH_CUPTI_PATH";
  } else {
    CuptiFacts f = GatherFacts();
    CuptiChoice c = ChooseCupti(f);
    if (c.index < 0) {
      *error = c.reason;
      return false;
    }
    path = f.candidates[static_cast<std::size_t>(c.index)].path;
    choice = c.reason;
  }
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    *error = "cannot load " + path + " (" + choice + "): " + (e ? e : "?");
    return false;
  }
#define VOUCH_CUPTI_RESOLVE(fn) api.fn = reinterpret_cast<decltype(&::fn)>(dlsym(h, #fn));
  VOUCH_CUPTI_REQUIRED(VOUCH_CUPTI_RESOLVE)
  VOUCH_CUPTI_OPTIONAL(VOUCH_CUPTI_RESOLVE)
#undef VOUCH_CUPTI_RESOLVE
#define VOUCH_CUPTI_CHECK(fn)                                              \
  if (!api.fn) {                                                           \
    *error = path + " (" + choice + ") lacks " #fn ": not a usable CUPTI"; \
    return false;                                                          \
  }
  VOUCH_CUPTI_REQUIRED(VOUCH_CUPTI_CHECK)
#undef VOUCH_CUPTI_CHECK
  api.handle = h;
  api.path = RealPath(path);
  api.choice = choice;
  api.cuptiGetVersion(&api.version);
  api.major = CuptiMajorOfApiVersion(api.version);
  return true;
}

}  // namespace vouch_cupti
