#include "leg/interrupt.h"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iterator>

#include "leg/executor.h"

namespace vouch {
namespace {

// Lock-free atomics are async-signal-safe; so are write(2), dup2(2) and tcgetattr(3).
std::atomic<int> g_interrupt_count{0};
std::atomic<int> g_first_signal{0};
std::atomic<int> g_wake_read_fd{-1};
std::atomic<int> g_wake_write_fd{-1};
std::atomic<int> g_dev_null_fd{-1};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void OnInterruptSignal(int sig) {
  const int saved_errno = errno;
  int none = 0;
  g_first_signal.compare_exchange_strong(none, sig);
  g_interrupt_count.fetch_add(1);
  if (sig == SIGHUP) {
    // The terminal hung up: a write to it now fails (EIO), and the error would end vouch
    // before the record is written. What vouch still prints goes nowhere instead.
    const int null_fd = g_dev_null_fd.load();
    struct termios t;
    for (int fd : {0, 1, 2})
      if (null_fd >= 0 && ::tcgetattr(fd, &t) == 0) ::dup2(null_fd, fd);
  }
  const int fd = g_wake_write_fd.load();
  if (fd >= 0) {
    const char byte = 1;
    [[maybe_unused]] ssize_t n = ::write(fd, &byte, 1);
  }
  errno = saved_errno;
}

bool IgnoredNow(int sig) {
  struct sigaction old {};
  return ::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN;
}

}  // namespace

Status InstallInterruptHandler() {
  if (g_wake_read_fd.load() < 0) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
      return MakeError("cannot install the interrupt handler: pipe: {}", std::strerror(errno));
    }
    g_wake_read_fd.store(fds[0]);
    g_wake_write_fd.store(fds[1]);
    g_dev_null_fd.store(::open("/dev/null", O_RDWR | O_CLOEXEC));
  }
  // A signal vouch was started with ignored stays ignored, as the shell and nohup meant it:
  // `nohup vouch run ...` outlives the session (SIGHUP), and a job a script put in the
  // background (`vouch run ... &`) is not stopped by the Ctrl-C meant for the script in the
  // foreground (SIGINT, SIGQUIT). Read once, before any handler of vouch's own is in place.
  // SIGTERM is always handled: it is how a scheduler or `kill` ends a run, with its record.
  static const bool ignored_at_start[] = {IgnoredNow(SIGHUP), IgnoredNow(SIGINT),
                                          IgnoredNow(SIGQUIT)};
  static_assert(kTerminatingSignals[0] == SIGHUP && kTerminatingSignals[1] == SIGINT &&
                kTerminatingSignals[2] == SIGQUIT && kTerminatingSignals[3] == SIGTERM);
  struct sigaction sa {};
  sa.sa_handler = OnInterruptSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (std::size_t i = 0; i < std::size(kTerminatingSignals); ++i) {
    const int sig = kTerminatingSignals[i];
    if (i < std::size(ignored_at_start) && ignored_at_start[i]) continue;
    if (::sigaction(sig, &sa, nullptr) != 0) {
      return MakeError("cannot install the interrupt handler for {}: {}", SignalName(sig),
                       std::strerror(errno));
    }
  }
  // A closed pipe on vouch's stdout or stderr (`vouch run ... | head`) must not end vouch in
  // the middle of a run: the write fails with EPIPE instead.
  std::signal(SIGPIPE, SIG_IGN);
  return OkStatus();
}

bool Interrupted() { return g_interrupt_count.load() > 0; }

int InterruptSignal() { return g_first_signal.load(); }

int InterruptExitCode() {
  const int sig = g_first_signal.load();
  return 128 + (sig > 0 ? sig : SIGINT);
}

void ClearInterrupted() {
  g_interrupt_count.store(0);
  g_first_signal.store(0);
  leg_detail::DrainInterruptWakeFd();
}

namespace leg_detail {

int InterruptWakeFd() { return g_wake_read_fd.load(); }
int InterruptCount() { return g_interrupt_count.load(); }

void DrainInterruptWakeFd() {
  const int fd = g_wake_read_fd.load();
  if (fd < 0) return;
  char buf[64];
  while (::read(fd, buf, sizeof buf) > 0) {
  }
}

}  // namespace leg_detail
}  // namespace vouch
