#include "leg/guard.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace vouch::leg_detail {
namespace {

// One message: 'W' (watch) or 'R' (release), then the group id. Five bytes, below PIPE_BUF:
// each write is whole.
struct GuardMessage {
  char op;
  std::int32_t pgid;
} __attribute__((packed));

std::atomic<int> g_write_fd{-1};
std::atomic<pid_t> g_guard_pid{0};

// The guard's loop: only system calls, on its own stack of fixed arrays (it was forked from a
// process with other threads).
[[noreturn]] void GuardMain(int read_fd) {
  sigset_t all;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  ::setpgid(0, 0);
  // Nothing of vouch's is kept open: not its stdout (a pipe a caller waits on), not its lock.
  if (read_fd != 3) {
    ::dup2(read_fd, 3);
    read_fd = 3;
  }
  ::syscall(SYS_close_range, 4u, ~0u, 0u);
  const int null_fd = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3 && null_fd >= 0; ++fd) ::dup2(null_fd, fd);
  if (null_fd > 3) ::close(null_fd);
  constexpr int kMost = 1024;  // groups held at once (a leg at a time: one, in practice)
  pid_t held[kMost];
  int n = 0;
  GuardMessage m{};
  std::size_t have = 0;
  for (;;) {
    const ssize_t r = ::read(read_fd, reinterpret_cast<char*>(&m) + have, sizeof m - have);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;  // end of file: vouch is gone
    have += static_cast<std::size_t>(r);
    if (have < sizeof m) continue;
    have = 0;
    if (m.pgid <= 1) continue;
    if (m.op == 'W' && n < kMost) {
      held[n++] = m.pgid;
    } else if (m.op == 'R') {
      for (int i = 0; i < n; ++i)
        if (held[i] == m.pgid) {
          held[i] = held[--n];
          break;
        }
    }
  }
  for (int i = 0; i < n; ++i) ::kill(-held[i], SIGKILL);
  ::_exit(0);
}

void GuardSend(char op, pid_t pgid) {
  const int fd = g_write_fd.load();
  if (fd < 0 || pgid <= 1) return;
  const GuardMessage m{op, static_cast<std::int32_t>(pgid)};
  for (;;) {
    const ssize_t w = ::write(fd, &m, sizeof m);
    if (w < 0 && errno == EINTR) continue;
    return;  // whole or nothing (a full pipe or a dead guard loses the message, never blocks)
  }
}

}  // namespace

void StartLegGuard() {
  static std::once_flag once;
  std::call_once(once, [] {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return;
    // Signals blocked across the fork: none of vouch's handlers runs in the guard.
    sigset_t all, old;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(p[1]);
      GuardMain(p[0]);
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    ::close(p[0]);
    if (pid < 0) {
      ::close(p[1]);
      return;
    }
    // vouch never waits on a full pipe: a lost message costs the guarantee, not a hang.
    ::fcntl(p[1], F_SETFL, O_NONBLOCK);
    g_guard_pid.store(pid);
    g_write_fd.store(p[1]);
  });
}

pid_t LegGuardPid() { return g_guard_pid.load(); }
void LegGuardWatch(pid_t pgid) { GuardSend('W', pgid); }
void LegGuardRelease(pid_t pgid) { GuardSend('R', pgid); }

}  // namespace vouch::leg_detail
