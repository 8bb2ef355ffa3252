#include "telemetry/gpu_select.h"

#include <gtest/gtest.h>

namespace vouch {
namespace {

// Four GPUs with H200-style UUIDs; GPUs 1 and 2 share a UUID prefix.
std::vector<StaticState> Gpus(int n = 4, bool mixed = false) {
  const char* uuids[] = {
      "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", "GPU-a1b2c3d4-0000-4106-c12f-20bd9faed9f6",
      "GPU-a1b2ffff-0000-4106-c12f-20bd9faed9f6", "GPU-77777777-0000-4106-c12f-20bd9faed9f6"};
  std::vector<StaticState> out;
  for (int i = 0; i < n; ++i) {
    StaticState s;
    s.index = i;
    s.name = mixed && i == n - 1 ? "NVIDIA H100" : "NVIDIA H200";
    s.uuid = uuids[i];
    out.push_back(s);
  }
  return out;
}

std::vector<int> Resolve(const std::string& v, std::vector<std::string>* notes = nullptr,
                         int n = 4) {
  auto r = ResolveCudaVisibleDevices(v, Gpus(n), std::nullopt, notes);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r ? *r : std::vector<int>{};
}

TEST(CudaVisibleDevices, IndicesInTheOrderGiven) {
  EXPECT_EQ(Resolve("1"), (std::vector<int>{1}));
  EXPECT_EQ(Resolve("2,1"), (std::vector<int>{2, 1}));
  EXPECT_EQ(Resolve(" 0 , 3 "), (std::vector<int>{0, 3}));
}

TEST(CudaVisibleDevices, AnInvalidEntryEndsTheListAsInCuda) {
  // CUDA's own example: 0,2,-1,1 makes devices 0 and 2 visible and device 1 invisible.
  std::vector<std::string> notes;
  EXPECT_EQ(Resolve("0,2,-1,1", &notes), (std::vector<int>{0, 2}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("entry '-1' is not a GPU here (GPUs 0..3)"), std::string::npos)
      << notes[0];
  EXPECT_NE(notes[0].find("sees GPU(s) 0,2 only"), std::string::npos) << notes[0];
  notes.clear();
  EXPECT_EQ(Resolve("1,7,0", &notes), (std::vector<int>{1}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("entry '7'"), std::string::npos);
  notes.clear();
  EXPECT_EQ(Resolve("1,1,0", &notes), (std::vector<int>{1}));
  EXPECT_NE(notes.at(0).find("repeats GPU 1"), std::string::npos);
  notes.clear();
  EXPECT_EQ(Resolve("3,nvidia0", &notes), (std::vector<int>{3}));
  EXPECT_NE(notes.at(0).find("neither a GPU index nor a GPU UUID"), std::string::npos);
}

TEST(CudaVisibleDevices, UuidsAndUniquePrefixes) {
  EXPECT_EQ(Resolve("GPU-77777777-0000-4106-c12f-20bd9faed9f6"), (std::vector<int>{3}));
  EXPECT_EQ(Resolve("GPU-8932f937,GPU-a1b2c"), (std::vector<int>{0, 1}));
  EXPECT_EQ(Resolve("gpu-8932F937"), (std::vector<int>{0}));  // case does not matter
  std::vector<std::string> notes;
  EXPECT_EQ(Resolve("GPU-8932,GPU-a1b2", &notes), (std::vector<int>{0}));
  EXPECT_NE(notes.at(0).find("matches the UUIDs of GPUs 1,2"), std::string::npos) << notes[0];
}

TEST(CudaVisibleDevices, NoGpuLeftIsAnErrorThatSaysWhy) {
  auto gpus = Gpus(2);
  auto e = ResolveCudaVisibleDevices("", gpus, std::nullopt, nullptr);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("set but empty"), std::string::npos);
  e = ResolveCudaVisibleDevices("2", gpus, std::nullopt, nullptr);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("CUDA_VISIBLE_DEVICES='2' leaves the command no GPU: entry "
                                   "'2' is not a GPU here (GPUs 0..1)"),
            std::string::npos)
      << e.error().message;
  e = ResolveCudaVisibleDevices("-1", gpus, std::nullopt, nullptr);
  ASSERT_FALSE(e.ok());
  e = ResolveCudaVisibleDevices("GPU-ffff", gpus, std::nullopt, nullptr);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("matches no GPU's UUID here"), std::string::npos);
  e = ResolveCudaVisibleDevices("99999999999999999999", gpus, std::nullopt, nullptr);
  ASSERT_FALSE(e.ok());
  e = ResolveCudaVisibleDevices("MIG-8932f937-d72c", gpus, std::nullopt, nullptr);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("MIG instance"), std::string::npos);
}

TEST(CudaVisibleDevices, WarnsWhenIndexOrderMayDifferFromNvml) {
  std::vector<std::string> notes;
  auto mixed = Gpus(4, true);
  ASSERT_TRUE(ResolveCudaVisibleDevices("0", mixed, std::nullopt, &notes).ok());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("CUDA_DEVICE_ORDER=PCI_BUS_ID"), std::string::npos);
  notes.clear();
  ASSERT_TRUE(ResolveCudaVisibleDevices("0", mixed, std::string("PCI_BUS_ID"), &notes).ok());
  EXPECT_TRUE(notes.empty());
  // By UUID the order does not matter; alike GPUs are numbered the same either way.
  ASSERT_TRUE(ResolveCudaVisibleDevices("GPU-8932", mixed, std::nullopt, &notes).ok());
  ASSERT_TRUE(ResolveCudaVisibleDevices("0", Gpus(4), std::nullopt, &notes).ok());
  EXPECT_TRUE(notes.empty());
}

TEST(SelectGpus, NothingNamedSamplesEveryGpuUnnamed) {
  auto s = SelectGpus({}, std::nullopt, std::nullopt, Gpus(2));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->gpus, (std::vector<int>{0, 1}));
  EXPECT_FALSE(s->named);
  EXPECT_EQ(s->source, "all GPUs (none named)");
  EXPECT_FALSE(SelectGpus({}, std::nullopt, std::nullopt, {}).ok());
}

TEST(SelectGpus, CudaVisibleDevicesNamesTheGpusSorted) {
  auto s = SelectGpus({}, std::string("3,1"), std::nullopt, Gpus(4));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->gpus, (std::vector<int>{1, 3}));
  EXPECT_TRUE(s->named);
  EXPECT_EQ(s->source, "CUDA_VISIBLE_DEVICES=3,1");
  auto bad = SelectGpus({}, std::string("5"), std::nullopt, Gpus(4));
  ASSERT_FALSE(bad.ok());
}

TEST(SelectGpus, GpuFlagWinsAndAMismatchIsNoted) {
  auto s = SelectGpus({1, 0, 1}, std::nullopt, std::nullopt, Gpus(2));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(s->source, "--gpu 0,1");
  EXPECT_TRUE(s->notes.empty());
  s = SelectGpus({0}, std::string("1"), std::nullopt, Gpus(2));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->gpus, (std::vector<int>{0}));
  ASSERT_EQ(s->notes.size(), 1u);
  EXPECT_NE(s->notes[0].find("lets the command use GPU(s) 1"), std::string::npos) << s->notes[0];
  s = SelectGpus({0}, std::string("0"), std::nullopt, Gpus(2));
  EXPECT_TRUE(s->notes.empty());
  s = SelectGpus({0}, std::string(""), std::nullopt, Gpus(2));
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->notes.at(0).find("set but empty"), std::string::npos);
  auto bad = SelectGpus({2}, std::nullopt, std::nullopt, Gpus(2));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "--gpu 2: the device has 2 GPU(s), numbered 0..1");
}

}  // namespace
}  // namespace vouch
