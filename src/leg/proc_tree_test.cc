#include "leg/proc_tree.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

namespace vouch::leg_detail {

TEST(ProcStat, ParsesCommWithSpacesAndParentheses) {
  const std::string text =
      "4242 (my (odd) name) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
      "987654 12345678 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
  ProcStat s;
  ASSERT_TRUE(ParseProcStat(text, &s));
  EXPECT_EQ(s.pid, 4242);
  EXPECT_EQ(s.comm, "my (odd) name");
  EXPECT_EQ(s.state, 'S');
  EXPECT_EQ(s.ppid, 17);
  EXPECT_EQ(s.pgrp, 4242);
  EXPECT_EQ(s.start_ticks, 987654u);
  EXPECT_EQ(s.rss_pages, 2560u);
}

TEST(ProcStat, RefusesTruncatedAndGarbage) {
  ProcStat s;
  EXPECT_FALSE(ParseProcStat("", &s));
  EXPECT_FALSE(ParseProcStat("12 (x) S 1 2", &s));
  EXPECT_FALSE(ParseProcStat("no parentheses at all", &s));
  EXPECT_FALSE(ParseProcStat(")( S 1 2 3", &s));
}

TEST(ProcStat, ReadsOurselves) {
  ProcStat s;
  ASSERT_TRUE(ReadProcStat(::getpid(), &s));
  EXPECT_EQ(s.pid, ::getpid());
  EXPECT_EQ(s.ppid, ::getppid());
  EXPECT_GT(s.rss_pages, 0u);
  EXPECT_FALSE(ReadProcStat(-5, &s));
}

namespace {

void* Sleep(void*) {
  ::pause();
  return nullptr;
}

// Forks a leg in its own group that starts a thread and a grandchild, then exits (the
// grandchild, orphaned, is re-parented to this process, the subreaper); the pipe returns
// the grandchild's pid once both are running.
int StartLeg(int* grandchild) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const pid_t leg = ::fork();
  if (leg == 0) {
    ::setpgid(0, 0);
    pthread_t t;
    ::pthread_create(&t, nullptr, Sleep, nullptr);
    const pid_t g = ::fork();
    if (g == 0) {
      ::setsid();  // leaves the group: only the re-parenting ties it to the leg
      ::pause();
      ::_exit(0);
    }
    (void)!::write(fds[1], &g, sizeof g);
    ::pause();
    ::_exit(0);
  }
  ::close(fds[1]);
  if (::read(fds[0], grandchild, sizeof *grandchild) != sizeof *grandchild) *grandchild = -1;
  ::close(fds[0]);
  return leg;
}

}  // namespace

TEST(ProcTree, TheWalkAndTheFullScanFindTheSameProcessesAndNoThread) {
  int was = 0;
  ::prctl(PR_GET_CHILD_SUBREAPER, &was, 0, 0, 0);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  int grandchild = -1;
  const int leg = StartLeg(&grandchild);
  ASSERT_GT(leg, 0);
  ASSERT_GT(grandchild, 0);
  ProcTree full(leg, ""), walk(leg, "");
  EXPECT_TRUE(walk.can_walk_tree());  // Linux with CONFIG_PROC_CHILDREN (Debian's kernels)
  const std::vector<int> both{std::min(leg, grandchild), std::max(leg, grandchild)};
  full.Scan(ScanScope::kFull);  // the leg's second thread is not a process of it
  EXPECT_EQ(full.live_pids(), both);
  walk.Scan(ScanScope::kTree);
  EXPECT_EQ(walk.live_pids(), both);
  // The leg's main process ends: its child, in another session, is re-parented to us.
  ::kill(leg, SIGKILL);
  ::waitpid(leg, nullptr, 0);
  for (ProcTree* tree : {&full, &walk}) {
    for (ScanScope scope : {ScanScope::kTree, ScanScope::kFull}) {
      tree->Scan(scope);
      EXPECT_EQ(tree->live_pids(), std::vector<int>{grandchild}) << static_cast<int>(scope);
    }
  }
  ::kill(grandchild, SIGKILL);
  ::waitpid(grandchild, nullptr, 0);
  walk.Scan(ScanScope::kTree);
  EXPECT_TRUE(walk.live_pids().empty());
  EXPECT_EQ(walk.SeenPids(), both);
  ::prctl(PR_SET_CHILD_SUBREAPER, was, 0, 0, 0);
}

}  // namespace vouch::leg_detail
