#include "util/host.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

namespace vouch {
namespace {

TEST(Host, TheBootIdIsTheKernelsOwn) {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string raw;
  std::getline(in, raw);
  ASSERT_EQ(raw.size(), 36u) << raw;  // a UUID
  EXPECT_EQ(ReadBootId(), raw);
  EXPECT_EQ(ReadHostInfo().boot_id, raw);
}

TEST(Host, EveryCallGivesTheSameHostAndCpu) {
  const HostInfo a = ReadHostInfo();
  const HostInfo b = ReadHostInfo();  // the CPU from the first call's read
  char name[256] = {};
  ASSERT_EQ(::gethostname(name, sizeof name - 1), 0);
  EXPECT_EQ(a.hostname, name);
  EXPECT_EQ(a.kernel.rfind("Linux ", 0), 0u) << a.kernel;
  EXPECT_EQ(a.cpu_count, static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_GT(a.cpu_count, 0);
  EXPECT_EQ(a.cpu, b.cpu);
  EXPECT_EQ(a.cpu_count, b.cpu_count);
  EXPECT_EQ(a.boot_id, b.boot_id);
  // The model is /proc/cpuinfo's first "model name" where it has one (x86; not every arm64).
  std::ifstream in("/proc/cpuinfo");
  std::string want;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      want = line.substr(line.find(':') + 1);
      want.erase(0, want.find_first_not_of(" \t"));
      break;
    }
  EXPECT_EQ(a.cpu, want);
}

}  // namespace
}  // namespace vouch
