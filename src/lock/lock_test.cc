#include "lock/lock.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

namespace vouch {
namespace {

std::string LockPath(const char* name) {
  auto p = std::filesystem::temp_directory_path() /
           fmt::format("vouch_lock_test_{}_{}", name, ::getpid());
  std::filesystem::remove(p);
  return p.string();
}

TEST(Lock, FreeThenHeldThenFree) {
  auto path = LockPath("a");
  auto s0 = ReadLockState(path);
  ASSERT_TRUE(s0.ok());
  EXPECT_FALSE(s0->held);
  {
    auto l = MeasureLock::Acquire(path, "bench --x", 0);
    ASSERT_TRUE(l.ok()) << l.error().message;
    auto s = ReadLockState(path);
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(s->held);
    ASSERT_TRUE(s->holder);
    EXPECT_EQ(s->holder->pid, ::getpid());
    EXPECT_EQ(s->holder->command, "bench --x");
  }
  auto s1 = ReadLockState(path);
  ASSERT_TRUE(s1.ok());
  EXPECT_FALSE(s1->held);
}

TEST(Lock, SecondHolderTimesOutAndNamesTheFirst) {
  auto path = LockPath("b");
  auto first = MeasureLock::Acquire(path, "first-holder-cmd", 0);
  ASSERT_TRUE(first.ok());
  // flock is per open file description: a second open in this process conflicts too.
  auto second = MeasureLock::Acquire(path, "second", 0.3);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("first-holder-cmd"), std::string::npos)
      << second.error().message;
  EXPECT_NE(second.error().message.find(fmt::format("pid {}", ::getpid())), std::string::npos);
}

TEST(Lock, AWaiterIsToldOnceWhoHoldsItAndForHowLong) {
  auto path = LockPath("w");
  auto first = MeasureLock::Acquire(path, "first-holder-cmd", 0);
  ASSERT_TRUE(first.ok());
  int calls = 0;
  std::optional<LockHolder> seen;
  double waits = 0;
  auto second = MeasureLock::Acquire(path, "second", 0.35, nullptr,
                                     [&](const std::optional<LockHolder>& h, double timeout_s) {
                                       ++calls;
                                       seen = h;
                                       waits = timeout_s;
                                     });
  EXPECT_FALSE(second.ok());
  EXPECT_EQ(calls, 1);
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->pid, ::getpid());
  EXPECT_EQ(seen->command, "first-holder-cmd");
  EXPECT_DOUBLE_EQ(waits, 0.35);
  // Trying once (timeout 0) is not waiting: nothing to say.
  calls = 0;
  EXPECT_FALSE(MeasureLock::Acquire(path, "third", 0, nullptr,
                                    [&](const std::optional<LockHolder>&, double) { ++calls; })
                   .ok());
  EXPECT_EQ(calls, 0);
}

TEST(Lock, ChildrenDoNotInheritTheLock) {
  auto path = LockPath("c");
  pid_t child;
  {
    auto l = MeasureLock::Acquire(path, "parent", 0);
    ASSERT_TRUE(l.ok());
    child = ::fork();
    if (child == 0) {
      ::execl("/bin/sleep", "sleep", "2", static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  // The parent released it; the sleeping child must not hold it.
  // (1 s covers the moment between fork and exec; the child sleeps 2 s.)
  auto again = MeasureLock::Acquire(path, "next", 1.0);
  EXPECT_TRUE(again.ok());
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

TEST(Lock, UnwritableLockFileIsAClearError) {
  auto l = MeasureLock::Acquire("/nonexistent-dir/vouch.lock", "x", 0);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.error().message.find("/nonexistent-dir/vouch.lock"), std::string::npos);
}

}  // namespace
}  // namespace vouch
