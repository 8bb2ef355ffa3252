#include "select.h"

#include <cstdio>

namespace vouch_cupti {
namespace {

std::string Version(int major, int minor) {
  if (major <= 0) return "of unknown version";
  return minor >= 0 ? std::to_string(major) + "." + std::to_string(minor)
                    : std::to_string(major) + ".x";
}

std::string DriverText(int v) {
  if (v <= 0) return "an unknown driver CUDA version";
  return "a driver for CUDA " + std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// A CUPTI needs a driver that supports its CUDA version. Unknown driver: only a CUPTI whose
// version is known cannot be judged, so it is taken (the tracer's own init then says).
bool Fits(const CuptiCandidate& c, int driver) {
  if (c.major <= 0) return false;
  if (driver <= 0) return true;
  const int dmaj = driver / 1000, dmin = driver % 1000 / 10;
  if (c.major != dmaj) return c.major < dmaj;
  return c.minor < 0 || c.minor <= dmin;
}

std::string Describe(const CuptiCandidate& c) {
  return std::string("CUPTI ") + Version(c.major, c.minor) + " at " + c.path + " (" +
         ToString(c.source) + ")";
}

bool IsDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (ch < '0' || ch > '9') return false;
  return true;
}

}  // namespace

const char* ToString(CuptiSource s) {
  switch (s) {
    case CuptiSource::kLoaded:
      return "already loaded in the process";
    case CuptiSource::kRuntime:
      return "beside the process's libcudart";
    case CuptiSource::kToolkit:
      return "the CUDA toolkit's";
    case CuptiSource::kBundled:
      return "bundled with vouch";
  }
  return "?";
}

CuptiChoice ChooseCupti(const CuptiFacts& f) {
  CuptiChoice out;
  const auto& cs = f.candidates;
  const std::string driver = DriverText(f.driver_version);
  for (std::size_t i = 0; i < cs.size(); ++i) {
    if (cs[i].source != CuptiSource::kLoaded) continue;
    if (Fits(cs[i], f.driver_version)) {
      out.index = static_cast<int>(i);
      out.reason = Describe(cs[i]) + ": the process's own CUPTI, on " + driver;
    } else {
      out.reason = "the process already loaded " + Describe(cs[i]) + ", which " + driver +
                   " does not run (or whose version is unknown); a second CUPTI in one process "
                   "is not loaded: not tracing";
    }
    return out;
  }
  auto pick = [&](CuptiSource src, bool runtime_major_only) -> int {
    for (std::size_t i = 0; i < cs.size(); ++i)
      if (cs[i].source == src && (!runtime_major_only || cs[i].major == f.runtime_major) &&
          Fits(cs[i], f.driver_version))
        return static_cast<int>(i);
    return -1;
  };
  const std::string runtime = f.runtime_major > 0
                                  ? "the process's CUDA " + std::to_string(f.runtime_major) +
                                        " runtime (" + f.runtime_path + ")"
                                  : std::string("no CUDA runtime loaded");
  if (f.runtime_major > 0) {
    for (CuptiSource src : {CuptiSource::kRuntime, CuptiSource::kToolkit, CuptiSource::kBundled})
      if (int i = pick(src, true); i >= 0) {
        out.index = i;
        out.reason =
            Describe(cs[static_cast<std::size_t>(i)]) + ": matches " + runtime + ", on " + driver;
        return out;
      }
  }
  // Any other that fits: the newest major, a toolkit's or the runtime's before the bundled one.
  int best = -1;
  for (std::size_t i = 0; i < cs.size(); ++i) {
    if (!Fits(cs[i], f.driver_version)) continue;
    if (best < 0) {
      best = static_cast<int>(i);
      continue;
    }
    const auto& b = cs[static_cast<std::size_t>(best)];
    if (cs[i].major > b.major || (cs[i].major == b.major && b.source == CuptiSource::kBundled &&
                                  cs[i].source != CuptiSource::kBundled))
      best = static_cast<int>(i);
  }
  if (best >= 0) {
    out.index = best;
    out.reason = Describe(cs[static_cast<std::size_t>(best)]) + ": fits " + driver +
                 (f.runtime_major > 0 ? "; none of CUDA " + std::to_string(f.runtime_major) +
                                            " was found for " + runtime
                                      : "; " + runtime);
    return out;
  }
  out.reason = "no CUPTI found fits " + driver + " (";
  if (cs.empty()) out.reason += "none found";
  for (std::size_t i = 0; i < cs.size(); ++i) out.reason += (i ? "; " : "") + Describe(cs[i]);
  out.reason +=
      "): not tracing; install the CUPTI of your CUDA (pip install nvidia-cuda-cupti-cu12, or "
      "the toolkit's) or set VOUCH_CUPTI_PATH";
  return out;
}

int CuptiMajorOfName(const std::string& name) {
  const std::string stem = "libcupti.so.";
  if (name.compare(0, stem.size(), stem) != 0) return 0;
  std::string rest = name.substr(stem.size());
  std::string first = rest.substr(0, rest.find('.'));
  if (!IsDigits(first) || first.size() > 3) return 0;  // 2025.1.0: CUPTI's own numbering
  return std::stoi(first);
}

int CuptiMajorOfApiVersion(unsigned v) {
  if (v >= 100000) return static_cast<int>(v / 10000);
  if (v >= 18 && v < 100) return 12;
  if (v >= 13 && v < 18) return 11;
  return 0;
}

bool ToolkitVersionOfPath(const std::string& path, int* major, int* minor) {
  for (std::size_t at = path.find("cuda-"); at != std::string::npos;
       at = path.find("cuda-", at + 1)) {
    int a = 0, b = 0, n = 0;
    if (std::sscanf(path.c_str() + at, "cuda-%d.%d%n", &a, &b, &n) == 2 && a > 0 && a < 100) {
      const char end = path[at + static_cast<std::size_t>(n)];
      if (end == '/' || end == '\0') {
        *major = a;
        *minor = b;
        return true;
      }
    }
  }
  return false;
}

std::vector<std::string> CuptiPathsBesideRuntime(const std::string& runtime_path, int major) {
  std::vector<std::string> out;
  const auto slash = runtime_path.rfind('/');
  if (slash == std::string::npos || major <= 0) return out;
  const std::string dir = runtime_path.substr(0, slash);
  const std::string so = "/libcupti.so." + std::to_string(major);
  // site-packages/nvidia/cuda_runtime/lib (cu12 wheels): CUPTI is nvidia/cuda_cupti/lib.
  const std::string wheel = "/nvidia/cuda_runtime/lib";
  const bool in_wheel = dir.size() >= wheel.size() &&
                        dir.compare(dir.size() - wheel.size(), wheel.size(), wheel) == 0;
  if (in_wheel)
    out.push_back(dir.substr(0, dir.size() - wheel.size()) + "/nvidia/cuda_cupti/lib" + so);
  // The same folder: CUDA 13 wheels (nvidia/cu13/lib) and toolkits that keep it in lib64.
  out.push_back(dir + so);
  if (in_wheel) return out;
  // A toolkit: <root>/lib64 or <root>/targets/<arch>/lib -> <root>/extras/CUPTI/lib64.
  for (const char* tail : {"/lib64", "/lib"}) {
    const std::string t = tail;
    if (dir.size() > t.size() && dir.compare(dir.size() - t.size(), t.size(), t) == 0) {
      std::string root = dir.substr(0, dir.size() - t.size());
      const auto targets = root.rfind("/targets/");
      if (targets != std::string::npos) root = root.substr(0, targets);
      out.push_back(root + "/extras/CUPTI/lib64" + so);
      break;
    }
  }
  return out;
}

}  // namespace vouch_cupti
