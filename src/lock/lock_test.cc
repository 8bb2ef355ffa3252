#include "lock/lock.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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

// A scratch folder of our own (mode 0755) for the file-type tests.
std::string OwnDir(const char* name) {
  auto d = std::filesystem::temp_directory_path() /
           fmt::format("vouch_lock_dir_{}_{}", name, ::getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  std::filesystem::permissions(d, std::filesystem::perms(0755));
  return d.string();
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

TEST(Lock, ASymlinkIsNeverFollowedAndItsTargetIsUntouched) {
  const std::string d = OwnDir("link");
  std::ofstream(d + "/victim") << "precious\n";
  std::filesystem::create_symlink(d + "/victim", d + "/vouch.lock");
  auto l = MeasureLock::Acquire(d + "/vouch.lock", "x", 0);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.error().message.find("is a symbolic link"), std::string::npos) << l.error().message;
  EXPECT_EQ(Slurp(d + "/victim"), "precious\n");
  EXPECT_FALSE(ReadLockState(d + "/vouch.lock").ok());
}

TEST(Lock, AFifoAHardLinkAndAFolderAreRefusedWithoutWaiting) {
  const std::string d = OwnDir("kinds");
  ASSERT_EQ(::mkfifo((d + "/fifo.lock").c_str(), 0600), 0);
  auto f = MeasureLock::Acquire(d + "/fifo.lock", "x", 0);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message.find("not a regular file"), std::string::npos) << f.error().message;
  std::ofstream(d + "/victim") << "precious\n";
  std::filesystem::create_hard_link(d + "/victim", d + "/hard.lock");
  auto h = MeasureLock::Acquire(d + "/hard.lock", "x", 0);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.error().message.find("2 hard links"), std::string::npos) << h.error().message;
  EXPECT_EQ(Slurp(d + "/victim"), "precious\n");
  std::filesystem::create_directories(d + "/dir.lock");
  EXPECT_FALSE(MeasureLock::Acquire(d + "/dir.lock", "x", 0).ok());
}

TEST(Lock, AFolderOthersCanWriteMustBeSticky) {
  const std::string d = OwnDir("open");
  std::filesystem::permissions(d, std::filesystem::perms(0777));
  auto l = MeasureLock::Acquire(d + "/vouch.lock", "x", 0);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.error().message.find("writable by others and not sticky"), std::string::npos)
      << l.error().message;
  std::filesystem::permissions(d, std::filesystem::perms(01777));
  auto ok = MeasureLock::Acquire(d + "/vouch.lock", "x", 0);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  // Created for every user of the GPU to take, whatever the umask.
  struct stat st {};
  ASSERT_EQ(::stat((d + "/vouch.lock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
}

TEST(Lock, AFileOfAnotherUserIsRefusedOutsideASharedStickyFolder) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  const std::string d = OwnDir("owner");
  std::ofstream(d + "/vouch.lock") << "";
  ASSERT_EQ(::chown((d + "/vouch.lock").c_str(), 4242, 4242), 0);
  auto l = MeasureLock::Acquire(d + "/vouch.lock", "x", 0);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.error().message.find("belongs to uid 4242"), std::string::npos) << l.error().message;
  // In a sticky folder nobody else can replace it: a peer's lock file is the shared lock.
  std::filesystem::permissions(d, std::filesystem::perms(01777));
  EXPECT_TRUE(MeasureLock::Acquire(d + "/vouch.lock", "x", 0).ok());
  // A folder another user owns could have its files swapped: refused.
  ASSERT_EQ(::chown(d.c_str(), 4242, 4242), 0);
  auto o = MeasureLock::Acquire(d + "/vouch.lock", "x", 0);
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.error().message.find("its folder"), std::string::npos) << o.error().message;
}

TEST(Lock, TheDefaultLivesInASharedStickyFolder) {
  const std::string p = DefaultLockPath();
  EXPECT_TRUE(p == "/run/lock/vouch/vouch.lock" || p == "/tmp/vouch/vouch.lock") << p;
}

}  // namespace
}  // namespace vouch
