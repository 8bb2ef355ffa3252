#include "cupti/select.h"

#include <gtest/gtest.h>

namespace vouch_cupti {
namespace {

const char* kWheel12 = "/venv/lib/python3.12/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12";
const char* kWheelRt12 =
    "/venv/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12";
const char* kBundled13 = "/venv/lib/python3.12/site-packages/vouch/lib/libcupti.so.13";

CuptiCandidate C(const char* path, int major, int minor, CuptiSource src) {
  return CuptiCandidate{path, major, minor, src};
}

TEST(ChooseCupti, PyTorchCu12OnACuda12DriverGetsTheWheelsCupti) {
  CuptiFacts f;
  f.driver_version = 12040;
  f.runtime_major = 12;
  f.runtime_path = kWheelRt12;
  f.candidates = {C(kWheel12, 12, -1, CuptiSource::kRuntime),
                  C(kBundled13, 13, 0, CuptiSource::kBundled)};
  CuptiChoice c = ChooseCupti(f);
  EXPECT_EQ(c.index, 0);
  EXPECT_EQ(c.reason, std::string("CUPTI 12.x at ") + kWheel12 +
                          " (beside the process's libcudart): matches the process's CUDA 12 "
                          "runtime (" +
                          kWheelRt12 + "), on a driver for CUDA 12.4");
}

TEST(ChooseCupti, TheBundledOneOnlyWhereItFitsTheDriver) {
  CuptiFacts f;
  f.driver_version = 12080;
  f.candidates = {C(kBundled13, 13, 0, CuptiSource::kBundled)};
  CuptiChoice c = ChooseCupti(f);
  EXPECT_EQ(c.index, -1);
  EXPECT_EQ(c.reason.rfind("no CUPTI found fits a driver for CUDA 12.8 (CUPTI 13.0 at ", 0), 0u)
      << c.reason;
  EXPECT_NE(c.reason.find("not tracing; install the CUPTI of your CUDA"), std::string::npos);
  f.driver_version = 13000;
  c = ChooseCupti(f);
  EXPECT_EQ(c.index, 0);
  EXPECT_NE(c.reason.find("fits a driver for CUDA 13.0; no CUDA runtime loaded"), std::string::npos)
      << c.reason;
  // A 13.1 toolkit's CUPTI on a 13.0 driver does not fit; the bundled 13.0 does.
  f.candidates.insert(
      f.candidates.begin(),
      C("/usr/local/cuda-13.1/extras/CUPTI/lib64/libcupti.so.13", 13, 1, CuptiSource::kToolkit));
  c = ChooseCupti(f);
  EXPECT_EQ(c.index, 1);
}

TEST(ChooseCupti, ACuptiTheProcessLoadedWinsOrNothing) {
  CuptiFacts f;
  f.driver_version = 13000;
  f.runtime_major = 13;
  f.runtime_path = "/usr/local/cuda-13.0/lib64/libcudart.so.13";
  f.candidates = {C("/usr/local/cuda-13.0/lib64/libcupti.so.13", 13, 0, CuptiSource::kRuntime),
                  C(kWheel12, 12, -1, CuptiSource::kLoaded)};
  CuptiChoice c = ChooseCupti(f);
  EXPECT_EQ(c.index, 1);
  EXPECT_NE(c.reason.find("the process's own CUPTI, on a driver for CUDA 13.0"), std::string::npos);
  f.driver_version = 11080;  // the loaded 12 does not run there: never a second CUPTI
  c = ChooseCupti(f);
  EXPECT_EQ(c.index, -1);
  EXPECT_NE(c.reason.find("a second CUPTI in one process is not loaded: not tracing"),
            std::string::npos)
      << c.reason;
}

TEST(ChooseCupti, TheRuntimesMajorBeforeANewerOne) {
  CuptiFacts f;
  f.driver_version = 13000;  // a CUDA 13 driver runs a cu12 PyTorch: its CUPTI 12, not 13
  f.runtime_major = 12;
  f.runtime_path = kWheelRt12;
  f.candidates = {
      C(kBundled13, 13, 0, CuptiSource::kBundled),
      C("/usr/local/cuda-13.0/extras/CUPTI/lib64/libcupti.so.13", 13, 0, CuptiSource::kToolkit),
      C(kWheel12, 12, -1, CuptiSource::kRuntime)};
  EXPECT_EQ(ChooseCupti(f).index, 2);
  // No CUPTI 12 at all: the newest that fits, a toolkit's before the bundled one.
  f.candidates.pop_back();
  CuptiChoice c = ChooseCupti(f);
  EXPECT_EQ(c.index, 1);
  EXPECT_NE(c.reason.find("none of CUDA 12 was found for the process's CUDA 12 runtime"),
            std::string::npos)
      << c.reason;
  // An unknown version is never guessed at.
  f.candidates = {C("/opt/x/libcupti.so", 0, -1, CuptiSource::kToolkit)};
  EXPECT_EQ(ChooseCupti(f).index, -1);
  f.candidates.clear();
  EXPECT_NE(ChooseCupti(f).reason.find("(none found)"), std::string::npos);
}

TEST(ChooseCupti, NamesAndPaths) {
  EXPECT_EQ(CuptiMajorOfName("libcupti.so.12"), 12);
  EXPECT_EQ(CuptiMajorOfName("libcupti.so.13.0.48"), 13);
  EXPECT_EQ(CuptiMajorOfName("libcupti.so.2025.1.0"), 0);
  EXPECT_EQ(CuptiMajorOfName("libcupti.so"), 0);
  EXPECT_EQ(CuptiMajorOfName("libcudart.so.12"), 0);
  EXPECT_EQ(CuptiMajorOfApiVersion(130001), 13);
  EXPECT_EQ(CuptiMajorOfApiVersion(24), 12);
  EXPECT_EQ(CuptiMajorOfApiVersion(17), 11);
  EXPECT_EQ(CuptiMajorOfApiVersion(3), 0);
  int a = 0, b = 0;
  EXPECT_TRUE(
      ToolkitVersionOfPath("/usr/local/cuda-12.4/extras/CUPTI/lib64/libcupti.so.12", &a, &b));
  EXPECT_EQ(a, 12);
  EXPECT_EQ(b, 4);
  EXPECT_FALSE(ToolkitVersionOfPath("/usr/local/cuda/lib64/libcupti.so.12", &a, &b));
  EXPECT_FALSE(ToolkitVersionOfPath("/opt/cuda-12.4x/lib", &a, &b));
  EXPECT_EQ(
      CuptiPathsBesideRuntime(kWheelRt12, 12),
      (std::vector<std::string>{
          kWheel12, "/venv/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/libcupti.so.12"}));
  EXPECT_EQ(
      CuptiPathsBesideRuntime("/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12", 12),
      (std::vector<std::string>{"/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcupti.so.12",
                                "/usr/local/cuda-12.4/extras/CUPTI/lib64/libcupti.so.12"}));
  EXPECT_TRUE(CuptiPathsBesideRuntime("libcudart.so.12", 12).empty());
}

}  // namespace
}  // namespace vouch_cupti
