// Which libcupti the tracer loads (docs/gpu-trace.md, "Which CUPTI"). The tracer does not link
// libcupti: a process on a CUDA 12 driver with PyTorch's cu12x wheels (nvidia-cuda-cupti-cu12)
// cannot use the CUPTI 13 that vouch bundles, and a process that already loaded a CUPTI must not
// get a second one. Pure: the facts in (driver and runtime versions, the candidates with their
// versions), a choice and its reason out; tracer.cc gathers the facts and vouch_tests tests the
// rule (select_test.cc). No CUPTI here.
#pragma once

#include <string>
#include <vector>

namespace vouch_cupti {

enum class CuptiSource {
  kLoaded,   // already in the process (PyTorch's Kineto loaded it): the only safe choice
  kRuntime,  // beside the process's libcudart: the same toolkit or the same site-packages
  kToolkit,  // CUDA_HOME / CUDA_PATH / /usr/local/cuda
  kBundled,  // beside libvouch_cupti.so (the wheel's, the CUPTI vouch was built against)
};
const char* ToString(CuptiSource s);

struct CuptiCandidate {
  std::string path;
  int major = 0;   // from the file name (libcupti.so.12) or its folder; 0 unknown
  int minor = -1;  // from the toolkit folder (cuda-12.4) where it says; -1 unknown
  CuptiSource source = CuptiSource::kBundled;
};

struct CuptiFacts {
  int driver_version = 0;    // cuDriverGetVersion: 12040 is CUDA 12.4; 0 unknown
  int runtime_major = 0;     // the loaded libcudart.so.N; 0 when the process has none loaded
  std::string runtime_path;  // its path, for the reason
  std::vector<CuptiCandidate> candidates;  // in the order found
};

struct CuptiChoice {
  int index = -1;      // into candidates; -1: none fits (the tracer then does not trace)
  std::string reason;  // one sentence: why this one, or why none
};

// A CUPTI runs on a driver that supports its CUDA version: major.minor <= the driver's (minor
// unknown: the major alone). The rule, in order:
//   1. a CUPTI the process already loaded, when it fits (two CUPTIs in one process corrupt each
//      other); one that does not fit: none (the reason says so);
//   2. the one beside the process's libcudart of the runtime's major (the toolkit's, or
//      site-packages/nvidia/cuda_cupti for PyTorch's wheels), when it fits;
//   3. a toolkit's of the runtime's major, when it fits;
//   4. any other that fits, the newest major first, the bundled one last among equals.
CuptiChoice ChooseCupti(const CuptiFacts& facts);

// The CUPTI major a file name carries ("libcupti.so.12" -> 12, "libcupti.so.13.0.48" -> 13);
// 0 when it does not carry one. CUPTI's own year-numbered files (libcupti.so.2025.1.0) give 0.
int CuptiMajorOfName(const std::string& file_name);
// The CUDA major of a CUPTI from its cuptiGetVersion: 130001 -> 13 (CUPTI 13 numbers its API
// major*10000 + n); 18..99 -> 12 (CUDA 12.0 was API 18); 13..17 -> 11; else 0.
int CuptiMajorOfApiVersion(unsigned api_version);
// The toolkit version a path carries ("/usr/local/cuda-12.4/..." -> 12, 4); false when none.
bool ToolkitVersionOfPath(const std::string& path, int* major, int* minor);
// The candidate paths beside a libcudart at RUNTIME_PATH with runtime major MAJOR, in the order
// to try: site-packages/nvidia/cuda_runtime/lib -> nvidia/cuda_cupti/lib, nvidia/cu13/lib
// (CUDA 13 wheels keep both in one folder), a toolkit's lib64 and extras/CUPTI/lib64.
std::vector<std::string> CuptiPathsBesideRuntime(const std::string& runtime_path, int major);

}  // namespace vouch_cupti
