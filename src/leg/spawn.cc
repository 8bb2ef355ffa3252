#include "leg/spawn.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <new>

#include "leg/proc_tree.h"

// Debian 11's glibc 2.31 and Linux 5.10 headers (the release build) lack these two names; the
// numbers are the kernel's ABI. On a kernel without close_range the call fails (ENOSYS) and
// the loop below marks each descriptor instead.
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

// The child runs on a stack ASan did not allocate: its instrumentation of calls that do not
// return (__asan_handle_no_return) would print a warning there, to vouch's stderr before the
// dup2s, and a closed pipe there left a SIGPIPE pending that killed the leg at exec. The three
// functions that run only in the child are left uninstrumented; the sanitizers still see the rest.
#define VOUCH_CHILD_SIDE __attribute__((no_sanitize_address))

namespace vouch::leg_detail {
namespace {

void WriteAll(int fd, const void* p, std::size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    c += w;
    n -= static_cast<std::size_t>(w);
  }
}

[[noreturn]] VOUCH_CHILD_SIDE void ChildFail(const ChildPlan& p, ChildReport r, int step) {
  r.step = step;
  r.error = errno;
  WriteAll(p.report_fd, &r, sizeof r);
  ::_exit(127);
}

VOUCH_CHILD_SIDE int ChildMain(void* plan) { RunChild(*static_cast<const ChildPlan*>(plan)); }

}  // namespace

pid_t StartChild(const ChildPlan& plan) {
  // vfork's way, as glibc's posix_spawn does it: the child borrows vouch's memory and runs on
  // a stack of its own until its execve, while the calling thread waits. A fork copied vouch's
  // page tables and then took copy-on-write faults on both sides: on a VM that was most of a
  // short leg's cost (100 legs of `true`: 14 ms of CPU each, hyperfine 4). RunChild touches
  // only its own stack and the plan, and makes only async-signal-safe calls.
  constexpr std::size_t kStackBytes = 256 * 1024;
  std::unique_ptr<char[]> stack(new (std::nothrow) char[kStackBytes]);
  if (!stack) {
    errno = ENOMEM;
    return -1;
  }
  return ::clone(&ChildMain, stack.get() + kStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD,
                 const_cast<ChildPlan*>(&plan));
}

[[noreturn]] VOUCH_CHILD_SIDE void RunChild(const ChildPlan& p) {
  ChildReport r;
  // The leg dies with vouch: a vouch killed by SIGKILL must not leave it running
  // unsupervised. Checked after setting it: vouch may have died before.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) ChildFail(p, r, kStepSetup);
  if (::getppid() != p.parent) ::_exit(127);
  if (::setpgid(0, 0) != 0) ChildFail(p, r, kStepSetup);  // its own group, to be killed whole
  // stdin is /dev/null: a leg that reads stdin must not hang on (or steal) the terminal.
  const int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(p.out_fd, 1) < 0 || ::dup2(p.err_fd, 2) < 0)
    ChildFail(p, r, kStepSetup);
  // vouch's other descriptors (the lock file above all) must not leak into the leg.
  if (::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) != 0) {
    struct rlimit rl {};
    const long top = ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536
                         ? static_cast<long>(rl.rlim_cur)
                         : 65536;
    for (long fd = 3; fd < top; ++fd) ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
  }
  if (p.cwd != nullptr && ::chdir(p.cwd) != 0) ChildFail(p, r, kStepChdir);
  // Handlers would run vouch's code in the child; ignored signals survive exec, and the
  // leg must not inherit vouch's SIGPIPE ignore.
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0) continue;
    const bool handled = (old.sa_flags & SA_SIGINFO) != 0 ||
                         (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
    if (handled || sigismember(p.default_set, sig) == 1) {
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      ::sigaction(sig, &dfl, nullptr);
    }
  }
  sigset_t empty;
  sigemptyset(&empty);
  r.pre_exec_hwm_bytes = ReadHwmBytesAt("/proc/self/status");
  WriteAll(p.report_fd, &r, sizeof r);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);
  ::execve(p.program, p.argv, p.envp);
  ChildFail(p, r, kStepExec);
}

}  // namespace vouch::leg_detail
